"""One maintenance runner per memory home: the runner lock across threads and processes, and the scheduler's use."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from fakes import FakeClock

from hermes_bowerbird.filelock import RunnerLock, runner_lock_path
from hermes_bowerbird.maintenance import Budget, Job, Scheduler
from hermes_bowerbird.maintenance.scheduler import LOCK_BUSY_RETRY_SECONDS


def test_the_lock_file_sits_beside_the_database(tmp_path: Path) -> None:
    assert runner_lock_path(tmp_path / "memory.db") == tmp_path / "memory.db.maintenance.lock"


def test_a_second_holder_is_refused_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "m.lock"
    with RunnerLock(path).held() as first, RunnerLock(path).held() as second:
        assert (first, second) == (True, False)


def test_the_lock_is_free_again_once_released(tmp_path: Path) -> None:
    path = tmp_path / "m.lock"
    with RunnerLock(path).held():
        pass
    with RunnerLock(path).held() as again:
        assert again


def test_a_waiting_holder_gets_the_lock_when_it_is_released(tmp_path: Path) -> None:
    path = tmp_path / "m.lock"
    release = threading.Event()

    def hold() -> None:
        with RunnerLock(path).held():
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    time.sleep(0.2)
    threading.Timer(0.3, release.set).start()
    with RunnerLock(path).held(timeout=10) as got:
        assert got
    holder.join(10)


def _sleeping_job(name: str, log: list[tuple[str, float, float]]) -> Job:
    def run(budget: Budget) -> Mapping[str, object]:
        started = time.monotonic()
        time.sleep(0.3)
        log.append((name, started, time.monotonic()))
        return {}

    return Job("work", 3600, run)


def test_two_schedulers_on_one_memory_home_never_run_at_once(tmp_path: Path) -> None:
    path = runner_lock_path(tmp_path / "m.db")
    runs: list[tuple[str, float, float]] = []
    schedulers = [
        Scheduler([_sleeping_job(n, runs)], first_delay_seconds=0, lock=RunnerLock(path))
        for n in ("a", "b")
    ]
    threads = [threading.Thread(target=s.run_due) for s in schedulers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(runs) == 1


def test_a_scheduler_that_found_the_lock_busy_looks_again_later(tmp_path: Path) -> None:
    path = tmp_path / "m.lock"
    clock = FakeClock()
    runs: list[tuple[str, float, float]] = []
    scheduler = Scheduler(
        [_sleeping_job("a", runs)], clock, first_delay_seconds=0, lock=RunnerLock(path)
    )
    with RunnerLock(path).held():
        assert scheduler.run_due() == {}
    assert scheduler.seconds_until_next() == LOCK_BUSY_RETRY_SECONDS
    clock.advance(LOCK_BUSY_RETRY_SECONDS)
    assert list(scheduler.run_due()) == ["work"]


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from hermes_bowerbird.filelock import RunnerLock
    with RunnerLock(Path(sys.argv[1])).held() as got:
        print("held" if got else "busy", flush=True)
        time.sleep(60)
""")


def test_another_process_holding_the_lock_keeps_this_one_out_until_it_dies(tmp_path: Path) -> None:
    path = tmp_path / "m.lock"
    repo = Path(__file__).resolve().parent.parent
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True, cwd=repo
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with RunnerLock(path).held() as while_alive:
            assert not while_alive
    finally:
        child.kill()
        child.wait(10)
    with RunnerLock(path).held(timeout=5) as after_death:
        assert after_death
