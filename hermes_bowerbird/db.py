"""Open SQLite files with the project's pragmas and bring their schema up to date from migrations/*.sql."""

from __future__ import annotations

import errno
import logging
import os
import re
import sqlite3
import time
import urllib.parse
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .errors import DatabaseError, MigrationError, SchemaTooNewError

log = logging.getLogger(__name__)

_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
BUSY_TIMEOUT_MS = 5000


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
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"cannot open database {path}: {exc}") from exc
    return conn


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
    conn.execute("BEGIN IMMEDIATE")
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
