"""A fleet: two Hermes hosts (two homes, separate processes, each with its own curation worker) share one
PostgreSQL memory. What a gateway user tells one host, the other recalls for that user alone; a host killed in the
middle of curation loses no turn, and no turn is curated twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from fleet_host import acked, fact
from hermes_homes import install

from hermes_bowerbird.curation.worker import worker_log_path, worker_state

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).with_name("fleet_host.py")
LEASE_SECONDS = 3


def _env(home: Path, url: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")]),
        "HERMES_HOME": str(home),
        "BOWERBIRD_DATABASE_URL": url,
        "BOWERBIRD_CURATION_MODE": "process",
        "BOWERBIRD_CURATION_LEASE_SECONDS": str(LEASE_SECONDS),
        "BOWERBIRD_EMBEDDING_BACKEND": "none",
        "BOWERBIRD_LLM_BACKEND": "none",
        "BOWERBIRD_IMPORT_MARKDOWN": "false",
        "HF_HUB_OFFLINE": "1",
    }


def _host(home: Path, url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        env=_env(home, url),
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _kill_host(host: subprocess.Popen[str], home: Path) -> str:
    """SIGKILL the host and its curation worker (a machine lost mid-curation); what the host printed until then."""
    worker = worker_state(home / "bowerbird" / "memory.db").pid
    os.killpg(host.pid, signal.SIGKILL)
    if worker is not None:
        os.kill(worker, signal.SIGKILL)
    out, _ = host.communicate(timeout=30)
    return out


def _wait_curated(url: str, timeout: float, homes: list[Path]) -> None:
    """Until no journal row is pending; else fail with what would say why: the rows left, every connection to
    the database (what it waits on), and the tail of each host's worker log."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            pending = conn.execute(
                "SELECT count(*) FROM journal WHERE status = 'pending'"
            ).fetchone()
            if pending is not None and pending[0] == 0:
                return
            time.sleep(0.5)
        left = conn.execute(
            "SELECT claimed_by, attempts, error, count(*) FROM journal WHERE status = 'pending' "
            "GROUP BY claimed_by, attempts, error"
        ).fetchall()
        connections = conn.execute(
            "SELECT pid, application_name, state, wait_event_type, wait_event, "
            "extract(epoch FROM now() - xact_start)::int, left(query, 120) "
            "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    logs = {
        home.name: worker_log_path(home / "bowerbird" / "memory.db").read_text(errors="replace")[
            -3000:
        ]
        for home in homes
        if worker_log_path(home / "bowerbird" / "memory.db").exists()
    }
    raise AssertionError(
        f"journal rows still pending after {timeout:.0f} s: {left}\n"
        f"connections: {connections}\nworker logs: {json.dumps(logs, indent=1)}"
    )


def _rows(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(sql.encode())]


def _ask(home: Path, url: str, user: str, question: str) -> str:
    done = subprocess.run(
        [sys.executable, str(CHILD), "ask", user, question],
        env=_env(home, url),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return str(json.loads(done.stdout.strip().splitlines()[-1])["prefetch"])


def test_a_fleet_shares_memory_per_user_and_a_killed_host_loses_and_repeats_nothing(
    tmp_path: Path, pg_url: str
) -> None:
    homes = {name: tmp_path / name for name in ("host-a", "host-b")}
    for home in homes.values():
        install(home)
    a = _host(homes["host-a"], pg_url, "write", "a", "4", "8")
    b = _host(homes["host-b"], pg_url, "write", "b", "4", "8")
    time.sleep(6)  # both hosts capturing and curating
    told_a = acked(_kill_host(a, homes["host-a"]))
    out_b, _ = b.communicate(timeout=240)
    told_b = acked(out_b)
    assert told_a and told_b
    _wait_curated(pg_url, timeout=120 + LEASE_SECONDS, homes=list(homes.values()))

    journal = _rows(pg_url, "SELECT session_id, user_content, status, attempts FROM journal")
    captured = {(str(s).removesuffix("-session"), str(text)) for s, text, *_ in journal}
    told = {(user, fact(user, n)) for user, n in told_a | told_b}
    assert told - captured == set()  # no turn a host took is lost
    assert {(status, attempts) for *_, status, attempts in journal} == {("done", 1)}  # each once
    twice = _rows(
        pg_url,
        "SELECT scope, content_hash FROM memories GROUP BY scope, content_hash HAVING count(*) > 1",
    )
    assert twice == []
    crossed = _rows(
        pg_url,
        """
        SELECT m.id FROM memories m
        JOIN memory_provenance p ON p.memory_id = m.id
        JOIN journal j ON j.session_id = p.session_id AND j.turn_index = p.turn_index
        WHERE j.scope <> m.scope
        """,
    )
    assert crossed == []  # nothing learnt from one user's turn lands in another's memory

    # told host A, which was killed; host B recalls it for that user in a new session, and for no one else
    question = "Which chapter is my book club reading?"
    assert "a-0 library" in _ask(homes["host-b"], pg_url, "a-0", question)
    assert "a-0 library" not in _ask(homes["host-b"], pg_url, "b-1", question)


def test_a_host_killed_while_printing_claims_no_turn_by_its_cut_last_line() -> None:
    assert acked("ack a-1 1353\nack a-1 13") == {("a-1", 1353)}
    assert acked("ack a-1 1353\nack a-") == {("a-1", 1353)}
