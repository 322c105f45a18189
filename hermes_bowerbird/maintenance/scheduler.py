"""The maintenance thread: runs each job at its interval, one at a time, within a time budget, and stops promptly."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from ..store.base import RunnerLock
from .budget import Budget
from .jobs import Job, Maintenance, summarise

log = logging.getLogger(__name__)

THREAD_NAME = "bowerbird-maintenance"
LOCK_BUSY_RETRY_SECONDS = 30.0  # how soon a scheduler that found another runner at work looks again

__all__ = [
    "LOCK_BUSY_RETRY_SECONDS",
    "THREAD_NAME",
    "Job",
    "Maintenance",
    "Scheduler",
]


class Scheduler:
    """Owns the `bowerbird-maintenance` thread; does nothing at all unless this process is the primary writer."""

    def __init__(
        self,
        jobs: Maintenance | Sequence[Job],
        clock: Callable[[], float] = time.monotonic,
        *,
        primary: bool = True,
        budget_seconds: float | None = None,
        first_delay_seconds: float = 60.0,
        max_wait_seconds: float = 300.0,
        lock: RunnerLock | None = None,
    ) -> None:
        if isinstance(jobs, Maintenance):
            self.jobs = jobs.jobs()
            budget_seconds = budget_seconds or jobs.config.maintenance_job_seconds
            lock = lock or jobs.store.runner_lock("maintenance")
        else:
            self.jobs = list(jobs)
        self.lock = lock
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

    def request_stop(self) -> None:
        """Ask the thread to stop without waiting (a running job sees its budget exhausted)."""
        self._stop.set()

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
        """Run every job whose time has come, in order, one at a time, while holding the runner lock.

        When another runner (process) holds it, nothing runs and the due jobs are looked at again later.
        """
        if not self.primary or not self._due():
            return {}
        if self.lock is None:
            return self._run_due()
        with self.lock.held(timeout=0.0) as held:
            if held:
                return self._run_due()
        log.debug("maintenance skipped: another runner holds its lock")
        retry = self._clock() + LOCK_BUSY_RETRY_SECONDS
        self._next_run = {name: max(at, retry) for name, at in self._next_run.items()}
        return {}

    def _due(self) -> bool:
        now = self._clock()
        return any(now >= at for at in self._next_run.values())

    def _run_due(self) -> dict[str, Mapping[str, object]]:
        results: dict[str, Mapping[str, object]] = {}
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
        except Exception as exc:
            # one failing job must not end the thread; the next interval retries
            log.error("maintenance %s failed: %s", job.name, exc, exc_info=True)
            return {"error": str(exc)}
        log.info(
            "maintenance %s: %s in %.2fs", job.name, summarise(result), time.monotonic() - started
        )
        return result

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.run_due()
            self._stop.wait(min(max(0.05, self.seconds_until_next()), self.max_wait_seconds))
