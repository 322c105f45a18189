"""Nothing lost under concurrency: writer processes with maintenance, a SIGKILL, a restart that curates all."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_bowerbird.config import CURATION_MODES, build_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.provider import BowerbirdProvider

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("writer_child.py")


def _run_writers(
    home: Path, seconds: float, kill_one: bool, pause: float, mode: str
) -> dict[str, int]:
    """Turns each writer process reported, for the processes that ended normally (the killed one did not)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(CHILD), str(home), name, "4", str(seconds), str(pause), mode],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    if kill_one:
        time.sleep(seconds / 2)
        os.kill(procs[1].pid, signal.SIGKILL)
    written = {}
    for name, proc in zip("ab", procs, strict=True):
        out, _ = proc.communicate(timeout=seconds + 120)
        if proc.returncode == 0:
            written[name] = int(out.split()[-1])
    return written


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def _wait_gone(lock: Path, timeout: float = 60.0) -> None:
    """Wait until the process whose pid the lock file names has exited."""
    try:
        pid = int(lock.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def _stress(tmp_path: Path, seconds: float, mode: str, pause: float = 0.0) -> None:
    """Two writer processes of four threads each for `seconds` (each thread pausing `pause` between turns),
    curating in `mode`."""
    home = tmp_path / "home"
    written = _run_writers(home, seconds, kill_one=True, pause=pause, mode=mode)
    config = build_config(
        home, {"embedding_backend": "none", "llm_backend": "none", "import_markdown": False}
    )
    # the home's curation worker outlives its writers a moment (it leaves once no Hermes process holds the home);
    # rows it holds a live claim on are its own to finish, so the restart curates what it left
    _wait_gone(config.db_path.with_name(config.db_path.name + ".curator.lock"))
    restart = Bowerbird(config, background=False)
    started = time.monotonic()
    restart.curate_now()
    curate_seconds = time.monotonic() - started
    restart.shutdown()
    db = config.db_path
    turns = _rows(db, "SELECT user_content FROM journal")
    print(
        f"stress ({mode}): {written} turns reported by the surviving process, {len(turns)} journaled, "
        f"curated the rest in {curate_seconds:.1f}s"
    )
    assert list(written) == ["a"]  # the SIGKILLed writer reports nothing; the other finished
    assert _rows(db, "SELECT count(*) FROM journal WHERE user_content LIKE 'a-%'") == [
        (written["a"],)
    ]
    assert len({t[0] for t in turns}) == len(turns)  # no turn twice
    assert _rows(db, "SELECT status, count(*) FROM journal GROUP BY status") == [
        ("done", len(turns))
    ]
    assert _rows(
        db,
        "SELECT count(*) FROM journal WHERE id NOT IN "
        "(SELECT journal_id FROM episodes WHERE role = 'user')",
    ) == [(0,)]
    assert _rows(
        db,
        "SELECT count(*) FROM (SELECT journal_id FROM episodes WHERE role = 'user' "
        "GROUP BY journal_id, chunk_index HAVING count(*) > 1)",
    ) == [(0,)]


@pytest.mark.slow
def test_two_writer_processes_with_maintenance_and_a_sigkill_lose_nothing(tmp_path: Path) -> None:
    # paced: the restart curates thousands of turns, not 15,000
    _stress(tmp_path, seconds=20, mode="process", pause=0.01)


@pytest.mark.stress
@pytest.mark.parametrize("mode", CURATION_MODES)
def test_two_writer_processes_for_a_minute_lose_nothing(tmp_path: Path, mode: str) -> None:
    _stress(tmp_path, seconds=60, mode=mode)


def test_two_providers_on_one_session_keep_all_200_turns(tmp_path: Path) -> None:
    config = build_config(
        tmp_path,
        {
            "embedding_backend": "none",
            "llm_backend": "none",
            "maintenance_enabled": False,
            "import_markdown": False,
        },
    )
    providers = [BowerbirdProvider(config), BowerbirdProvider(config)]
    for provider in providers:
        provider.initialize("shared", hermes_home=str(tmp_path), platform="cli")
    for i in range(100):
        for name, provider in zip("ab", providers, strict=True):
            provider.sync_turn(f"{name} says turn {i}", "ok", session_id="shared")
    engine = providers[0].engine
    assert engine is not None
    assert engine.store.health.counts()["journal"] == 200
    for provider in providers:
        provider.shutdown()
