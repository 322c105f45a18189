"""The maintenance scheduler and the Maintenance facade: intervals, one job at a time, prompt stop, primary only."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
from fakes import FakeClock

from hermes_bowerbird.config import build_config
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.errors import InvalidInputError
from hermes_bowerbird.maintenance import JOB_NAMES, Budget, Job, Maintenance, Scheduler
from hermes_bowerbird.maintenance.scheduler import THREAD_NAME
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import MemoryType, NewMemory, Source


def counting_job(name: str, interval: float, calls: list[str]) -> Job:
    def run(budget: Budget) -> Mapping[str, object]:
        calls.append(name)
        return {"done": len(calls)}

    return Job(name, interval, run)


def test_each_job_runs_at_its_interval_in_order() -> None:
    clock = FakeClock()
    calls: list[str] = []
    scheduler = Scheduler(
        [counting_job("fast", 10, calls), counting_job("slow", 100, calls)],
        clock,
        first_delay_seconds=5,
    )
    assert scheduler.run_due() == {}
    clock.now += 5
    assert list(scheduler.run_due()) == ["fast", "slow"]
    clock.now += 10
    scheduler.run_due()
    clock.now += 95
    scheduler.run_due()
    assert calls == ["fast", "slow", "fast", "fast", "slow"]
    assert scheduler.seconds_until_next() == pytest.approx(10)


def test_a_failing_job_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    def broken(budget: Budget) -> Mapping[str, object]:
        raise RuntimeError("disk on fire")

    calls: list[str] = []
    scheduler = Scheduler(
        [Job("broken", 10, broken), counting_job("fine", 10, calls)],
        FakeClock(),
        first_delay_seconds=0,
    )
    with caplog.at_level(logging.INFO, logger="hermes_bowerbird.maintenance.scheduler"):
        results = scheduler.run_due()
    assert results["broken"] == {"error": "disk on fire"} and calls == ["fine"]
    assert any("broken failed" in r.message and r.exc_info for r in caplog.records)
    assert any(
        r.levelno == logging.INFO and "maintenance fine: done=1" in r.getMessage()
        for r in caplog.records
    )


def test_not_primary_means_no_thread_and_no_work() -> None:
    calls: list[str] = []
    scheduler = Scheduler(
        [counting_job("job", 1, calls)], FakeClock(), primary=False, first_delay_seconds=0
    )
    assert scheduler.start() is False and not scheduler.is_alive()
    assert scheduler.run_due() == {} and calls == []


def test_stop_is_prompt_while_idle() -> None:
    scheduler = Scheduler([counting_job("job", 3600, [])], first_delay_seconds=3600)
    assert scheduler.start()
    assert any(t.name == THREAD_NAME for t in threading.enumerate())
    started = time.monotonic()
    assert scheduler.stop(timeout=5)
    # far below the 3600 s wait or 120 s job budget it interrupts
    assert time.monotonic() - started < 2.0
    assert not scheduler.is_alive()


def test_stop_is_prompt_while_a_job_is_working() -> None:
    running = threading.Event()

    def long_job(budget: Budget) -> Mapping[str, object]:
        running.set()
        steps = 0
        while not budget.exhausted():  # a job polls its budget between bounded steps
            time.sleep(0.01)
            steps += 1
        return {"steps": steps}

    scheduler = Scheduler([Job("long", 3600, long_job)], budget_seconds=120, first_delay_seconds=0)
    scheduler.start()
    assert running.wait(5)
    started = time.monotonic()
    assert scheduler.stop(timeout=5)
    # far below the 3600 s wait or 120 s job budget it interrupts
    assert time.monotonic() - started < 2.0


def test_budget_runs_out() -> None:
    clock = FakeClock(0.0)
    budget = Budget(2.0, monotonic=clock)
    assert not budget.exhausted()
    clock.now = 2.0
    assert budget.exhausted() and not Budget.unlimited().exhausted()


@pytest.fixture
def maintenance(tmp_path: Path) -> Maintenance:
    store = Store.open(tmp_path / "m.db")
    store.insert_memory(
        NewMemory("profile:default", MemoryType.IDENTITY, "The user is called Sam.", Source.TOOL)
    )
    config = build_config(tmp_path, {"db_path": str(tmp_path / "m.db")})
    return Maintenance(store, VectorTier(store, EmbeddingService(None, store)), config)


def test_maintenance_runs_every_job_and_reports_progress(maintenance: Maintenance) -> None:
    seen: list[tuple[int, int]] = []
    report = maintenance.run(progress=lambda done, total: seen.append((done, total)))
    assert list(report) == list(JOB_NAMES)
    assert seen == [(n, len(JOB_NAMES)) for n in range(1, len(JOB_NAMES) + 1)]
    assert report["bulletin"] == {"dry_run": False, "scopes": 1, "stale": 1, "rebuilt": 1}
    assert maintenance.store.bulletins.latest("profile:default") is not None


def test_maintenance_dry_run_and_unknown_jobs(maintenance: Maintenance) -> None:
    assert maintenance.run("bulletin", dry_run=True)["bulletin"] == {
        "dry_run": True,
        "scopes": 1,
        "stale": 1,
        "rebuilt": 0,
    }
    assert maintenance.store.bulletins.latest("profile:default") is None
    with pytest.raises(InvalidInputError, match="unknown maintenance job"):
        maintenance.run("defragment")


def test_scheduler_built_from_maintenance_has_every_job(maintenance: Maintenance) -> None:
    scheduler = Scheduler(maintenance, first_delay_seconds=0)
    assert [job.name for job in scheduler.jobs] == list(JOB_NAMES)
    assert set(scheduler.run_due()) == set(JOB_NAMES)
