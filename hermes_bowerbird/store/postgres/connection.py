"""The PostgreSQL backend's connections: a pool the process's threads share, writers serialised across hosts by
advisory locks, statements written with `?` like SQLite's, and transient failures retried."""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_delay,
    wait_random_exponential,
)

from ...addresses import shown
from ...errors import DatabaseError, ServerUnavailableError
from ...types import Clock
from ..base import Params
from ..dialect import POSTGRESQL
from . import waits

__all__ = ["AdvisoryRunnerLock", "ServerConnection", "lock_id", "open_pool", "shown"]

log = logging.getLogger(__name__)

T = TypeVar("T")

POOL_SIZE = (
    8  # connections one process keeps at most (its threads: capture, curation, recall, maintenance)
)
CONNECT_SECONDS = 10.0  # how long opening the store waits for the server
RETRY_SECONDS = 30.0  # how long a statement or an atomic unit is retried while the server is away
WAIT_FOR_CONNECTION_SECONDS = 30.0  # how long a thread waits for a free connection of the pool
WRITERS = "bowerbird:writers"  # the advisory lock every write transaction holds


def lock_id(name: str) -> int:
    """The advisory-lock number of a name (a signed 64-bit integer, the same on every host)."""
    return int.from_bytes(
        hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest(), "big", signed=True
    )


def is_transient(exc: BaseException) -> bool:
    """A failure worth trying again: the connection was lost, or the server rolled back a transaction it could
    not serialise (a deadlock, a serialisation failure)."""
    if isinstance(exc, PoolClosed):  # this store was closed: nothing to wait for
        return False
    if isinstance(exc, ServerUnavailableError | PoolTimeout):
        return True
    if isinstance(exc, DatabaseError):  # translated: judge what the driver raised
        return exc.__cause__ is not None and is_transient(exc.__cause__)
    if isinstance(exc, pg_errors.SerializationFailure | pg_errors.DeadlockDetected):
        return True
    if isinstance(exc, pg_errors.AdminShutdown | pg_errors.CannotConnectNow):
        return True
    return isinstance(exc, psycopg.OperationalError) and getattr(exc, "sqlstate", None) is None


def _log_retry(state: RetryCallState) -> None:
    pause = state.next_action.sleep if state.next_action is not None else 0.0
    failure = state.outcome.exception() if state.outcome is not None else None
    log.warning(
        "database server unavailable (%s), attempt %d; retrying in %.2fs",
        type(failure).__name__,
        state.attempt_number,
        pause,
    )


def retrying(seconds: float = RETRY_SECONDS) -> Retrying:
    """The one policy for transient server failures: jittered exponential pauses for at most `seconds`."""
    return Retrying(
        retry=retry_if_exception(is_transient),
        stop=stop_after_delay(seconds),
        wait=wait_random_exponential(multiplier=0.05, max=2.0),
        before_sleep=_log_retry,
        reraise=True,
    )


@functools.lru_cache(maxsize=4096)
def placeholders(sql: str) -> str:
    """A statement written with SQLite's `?` parameters in psycopg's style (`%s`; a literal % doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


@functools.lru_cache(maxsize=512)
def _row_class(names: tuple[str, ...]) -> type[tuple[Any, ...]]:
    index = {name: i for i, name in enumerate(names)}

    class Row(tuple[Any, ...]):
        """A row read by position or by column name, as sqlite3.Row is."""

        __slots__ = ()

        def __getitem__(self, key: Any) -> Any:
            if isinstance(key, str):
                return tuple.__getitem__(self, index[key])
            return tuple.__getitem__(self, key)

        def keys(self) -> list[str]:
            return list(names)

    return Row


def _rows(cursor: psycopg.Cursor[Any]) -> Callable[[Sequence[Any]], Any]:
    """psycopg's row factory: rows that read by position or column name. The names come from the result itself:
    `cursor.description` would build a column object (type, size, precision) per column per statement."""
    result = cursor.pgresult
    if result is None or not result.nfields:
        return tuple
    return _row_class(tuple(bytes(result.fname(i) or b"").decode() for i in range(result.nfields)))


@dataclass(frozen=True)
class Outcome:
    rowcount: int


def translated(exc: psycopg.Error, location: str) -> DatabaseError:
    """A psycopg failure as the project's error (the address shown without its password)."""
    if isinstance(exc, PoolClosed):
        return DatabaseError(f"the store {location} is closed")
    if isinstance(exc, psycopg.OperationalError | PoolTimeout) and is_transient(exc):
        return ServerUnavailableError(f"the database server {location} is unavailable: {exc}")
    return DatabaseError(f"the database server {location} refused a statement: {exc}")


class ServerConnection:
    """A pool of connections to one PostgreSQL database, used as the store's one connection.

    Outside a transaction every statement borrows a connection for itself (autocommit) and is retried while the
    server is away. A transaction keeps one connection for its thread until it ends and takes the writers'
    advisory lock first, so writers on every host run one at a time, as SQLite's do, while readers never wait.
    """

    def __init__(
        self, pool: ConnectionPool, address: str, clock: Clock, *, readonly: bool = False
    ) -> None:
        self._pool = pool
        self._held = threading.local()
        self.address = address
        self.clock = clock
        # opened read-only on request (a server store is never read-only by accident: its grants refuse writes)
        self.readonly_reason = "it was opened read-only" if readonly else None
        self.dialect = POSTGRESQL

    @property
    def readonly(self) -> bool:
        return self.readonly_reason is not None

    @property
    def location(self) -> str:
        return shown(self.address)

    @property
    def path(self) -> None:
        """No file: the data lives on the server."""
        return None

    # -- statements ---------------------------------------------------------------------------------------------
    def execute(self, sql: str, params: Params = ()) -> Outcome:
        return self._run(lambda conn: Outcome(conn.execute(placeholders(sql), params).rowcount))

    def query(self, sql: str, params: Params = (), *, binary: bool = False) -> list[Any]:
        """All rows; with `binary`, in the server's binary form (a bytea as sent, not as hex text of twice its size)."""
        return self._run(
            lambda conn: conn.cursor(binary=binary).execute(placeholders(sql), params).fetchall()
        )

    def scalar(self, sql: str, params: Params = ()) -> Any:
        rows = self.query(sql, params)
        if not rows:
            return None
        (value,) = rows[0]
        return value

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        """One statement for many parameter rows, in one transaction."""
        if not rows:
            return
        with self.transaction():
            self._run(lambda conn: conn.cursor().executemany(placeholders(sql), rows))

    def _run(self, action: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run `action` on this thread's transaction connection; else on its reading connection or a borrowed
        one, again under the retry policy when the first attempt failed transiently."""
        held = getattr(self._held, "conn", None)
        if held is not None:
            try:
                return action(held)
            except psycopg.Error as exc:
                raise translated(exc, self.location) from exc
        try:  # the first attempt runs bare: building the policy costs more than most statements do
            return self._borrowed(action)
        except DatabaseError as exc:
            if not is_transient(exc):
                raise
            self._held.reading = (
                None  # a lost reading connection is given back below, and not used again
            )
        return retrying()(lambda: self._borrowed(action))

    def _borrowed(self, action: Callable[[psycopg.Connection[Any]], T]) -> T:
        reading = getattr(self._held, "reading", None)
        try:
            if reading is not None:
                return action(reading)
            with self._pool.connection(timeout=WAIT_FOR_CONNECTION_SECONDS) as conn:
                return action(conn)
        except (psycopg.Error, PoolTimeout) as exc:
            raise translated(exc, self.location) from exc

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Statements of this thread meanwhile share one connection of the pool (a search reads in many small
        statements; each would otherwise take and give back a connection)."""
        if getattr(self._held, "reading", None) is not None or getattr(self._held, "conn", None):
            yield
            return
        conn = retrying()(self._checked_out)
        self._held.reading = conn
        try:
            yield
        finally:
            self._held.reading = None
            self._pool.putconn(conn)

    # -- transactions -------------------------------------------------------------------------------------------
    @contextmanager
    def transaction(self, key: str | None = None) -> Iterator[None]:
        """Group several writes atomically; nested use joins the outer transaction. Holds the writers' lock, or
        only the lock of `key` (writers of other keys go on meanwhile)."""
        if getattr(self._held, "conn", None) is not None:
            yield
            return
        with self._begun(WRITERS if key is None else key, wait=True) as began:
            assert began
            yield

    @contextmanager
    def try_transaction(self, key: str | None = None) -> Iterator[bool]:
        """A transaction when no other writer holds the writers' lock (or only `key`'s) right now (True), else
        none (False)."""
        if getattr(self._held, "conn", None) is not None:
            yield True
            return
        with self._begun(WRITERS if key is None else key, wait=False) as began:
            yield began

    @contextmanager
    def _begun(self, lock: str, *, wait: bool) -> Iterator[bool]:
        conn = retrying()(self._checked_out)
        try:
            with conn.transaction():
                if not self._locked(conn, lock, wait=wait):
                    yield False
                    return
                self._held.conn = conn
                try:
                    yield True
                finally:
                    self._held.conn = None
        except psycopg.Error as exc:
            raise translated(exc, self.location) from exc
        finally:
            self._pool.putconn(conn)

    def _checked_out(self) -> psycopg.Connection[Any]:
        try:
            return self._pool.getconn(timeout=WAIT_FOR_CONNECTION_SECONDS)
        except (psycopg.Error, PoolTimeout) as exc:
            raise translated(exc, self.location) from exc

    @staticmethod
    def _locked(conn: psycopg.Connection[Any], lock: str, *, wait: bool) -> bool:
        return waits.take(conn, lock_id(lock), lock, wait=wait)

    def atomic(self, work: Callable[[], T], key: str | None = None) -> T:
        """`work` in one transaction, run again whole when the server failed transiently part way (a lost
        connection, a serialisation failure): what it wrote either all stands or was rolled back first."""

        def attempt() -> T:
            with self.transaction(key):
                return work()

        if getattr(self._held, "conn", None) is not None:
            return work()
        return retrying()(attempt)

    # -- what SQLite's connection also offers -------------------------------------------------------------------
    def data_version(self) -> int:
        """The server's next transaction id: it moves whenever any writer on any host has begun writing."""
        return int(self.scalar("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint"))

    def checkpoint(self) -> None:
        """Nothing to do: the server keeps its own write-ahead log."""

    def leave_checkpoints(self) -> None:
        """Nothing to do: the server keeps its own write-ahead log."""

    def reset_identities(self, tables: Sequence[str]) -> None:
        """The identity sequence of each table continues after its highest id (rows were copied with theirs)."""
        for table in tables:
            self.execute(
                f"""
                SELECT setval(pg_get_serial_sequence('{table}', 'id'), max(id))
                FROM {table}
                HAVING max(id) IS NOT NULL
            """
            )

    def runner_lock(self, name: str) -> AdvisoryRunnerLock:
        return AdvisoryRunnerLock(self._pool, f"bowerbird:runner:{name}")

    def close(self) -> None:
        self._pool.close()


class AdvisoryRunnerLock:
    """One runner of a job at a time across every host: a session advisory lock on a connection kept for the run.

    The server drops the lock when the holder's connection ends, so a host that dies never blocks the next run.
    """

    def __init__(self, pool: ConnectionPool, name: str, poll_seconds: float = 0.1) -> None:
        self._pool = pool
        self._id = lock_id(name)
        self.poll_seconds = poll_seconds

    @contextmanager
    def held(self, timeout: float = 0.0, stop: threading.Event | None = None) -> Iterator[bool]:
        """Yield True while holding the lock, or False if it stayed busy for `timeout` seconds (or `stop` fired)."""
        with self._pool.connection(timeout=WAIT_FOR_CONNECTION_SECONDS) as conn:
            got = self._acquire(conn, timeout, stop)
            try:
                yield got
            finally:
                if got and not conn.closed:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (self._id,))

    def _acquire(
        self, conn: psycopg.Connection[Any], timeout: float, stop: threading.Event | None
    ) -> bool:
        waiter = stop or threading.Event()
        waited = 0.0
        while True:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._id,)).fetchone()
            if row and row[0]:
                return True
            if waited >= timeout or waiter.is_set():
                return False
            waiter.wait(self.poll_seconds)
            waited += self.poll_seconds


def open_pool(
    address: str,
    *,
    readonly: bool = False,
    size: int = POOL_SIZE,
    configure: Callable[[psycopg.Connection[Any]], None] | None = None,
) -> ConnectionPool:
    """A pool of autocommit connections to `address`, opened and checked (the server must answer now);
    `configure` prepares each new connection."""
    options: dict[str, Any] = {
        "autocommit": True,
        "row_factory": _rows,
        # what the server's views (and a writer kept waiting, waits.py) show of this process
        "application_name": f"bowerbird {socket.gethostname()}:{os.getpid()}"[:63],
    }
    if readonly:
        options["options"] = "-c default_transaction_read_only=on"
    pool = ConnectionPool(
        address,
        min_size=1,
        max_size=size,
        kwargs=options,
        configure=configure,
        open=False,
        name="bowerbird",
    )
    try:
        pool.open(wait=True, timeout=CONNECT_SECONDS)
    except PoolTimeout as exc:
        pool.close()
        raise ServerUnavailableError(
            f"cannot connect to the database server {shown(address)} within {CONNECT_SECONDS:.0f} s: "
            f"{_last_failure(address)}"
        ) from exc
    return pool


def _last_failure(address: str) -> str:
    """Why a connection to `address` fails, in the server's or the network's words (one attempt)."""
    try:
        with psycopg.connect(address, connect_timeout=3):
            return "it answered on a second try"
    except psycopg.Error as exc:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
