"""What a store shared by several hosts must hold to: claims, exactly-once curation, retries, the schema's lock,
scoped vectors, and an address whose password is never shown."""

from __future__ import annotations

import logging
import threading
import time
import urllib.parse
from pathlib import Path

import numpy as np
import psycopg
import pytest
from pg_server import PgTestServer

from hermes_bowerbird.config import load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.errors import DatabaseError, ServerUnavailableError
from hermes_bowerbird.store import Store
from hermes_bowerbird.store.postgres import vectors as server_vectors
from hermes_bowerbird.store.postgres import waits
from hermes_bowerbird.store.postgres.connection import WRITERS, lock_id
from hermes_bowerbird.types import (
    ItemKind,
    JournalStatus,
    MemoryType,
    NewMemory,
    Source,
    TurnCapture,
)

LEASE = 60.0


def _turn(store: Store, scope: str, text: str, session: str = "s") -> int:
    return store.journal.append(
        TurnCapture(user=text, assistant="Noted.", scope=scope, session_id=session, platform="cli")
    )


def test_claimed_rows_are_left_to_their_claimant(store: Store) -> None:
    rows = [_turn(store, "user:a", f"turn {n}", session=f"s{n}") for n in range(4)]
    first = store.journal.claim("host-a:1", limit=2, lease_seconds=LEASE)
    second = store.journal.claim("host-b:1", limit=10, lease_seconds=LEASE)
    assert ([e.id for e in first], [e.id for e in second]) == (rows[:2], [])


def test_a_scope_stays_in_capture_order_while_another_worker_holds_its_first_row(
    store: Store,
) -> None:
    a1, b1, a2 = (
        _turn(store, scope, text)
        for scope, text in [("user:a", "1"), ("user:b", "2"), ("user:a", "3")]
    )
    taken = store.journal.claim("host-a:1", limit=1, lease_seconds=LEASE)
    other = store.journal.claim("host-b:1", limit=10, lease_seconds=LEASE)
    assert ([e.id for e in taken], [e.id for e in other]) == ([a1], [b1])
    assert a2 not in [e.id for e in other]


def test_a_claim_that_ran_out_is_taken_by_another_worker(store: Store) -> None:
    row = _turn(store, "user:a", "hello")
    store.journal.claim("host-a:1", limit=1, lease_seconds=-1.0)  # already over
    assert [e.id for e in store.journal.claim("host-b:1", limit=1, lease_seconds=LEASE)] == [row]


def test_a_worker_that_stops_gives_its_claims_back(store: Store) -> None:
    row = _turn(store, "user:a", "hello")
    store.journal.claim("host-a:1", limit=1, lease_seconds=LEASE)
    assert store.journal.release_claims("host-a:1") == 1
    assert [e.id for e in store.journal.claim("host-b:1", limit=1, lease_seconds=LEASE)] == [row]


def _engine(home: Path, url: str) -> Bowerbird:
    config = load_config(
        home,
        environ={
            "BOWERBIRD_EMBEDDING_BACKEND": "none",
            "BOWERBIRD_LLM_BACKEND": "none",
            "BOWERBIRD_DATABASE_URL": url,
        },
    )
    return Bowerbird(config, background=False)


def test_two_hosts_curating_the_same_rows_at_once_curate_each_once(
    pg_url: str, tmp_path: Path
) -> None:
    hosts = [_engine(tmp_path / name, pg_url) for name in ("a", "b")]
    for n in range(12):
        hosts[0].capture_turn(
            TurnCapture(
                user=f"My locker number is {n}0{n}.",
                assistant="OK",
                scope=f"user:{n % 3}",
                session_id=f"s{n}",
                platform="cli",
            )
        )
    rows = hosts[0].store.journal.pending(limit=100)
    both = [threading.Thread(target=host.curator.process_rows, args=(rows,)) for host in hosts]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join(60)
    store = hosts[0].store
    assert store.journal.counts() == {str(JournalStatus.DONE): 12}
    marked = [store.journal.get(row.id) for row in rows]
    assert [entry.attempts for entry in marked if entry is not None] == [
        1
    ] * 12  # marked done once each
    contents = [m.content for m in store.memories.find(None)]
    assert sorted(contents) == sorted(set(contents))
    episodes = [(e.session_id, e.role) for e in store.episodes.find(None)]
    assert sorted(episodes) == sorted({(f"s{n}", "user") for n in range(12)})  # each turn once
    for host in hosts:
        host.shutdown()


def test_hosts_starting_together_apply_each_schema_step_once(pg_server: PgTestServer) -> None:
    url = pg_server.empty()
    opened: list[Store] = []
    failures: list[BaseException] = []

    def start() -> None:
        try:
            opened.append(Store.open(url))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert (failures, len(opened)) == ([], 4)
    with psycopg.connect(url) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM bowerbird_migrations")]
    assert sorted(names) == sorted(set(names)) and names
    for store in opened:
        store.close()


def test_a_lost_connection_is_retried_and_nothing_is_lost(pg_url: str) -> None:
    store = Store.open(pg_url)
    _turn(store, "user:a", "before")
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    _turn(store, "user:a", "after")
    assert [e.user_content for e in store.journal.pending()] == ["before", "after"]
    store.close()


def test_an_unreachable_server_is_one_sentence_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://bowerbird:hunter2-secret@/nowhere?host={tmp_path}&connect_timeout=1"
    with pytest.raises(ServerUnavailableError) as raised:
        Store.open(url)
    assert "hunter2-secret" not in str(raised.value)
    assert "bowerbird:***@" in str(raised.value)


def test_the_address_is_shown_without_its_password(pg_server: PgTestServer) -> None:
    with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS keeper")
        admin.execute("CREATE ROLE keeper LOGIN SUPERUSER PASSWORD 'hunter2-secret'")
    url = pg_server.fresh()
    parts = urllib.parse.urlsplit(url)
    with_password = urllib.parse.urlunsplit(
        parts._replace(netloc=f"keeper:hunter2-secret@{parts.netloc.rpartition('@')[2]}")
    )
    store = Store.open(with_password)
    assert "hunter2-secret" not in store.location
    assert store.location.startswith("postgresql://keeper:***@")
    store.close()


def test_a_database_without_pgvector_that_this_role_cannot_add_says_what_to_do(
    pg_server: PgTestServer,
) -> None:
    url = pg_server.empty()
    with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS plain_user")
        admin.execute("CREATE ROLE plain_user LOGIN")
    name = urllib.parse.urlsplit(url).path.lstrip("/")
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(f"GRANT ALL ON DATABASE {name} TO plain_user")
        owner.execute("GRANT ALL ON SCHEMA public TO plain_user")
    parts = urllib.parse.urlsplit(url)
    as_plain = urllib.parse.urlunsplit(
        parts._replace(netloc=f"plain_user@{parts.netloc.rpartition('@')[2]}")
    )
    with pytest.raises(DatabaseError, match="CREATE EXTENSION vector") as raised:
        Store.open(as_plain)
    assert "\n" not in str(raised.value)


def _memory(store: Store, scope: str, text: str) -> int:
    return store.insert_memory(NewMemory(scope, MemoryType.FACT, text, source=Source.TURN)).id


@pytest.mark.parametrize(
    "exact_below", [10_000, 0]
)  # the scope's own rows ranked exactly, and through HNSW
def test_a_vector_search_reads_and_returns_its_own_scopes_only(
    pg_url: str, exact_below: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_vectors, "EXACT_BELOW", exact_below)
    store = Store.open(pg_url)
    rng = np.random.default_rng(3)
    target = rng.standard_normal(16).astype(np.float32)
    mine = [_memory(store, "user:a", f"mine {n}") for n in range(5)]
    theirs = [_memory(store, "user:b", f"theirs {n}") for n in range(50)]
    near = (target + 0.01 * rng.standard_normal(16)).astype(np.float32)
    store.vectors.put(ItemKind.MEMORY, "m", [(i, near) for i in theirs])
    own = {i: rng.standard_normal(16).astype(np.float32) for i in mine}
    store.vectors.put(ItemKind.MEMORY, "m", list(own.items()))
    found = store.vectors.nearest(ItemKind.MEMORY, "m", target, 10, ["user:a"])
    cosine = {
        i: float(v @ target / (np.linalg.norm(v) * np.linalg.norm(target))) for i, v in own.items()
    }
    assert [i for i, _ in found] == sorted(mine, key=lambda i: -cosine[i])  # best first
    assert [score for _, score in found] == pytest.approx([cosine[i] for i, _ in found], abs=1e-5)
    store.close()


def test_a_store_closed_under_a_running_hook_fails_at_once(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store.open(pg_url)
    store.close()
    with caplog.at_level(logging.WARNING), pytest.raises(DatabaseError, match="is closed"):
        store.memories.get(1)
    assert "retrying" not in caplog.text


def test_a_writer_kept_waiting_names_who_holds_the_writers_lock_and_then_goes_on(
    pg_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(waits, "WAIT_STEP_SECONDS", 0.3)
    store = Store.open(pg_url)
    stalled = psycopg.connect(pg_url, application_name="stalled host:42")
    stalled.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id(WRITERS),))  # and then nothing
    timeout_inside: list[str] = []

    def write() -> None:
        with store.transaction():
            timeout_inside.append(str(store.db.scalar("SHOW lock_timeout")))
            _turn(store, "user:a", "written after the wait")

    writer = threading.Thread(target=write)
    with caplog.at_level(logging.WARNING, logger=waits.__name__):
        writer.start()
        deadline = time.monotonic() + 10
        while "stalled host:42" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        assert writer.is_alive()  # still waiting
        stalled.rollback()
        writer.join(timeout=10)
    assert not writer.is_alive()
    assert "stalled host:42" in caplog.text and "pg_advisory_xact_lock" in caplog.text
    assert timeout_inside == ["0"]  # the wait's own timeout does not outlive it
    assert store.journal.pending(limit=5)[0].user_content == "written after the wait"
    stalled.close()
    store.close()
