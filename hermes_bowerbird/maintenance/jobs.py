"""Maintenance: the jobs by name, for the scheduler thread and for `bowerbird maintain [job] [--dry-run]`."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..config import Config
from ..embeddings.tier import VectorTier
from ..errors import InvalidInputError
from ..scopes import profile_scope as default_profile_scope
from ..store import Store
from ..types import LLM, Clock
from .associate import Associator
from .budget import Budget
from .bulletin import BulletinBuilder
from .consolidate import Consolidator
from .decay import refresh_low_marks, report
from .prune import prune, purge

log = logging.getLogger(__name__)

JOB_NAMES = ("decay", "prune", "purge", "associate", "consolidate", "bulletin")
HOUR = 3_600.0
INTERVALS = {
    "decay": 6 * HOUR,
    "prune": 24 * HOUR,
    "purge": 24 * HOUR,
    "associate": 600.0,
    "consolidate": HOUR,
}
# + job name -> {"at": epoch seconds, "summary": "key=value ..."}
LAST_RUN_KEY = "maintenance.last_run."
LISTED = 200  # ids listed in a result (dry-run output); counts are always complete

Progress = Callable[[int, int], None]  # (jobs done, jobs in this run)


@dataclass(frozen=True)
class Job:
    """A named unit of maintenance; `run` gets a Budget and returns counts for the log line."""

    name: str
    interval_seconds: float
    run: Callable[[Budget], Mapping[str, object]]


def summarise(result: Mapping[str, object]) -> str:
    """`key=value` for the counts of a job result (lists shown by their length)."""
    parts = []
    for key, value in result.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, list)):
            continue
        parts.append(f"{key}={len(value) if isinstance(value, list) else value}")
    return " ".join(parts) or "nothing to do"


class Maintenance:
    """Every maintenance job behind one lock, so the thread and a CLI run never overlap inside a process."""

    def __init__(
        self,
        store: Store,
        vectors: VectorTier,
        config: Config,
        clock: Clock = time.time,
        llm: LLM | None = None,
        *,
        profile_scope: str | None = None,
        bulletins: BulletinBuilder | None = None,
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.config = config
        self.clock = clock
        self.profile_scope = profile_scope or default_profile_scope(None)
        self.bulletins = bulletins or BulletinBuilder(store, config, clock, llm)
        self.associator = Associator(store, vectors, config)
        self.consolidator = Consolidator(store, vectors, config, llm)
        self._lock = threading.Lock()

    def run(
        self, job: str | None = None, dry_run: bool = False, progress: Progress | None = None
    ) -> dict[str, object]:
        """Run one job (or all, in order); returns each job's result keyed by job name."""
        names = JOB_NAMES if job is None else (job,)
        unknown = [n for n in names if n not in JOB_NAMES]
        if unknown:
            raise InvalidInputError(
                f"unknown maintenance job {unknown[0]!r}; choose from {', '.join(JOB_NAMES)}"
            )
        out: dict[str, object] = {}
        for done, name in enumerate(names, start=1):
            result = self.run_job(name, dry_run=dry_run)
            out[name] = result
            log.info(
                "maintenance %s%s: %s", name, " (dry run)" if dry_run else "", summarise(result)
            )
            if progress is not None:
                progress(done, len(names))
        return out

    def run_job(
        self, name: str, *, dry_run: bool = False, budget: Budget | None = None
    ) -> dict[str, object]:
        runner = {
            "decay": self._decay,
            "prune": self._prune,
            "purge": self._purge,
            "associate": self._associate,
            "consolidate": self._consolidate,
            "bulletin": self._bulletin,
        }[name]
        with self._lock:
            result = runner(dry_run, budget or Budget(self.config.maintenance_job_seconds))
            if not dry_run:
                self.store.meta.set(
                    LAST_RUN_KEY + name,
                    json.dumps({"at": self.clock(), "summary": summarise(result)}),
                )
        return {"dry_run": dry_run, **result}

    def last_runs(self) -> dict[str, dict[str, object]]:
        """When each job last ran (in any process on this file) and what it did; jobs never run are left out."""
        out: dict[str, dict[str, object]] = {}
        for name in JOB_NAMES:
            raw = self.store.meta.get(LAST_RUN_KEY + name)
            if raw:
                out[name] = dict(json.loads(raw))
        return out

    def jobs(self) -> list[Job]:
        """The scheduler's job list: every job at its interval (the bulletin's from the config)."""
        intervals = {**INTERVALS, "bulletin": self.config.bulletin_interval_seconds}
        return [Job(name, intervals[name], self._job_runner(name)) for name in JOB_NAMES]

    def _job_runner(self, name: str) -> Callable[[Budget], dict[str, object]]:
        return lambda budget: self.run_job(name, budget=budget)

    # -- the jobs -------------------------------------------------------------------------------------------
    def _decay(self, dry_run: bool, budget: Budget) -> dict[str, object]:
        watch = refresh_low_marks(
            self.store, self.config, self.clock(), dry_run=dry_run, budget=budget
        )
        return dataclasses.asdict(report(watch))

    def _prune(self, dry_run: bool, budget: Budget) -> dict[str, object]:
        result = prune(self.store, self.config, self.clock(), dry_run=dry_run, budget=budget)
        return {
            "scanned": result.scanned,
            "low": result.low,
            "candidates": result.candidates[:LISTED],
            "candidate_count": len(result.candidates),
            "protected": result.protected,
            "forgotten": result.forgotten,
        }

    def _purge(self, dry_run: bool, budget: Budget) -> dict[str, object]:
        result = purge(
            self.store,
            self.config,
            self.clock(),
            dry_run=dry_run,
            vectors=self.vectors,
            budget=budget,
        )
        return {
            "candidates": result.candidates[:LISTED],
            "candidate_count": len(result.candidates),
            "purged": result.purged,
            "episodes_deleted": result.episodes_deleted,
            "entities_deleted": result.entities_deleted,
        }

    def _associate(self, dry_run: bool, budget: Budget) -> dict[str, object]:
        return dataclasses.asdict(self.associator.run(dry_run=dry_run, budget=budget))

    def _consolidate(self, dry_run: bool, budget: Budget) -> dict[str, object]:
        return dataclasses.asdict(self.consolidator.run(dry_run=dry_run, budget=budget))

    def _bulletin(self, dry_run: bool, budget: Budget) -> dict[str, object]:
        targets = self.bulletin_targets()
        stale = [scope for scope, visible in targets if self._bulletin_stale(scope, visible)]
        rebuilt = 0
        if not dry_run:
            for scope, visible in targets:
                if budget.exhausted():
                    break
                before = self.store.bulletins.latest(scope)
                after = self.bulletins.current(scope, visible)
                rebuilt += int(after is not None and (before is None or after.id != before.id))
        return {"scopes": len(targets), "stale": len(stale), "rebuilt": rebuilt}

    def bulletin_targets(self) -> list[tuple[str, Sequence[str]]]:
        """(scope, visible scopes) for the profile and every scope that has had a bulletin."""
        scopes = dict.fromkeys([self.profile_scope, *self.store.bulletins.scopes()])
        return [(s, (s, self.profile_scope) if s.startswith("user:") else (s,)) for s in scopes]

    def _bulletin_stale(self, scope: str, visible: Sequence[str]) -> bool:
        return self.bulletins.stale(scope, visible)
