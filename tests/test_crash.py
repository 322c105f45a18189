"""Crash safety: a process captures 1,000 turns, is SIGKILLed mid-curation, and a restart curates each turn once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from crash_turns import turn

from hermes_bowerbird.config import build_config
from hermes_bowerbird.curation.curator import Curator
from hermes_bowerbird.curation.redact import redact
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import TurnCapture

REPO = Path(__file__).resolve().parent.parent
TURNS = 1000

CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from hermes_bowerbird.config import build_config
    from hermes_bowerbird.curation.curator import Curator, CuratorWorker
    from hermes_bowerbird.curation.redact import redact
    from hermes_bowerbird.store import Store
    from hermes_bowerbird.types import TurnCapture
    from tests.crash_turns import turn

    db, mode = Path(sys.argv[1]), sys.argv[2]
    store = Store.open(db)
    curator = Curator(store, None, build_config(db.parent, {}), store.clock, None)
    if mode == "capture":
        for i in range(int(sys.argv[3])):
            user, assistant = turn(i)
            store.journal.append(TurnCapture(scope="user:u", session_id="s", turn_index=i, platform="cli",
                                             user=redact(user), assistant=redact(assistant),
                                             created_at=1.7e9 + i))
        print("captured", flush=True)
        worker = CuratorWorker(curator, store)
        worker.start()
        time.sleep(600)  # killed long before this
    else:
        worker = CuratorWorker(curator, store)
        worker.start()
        drained = worker.drain(300)
        stopped = worker.stop(10)
        print(json.dumps({"drained": drained, "stopped": stopped}), flush=True)
""")


def _snapshot(db: Path) -> dict[str, object]:
    """Everything that would show a turn curated twice (or not at all)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:

        def rows(sql: str) -> list[tuple[object, ...]]:
            return [tuple(r) for r in conn.execute(sql)]

        return {
            "journal": rows("SELECT status, count(*) FROM journal GROUP BY status"),
            "attempts": rows("SELECT attempts, count(*) FROM journal GROUP BY attempts"),
            "episodes": rows(
                "SELECT journal_id, role, chunk_index, content FROM episodes ORDER BY journal_id, "
                "role, chunk_index"
            ),
            "memories": rows(
                "SELECT type, subject, content, access_count, superseded_by IS NOT NULL FROM memories "
                "ORDER BY id"
            ),
            "provenance": rows(
                "SELECT session_id, turn_index, count(*) FROM memory_provenance "
                "GROUP BY session_id, turn_index ORDER BY turn_index"
            ),
            "audit": rows("SELECT action, count(*) FROM audit_log GROUP BY action ORDER BY action"),
            "edges": rows("SELECT relation, count(*) FROM edges GROUP BY relation"),
            "entity_links": rows(
                "SELECT count(*) FROM episode_entities UNION ALL "
                "SELECT count(*) FROM memory_entities"
            ),
        }
    finally:
        conn.close()


def _done(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return int(conn.execute("SELECT count(*) FROM journal WHERE status = 'done'").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def _reference(tmp_path: Path) -> dict[str, object]:
    """The same turns curated in one uninterrupted run."""
    db = tmp_path / "reference" / "memory.db"
    store = Store.open(db)
    for i in range(TURNS):
        user, assistant = turn(i)
        store.journal.append(
            TurnCapture(
                scope="user:u",
                session_id="s",
                turn_index=i,
                platform="cli",
                user=redact(user),
                assistant=redact(assistant),
                created_at=1.7e9 + i,
            )
        )
    Curator(store, None, build_config(db.parent, {}), store.clock, None).run_pending()
    store.close()
    return _snapshot(db)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_curation_then_restart_curates_every_turn_exactly_once(tmp_path: Path) -> None:
    db = tmp_path / "crash" / "memory.db"
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, str(script), str(db), "capture", str(TURNS)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "captured"
        deadline = time.monotonic() + 120
        while _done(db) < 150 and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    done_at_kill = _done(db)
    assert 0 < done_at_kill < TURNS, "the kill must land mid-curation"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    # every capture survived
    assert conn.execute("SELECT count(*) FROM journal").fetchone()[0] == TURNS
    conn.close()

    restart = subprocess.run(
        [sys.executable, str(script), str(db), "resume"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert json.loads(restart.stdout.strip().splitlines()[-1]) == {"drained": True, "stopped": True}

    after = _snapshot(db)
    assert after["journal"] == [("done", TURNS)]
    # identical to a run that never crashed: nothing twice, nothing lost
    assert after == _reference(tmp_path)
