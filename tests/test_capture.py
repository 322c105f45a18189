"""The capture thread: a turn that waits for another writer is appended once it is done, never dropped."""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import pytest
from tenacity import Retrying

from hermes_bowerbird import db
from hermes_bowerbird.curation import capture
from hermes_bowerbird.curation.capture import Capture
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import TurnCapture

SCOPE = "profile:default"
POLICY_SECONDS = 0.2  # the busy policy, shortened so a held write lock outlasts it within a test


@pytest.fixture
def short_busy_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's own busy wait and the retries on top of it give up within a fraction of a second."""
    policy: Callable[[float], Retrying] = db.busy_retry
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 20)
    monkeypatch.setattr(db, "busy_retry", lambda seconds=POLICY_SECONDS: policy(POLICY_SECONDS))
    monkeypatch.setattr(db, "BUSY_RETRY_SECONDS", POLICY_SECONDS)


@pytest.fixture
def store(tmp_path: Path, short_busy_policy: None) -> Iterator[Store]:
    opened = Store.open(tmp_path / "m.db")
    yield opened
    opened.close()


@pytest.fixture
def blocker(store: Store) -> Iterator[sqlite3.Connection]:
    """Another connection holding the database's write lock (as a worker process curating a row does)."""
    conn = sqlite3.connect(store.path, isolation_level=None, timeout=30, check_same_thread=False)
    conn.execute("BEGIN IMMEDIATE")
    yield conn
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    conn.close()


@pytest.fixture
def taker(store: Store) -> Iterator[Capture]:
    """A capture over `store`, its thread ended at teardown (before the store closes)."""
    started = Capture(store)
    yield started
    started.stop(timeout=5)


def _row(session: str, text: str = "I moved to Oslo in March.") -> TurnCapture:
    return TurnCapture(
        user=text, assistant="Noted.", scope=SCOPE, session_id=session, platform="cli"
    )


def _release_after(conn: sqlite3.Connection, seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, conn.execute, args=("ROLLBACK",))
    timer.start()
    return timer


def _journaled(store: Store, session: str) -> int:
    return store.journal.next_turn_index(session)


def test_a_turn_the_busy_policy_gave_up_on_reaches_the_journal(
    store: Store, taker: Capture, blocker: sqlite3.Connection
) -> None:
    taker.append(_row("held"))
    _release_after(blocker, 4 * POLICY_SECONDS).join()
    taker.drain(30)
    assert _journaled(store, "held") == 1


def test_the_busy_policy_gives_up_while_the_lock_is_held(
    store: Store, taker: Capture, blocker: sqlite3.Connection, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=capture.__name__):
        taker.append(_row("held"))
        _release_after(blocker, 4 * POLICY_SECONDS).join()
        taker.drain(30)
    assert any("a captured turn waits on" in r.getMessage() for r in caplog.records)


def test_reads_go_on_while_a_turn_waits_for_the_write_lock(
    store: Store, taker: Capture, blocker: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite's own busy wait as long as the product's: a thread waiting inside it would hold the connection
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 60_000)
    taker.append(_row("held"))
    time.sleep(0.5)  # the capture thread is at its row by now
    reader = threading.Thread(target=lambda: _journaled(store, "other"))
    reader.start()
    reader.join(10)
    assert not reader.is_alive()
    blocker.execute("ROLLBACK")
    assert taker.drain(30)
    assert _journaled(store, "held") == 1


def test_turns_keep_their_order_after_the_busy_policy_gave_up(
    store: Store, taker: Capture, blocker: sqlite3.Connection
) -> None:
    for i in range(3):
        taker.append(_row("ordered", f"turn {i}"))
    _release_after(blocker, 4 * POLICY_SECONDS).join()
    taker.drain(30)
    rows = store.db.query("SELECT user_content FROM journal ORDER BY turn_index")
    assert [r["user_content"] for r in rows] == ["turn 0", "turn 1", "turn 2"]


def test_drain_waits_for_a_turn_the_busy_policy_gave_up_on(
    store: Store, taker: Capture, blocker: sqlite3.Connection
) -> None:
    taker.append(_row("held"))
    _release_after(blocker, 4 * POLICY_SECONDS)
    assert taker.drain(30)


def test_stop_ends_within_its_budget_while_the_database_stays_busy(
    store: Store, taker: Capture, blocker: sqlite3.Connection
) -> None:
    taker.append(_row("held"))
    assert not taker.stop(timeout=0.5)


def test_stop_counts_the_turns_it_could_not_journal_within_its_budget(
    store: Store, taker: Capture, blocker: sqlite3.Connection, caplog: pytest.LogCaptureFixture
) -> None:
    for i in range(3):
        taker.append(_row("held", f"turn {i}"))
    with caplog.at_level(logging.WARNING, logger=capture.__name__):
        taker.stop(timeout=0.5)
    assert any(
        r.getMessage().startswith("3 captured turns are not journaled") for r in caplog.records
    )


def test_a_turn_waiting_at_stop_is_still_journaled_once_the_database_frees(
    store: Store, taker: Capture, blocker: sqlite3.Connection
) -> None:
    taker.append(_row("held"))
    taker.stop(timeout=0.3)
    blocker.execute("ROLLBACK")
    taker.stop(timeout=30)
    assert _journaled(store, "held") == 1


def test_a_turn_that_fails_for_another_reason_is_not_retried(
    store: Store, taker: Capture, blocker: sqlite3.Connection
) -> None:
    # queued while the write lock is held; once it frees, the schema refuses it (a journal row needs a scope)
    taker.append(dataclasses.replace(_row("broken"), scope=cast(str, None)))
    _release_after(blocker, 0.3)
    assert taker.drain(30)
