"""Open SQLite files with the project's pragmas and bring their schema up to date from migrations/*.sql."""

from __future__ import annotations

import errno
import logging
import os
import re
import sqlite3
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_delay, wait_random_exponential

from .errors import DatabaseError, MigrationError, SchemaTooNewError

log = logging.getLogger(__name__)

_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
BUSY_TIMEOUT_MS = 5000
# On top of SQLite's own busy wait: more attempts with growing, jittered pauses, then the error is raised.
BUSY_RETRY_SECONDS = 60.0
BUSY_PAUSE_MAX_SECONDS = 2.0
T = TypeVar("T")


@dataclass(frozen=True)
class Migration:
    number: int
    name: str
    sql: str


def migrations_dir() -> Path:
    """The migrations shipped in the wheel, or the repository's folder in a source checkout."""
    shipped = resources.files("hermes_bowerbird") / "migrations"
    if shipped.is_dir():
        return Path(str(shipped))
    source = Path(__file__).resolve().parent.parent / "migrations"
    if source.is_dir():
        return source
    raise MigrationError("no migrations folder found next to the hermes_bowerbird package")


def load_migrations(folder: Path | None = None) -> list[Migration]:
    """Read NNNN_name.sql files in order; a duplicate number or a stray .sql name is an error."""
    folder = folder or migrations_dir()
    found: dict[int, Migration] = {}
    for path in sorted(folder.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if not match:
            raise MigrationError(f"migration file {path.name!r} is not named NNNN_name.sql")
        number = int(match.group(1))
        if number in found:
            raise MigrationError(f"two migrations share number {number:04d}: "
                                 f"{found[number].name} and {path.stem}")
        found[number] = Migration(number, path.stem, path.read_text(encoding="utf-8"))
    return [found[n] for n in sorted(found)]


def connect(path: Path | str, *, readonly: bool = False) -> sqlite3.Connection:
    """Open (creating with mode 0600 if needed) a database in WAL mode with foreign keys on."""
    path = Path(path)
    if str(path) != ":memory:" and not readonly:
        _create_private(path)
    uri = f"file:{path}?mode=ro" if readonly else str(path)
    try:
        conn = sqlite3.connect(uri, uri=readonly, timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            retry_busy(lambda: conn.execute("PRAGMA journal_mode = WAL"))
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"cannot open database {path}: {exc}") from exc
    return conn


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "database is busy" (another writer holds the lock)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


def _log_busy(state: RetryCallState) -> None:
    pause = state.next_action.sleep if state.next_action is not None else 0.0
    log.info("database busy (attempt %d); retrying in %.2fs", state.attempt_number, pause)


def busy_retry(seconds: float = BUSY_RETRY_SECONDS) -> Retrying:
    """The one policy for a busy database: retry with jittered exponential backoff for at most `seconds`."""
    return Retrying(retry=retry_if_exception(is_busy), stop=stop_after_delay(seconds),
                    wait=wait_random_exponential(multiplier=0.05, max=BUSY_PAUSE_MAX_SECONDS),
                    before_sleep=_log_busy, reraise=True)


def retry_busy(action: Callable[[], T], seconds: float = BUSY_RETRY_SECONDS) -> T:
    """Run `action` (a whole write that failed atomically when busy) under the busy policy."""
    return busy_retry(seconds)(action)


def _create_private(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    for suffix in ("-wal", "-shm"):  # SQLite gives these the main file's mode once it exists
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.chmod(0o600)


def applied_migrations(conn: sqlite3.Connection) -> dict[int, str]:
    _ensure_migrations_table(conn)
    return {n: name for n, name in conn.execute("SELECT number, name FROM schema_migrations")}


def migrate(conn: sqlite3.Connection, migrations: list[Migration] | None = None) -> list[str]:
    """Apply every pending migration, each with its record in one transaction. Returns names applied."""
    migrations = load_migrations() if migrations is None else migrations
    try:
        done = applied_migrations(conn)
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"the database is unreadable (corrupt or not SQLite): {exc}") from exc
    _check_not_newer(done, migrations)
    applied = []
    for migration in migrations:
        if migration.number in done:
            continue
        _apply_one(conn, migration)
        applied.append(migration.name)
        log.info("applied migration %s", migration.name)
    return applied


def _check_not_newer(done: dict[int, str], migrations: list[Migration]) -> None:
    known = {m.number: m.name for m in migrations}
    unknown = sorted(n for n in done if n not in known)
    if unknown:
        raise SchemaTooNewError(
            f"the database has schema version {max(done):04d} ({done[max(done)]}) but this version of "
            f"bowerbird only knows up to {max(known, default=0):04d}; upgrade hermes-bowerbird")
    for number, name in done.items():
        if known[number] != name:
            raise MigrationError(f"migration {number:04d} is recorded as {name!r} but the code has "
                                 f"{known[number]!r}")


def _apply_one(conn: sqlite3.Connection, migration: Migration) -> None:
    statements = split_statements(migration.sql)
    retry_busy(lambda: conn.execute("BEGIN IMMEDIATE"))
    if conn.execute("SELECT 1 FROM schema_migrations WHERE number = ?", (migration.number,)).fetchone():
        conn.execute("COMMIT")  # another process applied it while this one waited for the lock
        return
    try:
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations (number, name, applied_at) VALUES (?, ?, ?)",
                     (migration.number, migration.name, time.time()))
    except sqlite3.Error as exc:
        conn.execute("ROLLBACK")
        raise MigrationError(f"migration {migration.name} failed and was rolled back: {exc}") from exc
    conn.execute("COMMIT")


def split_statements(sql: str) -> list[str]:
    """Split a script into complete statements (trigger bodies stay whole)."""
    statements, buffer = [], ""
    for line in sql.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise MigrationError(f"incomplete SQL statement at the end of a migration: {buffer.strip()[:80]!r}")
    return statements


def _ensure_migrations_table(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                 "number INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL)")


# -- read-only stores ----------------------------------------------------------------------------------------
def file_writable(path: Path) -> bool:
    """Whether this process may write the database file (False for a read-only or immutable file, or a
    read-only file system); a file that does not exist yet counts as writable (it will be created)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return False
        raise
    os.close(fd)
    return True


def connect_read_only(path: Path) -> sqlite3.Connection:
    """Open an existing database without ever writing to it or its folder.

    `mode=ro` first (it still shares the WAL with writers); when the folder cannot hold the WAL's side files,
    `immutable=1`, which reads the main file as it is.
    """
    if not path.is_file():
        raise DatabaseError(f"no database at {path}")
    base = "file:" + urllib.parse.quote(str(path.resolve()))
    failure: sqlite3.Error | None = None
    for params in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(f"{base}?{params}", uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            conn.close()
            failure = exc
            if "unable to open" not in str(exc).lower():
                break
            continue
        log.info("opened %s read-only (%s)", path, params)
        return conn
    raise DatabaseError(f"cannot open database {path} read-only: {failure}") from failure


def pending_migrations(conn: sqlite3.Connection, migrations: list[Migration] | None = None) -> list[str]:
    """Names of migrations not applied yet, found without writing (a read-only store cannot apply them)."""
    migrations = load_migrations() if migrations is None else migrations
    try:
        done = {n: name for n, name in conn.execute("SELECT number, name FROM schema_migrations")}
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise DatabaseError(f"the database is unreadable (corrupt or not SQLite): {exc}") from exc
        done = {}
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"the database is unreadable (corrupt or not SQLite): {exc}") from exc
    _check_not_newer(done, migrations)
    return [m.name for m in migrations if m.number not in done]
