"""The maintenance thread: runs each job at its interval, one at a time, within a time budget, and stops promptly."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from .budget import Budget
from .jobs import Job, Maintenance, summarise

log = logging.getLogger(__name__)

THREAD_NAME = "bowerbird-maintenance"

__all__ = ["THREAD_NAME", "Job", "Maintenance", "Scheduler"]


class Scheduler:
    """Owns the `bowerbird-maintenance` thread; does nothing at all unless this process is the primary writer."""

    def __init__(self, jobs: Maintenance | Sequence[Job], clock: Callable[[], float] = time.monotonic, *,
                 primary: bool = True, budget_seconds: float | None = None, first_delay_seconds: float = 60.0,
                 max_wait_seconds: float = 300.0) -> None:
        if isinstance(jobs, Maintenance):
            self.jobs = jobs.jobs()
            budget_seconds = budget_seconds or jobs.config.maintenance_job_seconds
        else:
            self.jobs = list(jobs)
        self.primary = primary
        self.budget_seconds = budget_seconds or 30.0
        self.max_wait_seconds = max_wait_seconds
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        start = clock() + first_delay_seconds
        self._next_run = {job.name: start for job in self.jobs}

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> bool:
        """Start the thread (False when not primary or already running)."""
        if not self.primary:
            log.info("maintenance scheduler not started: another process owns maintenance")
            return False
        if self.is_alive():
            return False
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=THREAD_NAME, daemon=True)
        self._thread.start()
        return True

    def stop(self, timeout: float | None = 5.0) -> bool:
        """Ask the thread to stop (a running job sees its budget exhausted) and join it; True once it ended."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("maintenance thread still running after %.1fs", timeout or 0.0)
                return False
        self._thread = None
        return True

    def run_due(self) -> dict[str, Mapping[str, object]]:
        """Run every job whose time has come, in order, one at a time."""
        results: dict[str, Mapping[str, object]] = {}
        if not self.primary:
            return results
        for job in self.jobs:
            if self._stop.is_set():
                break
            if self._clock() >= self._next_run[job.name]:
                results[job.name] = self._run(job)
                self._next_run[job.name] = self._clock() + job.interval_seconds
        return results

    def seconds_until_next(self) -> float:
        if not self._next_run:
            return self.max_wait_seconds
        return max(0.0, min(self._next_run.values()) - self._clock())

    def _run(self, job: Job) -> Mapping[str, object]:
        started = time.monotonic()
        try:
            result = job.run(Budget(self.budget_seconds, self._stop))
        except Exception as exc:  # one failing job must not end the thread; the next interval retries
            log.error("maintenance %s failed: %s", job.name, exc, exc_info=True)
            return {"error": str(exc)}
        log.info("maintenance %s: %s in %.2fs", job.name, summarise(result), time.monotonic() - started)
        return result

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.run_due()
            self._stop.wait(min(max(0.05, self.seconds_until_next()), self.max_wait_seconds))
