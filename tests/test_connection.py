"""The store's connection never stays inside a transaction it could not commit, nor leaves a statement running."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_bowerbird.store.connection import Connection, open_connection


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[Connection]:
    connection = open_connection(tmp_path / "memory.db")
    connection.execute("CREATE TABLE t (x INTEGER)")
    yield connection
    connection.close()


def _other_process_can_write(path: Path) -> bool:
    """Whether another connection takes the write lock at once (as another Hermes process would)."""
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        other.close()


def _count(conn: Connection) -> int:
    return int(conn.scalar("SELECT count(*) FROM t"))


def test_a_statement_that_returns_rows_is_finished_before_execute_returns(conn: Connection) -> None:
    # A PRAGMA's row left unread kept a COMMIT on this connection failing ("SQL statements in progress"):
    # the curation worker's checkpoint, run on one thread, failed the curator thread's next commit.
    held = [conn.execute("PRAGMA wal_checkpoint(PASSIVE)"), conn.execute("SELECT 1")]
    with conn.transaction():
        conn.execute("INSERT INTO t VALUES (1)")
    assert _count(conn) == 1
    assert held  # the cursors were still alive at the commit


def test_execute_still_reports_what_a_write_changed(conn: Connection) -> None:
    assert conn.execute("INSERT INTO t VALUES (1)").lastrowid == 1
    assert conn.execute("UPDATE t SET x = 2").rowcount == 1


@pytest.mark.parametrize("kind", ["transaction", "try_transaction"])
def test_a_commit_that_fails_rolls_back_and_frees_the_write_lock(
    conn: Connection, tmp_path: Path, kind: str
) -> None:
    # a statement in progress fails COMMIT
    held = conn._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    with pytest.raises(sqlite3.OperationalError, match="statements in progress"):
        if kind == "transaction":
            with conn.transaction():
                conn.execute("INSERT INTO t VALUES (1)")
        else:
            with conn.try_transaction() as began:
                assert began
                conn.execute("INSERT INTO t VALUES (1)")
    del held
    # not left inside the failed transaction: other processes can write, and the next transaction commits
    assert not conn._conn.in_transaction
    assert _other_process_can_write(tmp_path / "memory.db")
    assert _count(conn) == 0
    with conn.transaction():
        conn.execute("INSERT INTO t VALUES (2)")
    reader = sqlite3.connect(tmp_path / "memory.db")
    try:
        assert reader.execute("SELECT x FROM t").fetchall() == [(2,)]
    finally:
        reader.close()


def test_a_failing_body_rolls_back_once_even_when_sqlite_already_did(conn: Connection) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom), conn.transaction():
        conn.execute("INSERT INTO t VALUES (1)")
        conn._conn.execute("ROLLBACK")  # as SQLite does itself after some errors (a full disk)
        raise Boom  # the original error reaches the caller, not "cannot rollback"
    assert not conn._conn.in_transaction
    assert _count(conn) == 0
