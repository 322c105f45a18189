"""The journal under concurrency: atomic turn indices, identical replays, busy retries, the 0005 upgrade."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from store_faults import REFUSED

from hermes_bowerbird import db
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import JournalStatus, TurnCapture


def _append(
    store: Store, user: str, *, turn: int | None, session: str = "s", assistant: str = "ok"
) -> int:
    return store.journal.append(
        TurnCapture(
            scope="p",
            session_id=session,
            turn_index=turn,
            platform="cli",
            user=user,
            assistant=assistant,
        )
    )


def _turns(store: Store, session: str = "s") -> list[tuple[int, str]]:
    entries = [store.journal.get(e.id) for e in store.journal.pending(limit=10_000)]
    return sorted(
        (e.turn_index, e.user_content) for e in entries if e is not None and e.session_id == session
    )


def test_a_free_requested_index_is_used(store: Store) -> None:
    _append(store, "first", turn=4)
    assert _turns(store) == [(4, "first")]


def test_a_taken_index_moves_the_new_turn_to_the_end_of_the_session(store: Store) -> None:
    _append(store, "first", turn=0)
    _append(store, "second", turn=1)
    _append(store, "from another writer", turn=0)
    assert _turns(store) == [(0, "first"), (1, "second"), (2, "from another writer")]


def test_a_replay_of_the_identical_turn_returns_the_same_row(store: Store) -> None:
    first = _append(store, "I live in Porto.", turn=0)
    # same text once case and spacing are folded
    again = _append(store, "I live in  porto.", turn=0)
    assert again == first


def test_the_same_text_at_a_new_index_is_a_new_turn(store: Store) -> None:
    _append(store, "thanks!", turn=0)
    _append(store, "thanks!", turn=1)
    assert _turns(store) == [(0, "thanks!"), (1, "thanks!")]


def test_no_requested_index_takes_the_next_one(store: Store) -> None:
    _append(store, "a", turn=7)
    _append(store, "b", turn=None)
    assert store.journal.next_turn_index("s") == 9


def test_two_writers_on_one_session_keep_every_turn(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    stores = [Store.open(path), Store.open(path)]  # two connections, as two processes would have

    def write(store: Store, name: str) -> None:
        for i in range(100):  # both count from 0, as two providers resuming one session do
            _append(store, f"{name} turn {i}", turn=i)

    threads = [
        threading.Thread(target=write, args=(s, n)) for s, n in zip(stores, "AB", strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    turns = _turns(stores[0])
    for store in stores:
        store.close()
    assert len(turns) == 200
    assert sorted(i for i, _ in turns) == list(range(200))


def test_a_write_waits_out_a_lock_held_longer_than_the_busy_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "m.db"
    store = Store.open(path)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    releaser = threading.Timer(0.6, lambda: other.execute("COMMIT"))
    releaser.start()
    started = time.monotonic()
    journal_id = _append(store, "written while another writer held the lock", turn=0)
    waited = time.monotonic() - started
    releaser.join()
    other.close()
    assert store.journal.get(journal_id) is not None
    assert waited >= 0.5
    store.close()


@pytest.mark.parametrize(
    ("message", "busy"),
    [
        ("database is locked", True),
        ("database is busy", True),
        ("database table is locked: journal", True),
        ("no such table: journal", False),
    ],
)
def test_only_busy_errors_are_retried(message: str, busy: bool) -> None:
    assert db.is_busy(sqlite3.OperationalError(message)) is busy


def test_the_busy_policy_retries_until_the_action_succeeds() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "written"

    assert db.retry_busy(flaky, seconds=10) == "written"
    assert len(calls) == 3


def test_the_busy_policy_gives_up_after_its_bound() -> None:
    def always_locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        db.retry_busy(always_locked, seconds=0.3)


def _old_database(path: Path) -> sqlite3.Connection:
    """A file at schema 0003 (before one row per session turn was enforced)."""
    conn = db.connect(path)
    db.migrate(conn, only=[name for name in db.load_migrations() if name < "0004"])
    return conn


def _old_row(conn: sqlite3.Connection, turn: int, user: str, status: str = "done") -> int:
    cur = conn.execute(
        "INSERT INTO journal (scope, session_id, turn_index, user_content, created_at, status) "
        "VALUES ('p', 's', ?, ?, 1.0, ?)",
        (turn, user, status),
    )
    return int(cur.lastrowid or 0)


def test_upgrade_moves_clashing_turns_to_the_end_of_their_session(tmp_path: Path) -> None:
    conn = _old_database(tmp_path / "m.db")
    _old_row(conn, 0, "first")
    _old_row(conn, 1, "second")
    clash = _old_row(conn, 0, "clashed with first")
    conn.close()
    store = Store.open(tmp_path / "m.db")
    moved = store.journal.get(clash)
    assert moved is not None and (moved.turn_index, moved.status) == (2, JournalStatus.PENDING)
    store.close()


def test_upgrade_drops_a_moved_turns_partial_episodes_so_it_is_curated_again(
    tmp_path: Path,
) -> None:
    conn = _old_database(tmp_path / "m.db")
    _old_row(conn, 0, "first")
    clash = _old_row(conn, 0, "clashed")
    conn.execute(
        "INSERT INTO episodes (scope, session_id, turn_index, chunk_index, role, content, created_at, "
        "journal_id) VALUES ('p', 's', 0, 1, 'user', 'the clashing turn''s extra chunk', 1.0, ?)",
        (clash,),
    )
    conn.close()
    store = Store.open(tmp_path / "m.db")
    assert store.episodes.find(["p"]) == []
    store.close()


def test_upgrade_gives_failed_rows_another_chance(tmp_path: Path) -> None:
    conn = _old_database(tmp_path / "m.db")
    failed = _old_row(conn, 0, "failed three times", status="failed")
    conn.close()
    store = Store.open(tmp_path / "m.db")
    assert [e.id for e in store.journal.pending()] == [failed]
    store.close()


def test_the_unique_guard_refuses_a_second_row_for_a_session_turn(store: Store) -> None:
    _append(store, "first", turn=0)
    with pytest.raises(REFUSED):
        store.db.execute(
            "INSERT INTO journal (scope, session_id, turn_index, created_at) VALUES ('p', 's', 0, 1.0)"
        )
