"""The SQLite backend's one connection: opening it, the lock, transactions, and statements under the busy policy."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

from sqlite_utils import Database

from .. import db
from ..errors import DatabaseError
from ..explain import is_read_only, sqlite_cause
from ..filelock import RunnerLock, runner_lock_path
from ..types import MEMORY_TYPES, Clock
from .base import SQL_VARS, Params, chunks, marks
from .dialect import SQLITE

__all__ = ["SQL_VARS", "Connection", "Params", "chunks", "marks", "open_connection"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class Connection:
    """One migrated SQLite connection, thread-safe through a re-entrant lock; rows come back as sqlite3.Row."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        clock: Clock = time.time,
        *,
        readonly_reason: str | None = None,
    ) -> None:
        self._conn = conn
        self._lock = threading.RLock()
        self.path = path
        self.clock = clock
        # opened read-only (why, in words): reads work, the read path skips its bookkeeping writes
        self.readonly_reason = readonly_reason
        self.dialect = SQLITE

    @property
    def readonly(self) -> bool:
        return self.readonly_reason is not None

    @property
    def location(self) -> str:
        return str(self.path)

    def reset_identities(self, tables: Sequence[str]) -> None:
        """Nothing to do: SQLite's next rowid is always one past the highest."""

    def runner_lock(self, name: str) -> RunnerLock:
        """The file lock beside the database that names its one runner of `name` across processes."""
        return RunnerLock(runner_lock_path(self.path, name))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self, key: str | None = None) -> Iterator[None]:
        """Group several writes atomically; nested use joins the outer transaction.

        The write lock is taken at BEGIN (IMMEDIATE), so every read inside sees what the transaction will
        change; a busy database is waited for under the one busy policy (db.busy_retry). SQLite has one writer
        at a time, so a transaction over one `key` only excludes everything else too.
        """
        with self._lock:
            if self._guarded(lambda: self._conn.in_transaction):
                yield
                return
            self._guarded(lambda: db.retry_busy(lambda: self._conn.execute("BEGIN IMMEDIATE")))
            with self._ended():
                yield

    def reading(self) -> AbstractContextManager[None]:
        """Nothing to share: the store has one connection."""
        return nullcontext()

    def atomic(self, work: Callable[[], T], key: str | None = None) -> T:
        """`work` in one transaction (a busy database is waited for at BEGIN, before anything was written)."""
        with self.transaction(key):
            return work()

    @contextmanager
    def try_transaction(self, key: str | None = None) -> Iterator[bool]:
        """A transaction when the write lock is free right now (yields True), else none (False): never waits for
        another thread or process. Inside this thread's own transaction it joins that one. (SQLite has one
        write lock: `key` narrows nothing.)"""
        if not self._lock.acquire(blocking=False):
            yield False
            return
        try:
            if self._guarded(lambda: self._conn.in_transaction):
                yield True
                return
            if not self._begin_now():
                yield False
                return
            with self._ended():
                yield True
        finally:
            self._lock.release()

    @contextmanager
    def _ended(self) -> Iterator[None]:
        """End the transaction begun just before: COMMIT after the body, ROLLBACK when the body or the COMMIT fails.

        A failed COMMIT leaves SQLite inside the transaction, holding the write lock; kept open, every later
        `transaction()` of this connection would join it and never commit, and every other process would find
        the database busy for as long as this one lives."""
        try:
            yield
            db.retry_busy(lambda: self._conn.execute("COMMIT"))
        except BaseException:
            # some errors (a full disk, an interrupt) have rolled it back already
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    def _begin_now(self) -> bool:
        """BEGIN IMMEDIATE without SQLite's busy wait; False when another connection holds the write lock."""
        self._conn.execute("PRAGMA busy_timeout = 0")
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            return True
        except sqlite3.OperationalError as exc:
            if db.is_busy(exc):
                return False
            raise
        finally:
            self._conn.execute(f"PRAGMA busy_timeout = {db.BUSY_TIMEOUT_MS}")

    def leave_checkpoints(self) -> None:
        """Commits on this connection no longer copy the WAL back into the database (SQLite's autocheckpoint).

        For a process whose writes are small and waited for (the agent's turns) while another process writes the
        bulk and checkpoints: a commit that crosses the WAL's threshold runs the whole checkpoint inside it (up to
        tens of milliseconds), holding this connection for every thread of the process."""
        self.execute("PRAGMA wal_autocheckpoint = 0")

    def checkpoint(self) -> None:
        """A passive checkpoint: what of the WAL no reader still needs goes back into the database; never waits."""
        self.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def data_version(self) -> int:
        """SQLite's data_version: changes whenever another connection (another process) commits to the file."""
        return int(self.scalar("PRAGMA data_version"))

    def _guarded(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except sqlite3.ProgrammingError as exc:
            raise DatabaseError(f"database is closed or misused: {exc}") from exc

    def execute(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        """One statement under the lock, run to its end (read rows with `query`); outside a transaction a busy
        database is retried (it failed whole).

        A statement that returns rows (a PRAGMA, a SELECT) stays in progress until its rows are read; one left
        so after the lock is released fails the COMMIT of whichever thread takes the lock next ("SQL statements
        in progress"), so its rows are read here, under the lock."""
        with self._lock:
            cursor = self._run(sql, params)
            if cursor.description is not None:
                cursor.fetchall()
            return cursor

    def _run(self, sql: str, params: Params) -> sqlite3.Cursor:
        cursor = self._guarded(self._conn.cursor)
        cursor.row_factory = sqlite3.Row
        if self._guarded(lambda: self._conn.in_transaction):
            return self._guarded(lambda: cursor.execute(sql, params))
        return self._guarded(lambda: db.retry_busy(lambda: cursor.execute(sql, params)))

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        """One statement for many parameter rows, in one transaction."""
        with self.transaction():
            self._conn.executemany(sql, rows)

    def query(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """All rows, fetched while the lock is held (a cursor read later could see another thread's work)."""
        with self._lock:
            rows: list[sqlite3.Row] = self._run(sql, params).fetchall()
            return rows

    def scalar(self, sql: str, params: Params = ()) -> Any:
        """The one value of a one-column query (None when it returned no row)."""
        rows = self.query(sql, params)
        if not rows:
            return None
        (value,) = rows[0]
        return value

    def sqlite_utils(self) -> Database:
        """sqlite-utils on this connection (for its bulk inserts and FTS upkeep); call it inside a transaction."""
        return db.wrap(self._conn)

    def backup_to(self, target: sqlite3.Connection) -> None:
        """SQLite's online backup of the whole database into `target`."""
        with self._lock:
            self._conn.backup(target)


def open_connection(
    path: Path | str, *, clock: Clock = time.time, readonly: bool = False
) -> Connection:
    """Open or create the database at `path` and apply pending migrations.

    An existing store whose file, folder or file system cannot be written opens read-only instead of failing,
    and the connection says which of them it was.
    """
    path = Path(path)
    if readonly:
        return _open_read_only(path, clock, db.ASKED_READ_ONLY)
    blocker = None if str(path) == ":memory:" else db.write_blocker(path)
    if blocker is not None:
        return _open_read_only(path, clock, blocker)
    conn = _open_writable(path)
    if conn is None:  # opened outside the failure, so its error is not taken for this one's cause
        return _open_read_only(path, clock, db.folder_blocker(path))
    return Connection(conn, path, clock)


def _open_writable(path: Path) -> sqlite3.Connection | None:
    """A migrated read-write connection, or None when SQLite cannot write beside an existing file."""
    try:
        conn = db.connect(path)
    except (DatabaseError, OSError) as exc:
        if not (path.is_file() and _cannot_write(exc)):
            raise
        log.info("cannot write %s (%s): opening it read-only", path, exc)
        return None
    try:
        db.migrate(conn)
        guard_types(conn)
    except (DatabaseError, sqlite3.Error) as exc:
        conn.close()
        if not (path.is_file() and _cannot_write(exc)):
            raise
        log.info("cannot write %s (%s): opening it read-only", path, exc)
        return None
    except BaseException:
        conn.close()
        raise
    return conn


def _open_read_only(path: Path, clock: Clock, reason: str) -> Connection:
    conn = db.connect_read_only(path)
    try:
        pending = db.pending_migrations(conn)
    except BaseException:
        conn.close()
        raise
    if pending:
        conn.close()
        raise DatabaseError(
            f"the memory database {path} is read-only because {reason}, and it needs an upgrade "
            f"({', '.join(pending)}) that only a writable copy can get: open it once with write access"
        )
    guard_types(conn)
    return Connection(conn, path, clock, readonly_reason=reason)


def guard_types(conn: sqlite3.Connection) -> None:
    """Refuse, on this connection, any memory type the type table does not name.

    The schema lists no types (a new one is a row in types.py, no migration): these temporary triggers
    are rebuilt from the table on every connection the store opens and stop every write path, raw SQL
    included, from storing a type the code cannot read.
    """
    known = ", ".join("'" + name.replace("'", "''") + "'" for name in MEMORY_TYPES)
    for event in ("INSERT", "UPDATE OF type"):
        name = "memories_known_type_" + event.split()[0].lower()
        conn.execute(f"DROP TRIGGER IF EXISTS temp.{name}")
        conn.execute(
            f"""
            CREATE TEMP TRIGGER {name} BEFORE {event} ON main.memories
            WHEN NEW.type NOT IN ({known})
            BEGIN
                SELECT RAISE(ABORT, 'unknown memory type');
            END
        """
        )


class TriggerIndex:
    """SQLite's full-text tables are kept by the schema's triggers: a written row needs nothing more."""

    def add(self, table: str, item_id: int, columns: Sequence[str]) -> None:
        return None

    def add_many(self, table: str, rows: Sequence[tuple[int, Sequence[str]]]) -> None:
        return None


def _cannot_write(exc: BaseException) -> bool:
    """An open failed because the file or its folder is not writable (not because the file is damaged)."""
    return is_read_only(exc) or sqlite_cause(exc) == "SQLITE_CANTOPEN"
