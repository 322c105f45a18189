"""Open SQLite files with the project's pragmas and bring their schema up to date from migrations/*.sql."""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import sqlite3
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import cast

from sqlite_utils import Database, Migrations

from .errors import DatabaseError, MigrationError, SchemaTooNewError

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
HISTORY = "_sqlite_migrations"  # the table sqlite-utils keeps migration history in
LEGACY_HISTORY = "schema_migrations"  # the table of the store's own runner up to 0.1


def migrations_dir() -> Path:
    """The migrations shipped in the wheel, or the repository's folder in a source checkout."""
    shipped = resources.files("hermes_bowerbird") / "migrations"
    if shipped.is_dir():
        return Path(str(shipped))
    source = Path(__file__).resolve().parent.parent / "migrations"
    if source.is_dir():
        return source
    raise MigrationError("no migrations folder found next to the hermes_bowerbird package")


@functools.lru_cache(maxsize=4)
def _module_for(folder: Path) -> ModuleType:
    """Load migrations.py from the migrations folder (not a package: sqlite-utils runs it as a plain file)."""
    source = folder / "migrations.py"
    spec = importlib.util.spec_from_file_location("hermes_bowerbird._migration_set", source)
    if not source.is_file() or spec is None or spec.loader is None:
        raise MigrationError(f"cannot load the migration set {source}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def migration_set(folder: Path | None = None) -> Migrations:
    """The sqlite-utils migration set for a folder of NNNN_name.sql files (default: the shipped one)."""
    shipped = migrations_dir().resolve()
    try:
        module = _module_for(shipped)
        return cast(Migrations, module.build(folder) if folder is not None else module.migrations)
    except ValueError as exc:
        raise MigrationError(str(exc)) from exc


def wrap(conn: sqlite3.Connection) -> Database:
    """sqlite-utils on one of our connections, changing none of its settings (no pragmas, no plugins)."""
    return Database(conn, recursive_triggers=False, execute_plugins=False)


def load_migrations(folder: Path | None = None) -> list[str]:
    """The names of the migrations in order (0001_initial, ...); a malformed folder is a MigrationError."""
    steps = migration_set(folder)
    with Database(memory=True, recursive_triggers=False, execute_plugins=False) as empty:
        return [step.name for step in steps.pending(empty)]


def split_statements(sql: str) -> list[str]:
    """Split a script into complete statements (trigger bodies stay whole)."""
    try:
        return cast(list[str], _module_for(migrations_dir().resolve()).split_statements(sql))
    except ValueError as exc:
        raise MigrationError(str(exc)) from exc


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


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """Names of the bowerbird migrations recorded in _sqlite_migrations, in the order they were applied."""
    return [m.name for m in migration_set().applied(wrap(conn))]


def migrate(conn: sqlite3.Connection, folder: Path | None = None) -> list[str]:
    """Apply every pending migration, each with its history row in one transaction. Returns names applied.

    sqlite-utils runs the steps and keeps the history; the store takes the write lock first (BEGIN
    IMMEDIATE) so two processes opening a new file cannot both apply a step, and re-reads what is pending
    under that lock."""
    steps = migration_set(folder)
    names = load_migrations(folder)  # every step in file order
    db = wrap(conn)
    try:
        if _has_table(conn, LEGACY_HISTORY):
            _adopt_legacy_history(conn, db, steps)
        done = [m.name for m in steps.applied(db)]
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"the database is unreadable (corrupt or not SQLite): {exc}") from exc
    _check_not_newer(done, names)
    applied = []
    for index, name in enumerate(names):
        if name in done:
            continue
        if _apply_one(conn, db, steps, name, names[index + 1:]):
            applied.append(name)
            log.info("applied migration %s", name)
    return applied


def _apply_one(conn: sqlite3.Connection, db: Database, steps: Migrations, name: str, later: list[str]) -> bool:
    """Apply one step (and nothing after it) inside an IMMEDIATE transaction; False if another process did."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if name in {m.name for m in steps.applied(db)}:
            conn.execute("ROLLBACK")
            return False
        steps.apply(db, stop_before=later)  # joins this transaction through a savepoint
    except (sqlite3.Error, ValueError) as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise MigrationError(f"migration {name} failed and was rolled back: {exc}") from exc
    conn.execute("COMMIT")
    return True


def _check_not_newer(done: list[str], names: list[str]) -> None:
    known = {_number(n): n for n in names}
    unknown = sorted((n for n in done if n not in names), key=_number)
    clash = [n for n in unknown if _number(n) in known]
    if clash:
        number = _number(clash[0])
        raise MigrationError(f"migration {number:04d} is recorded as {clash[0]!r} but the code has "
                             f"{known[number]!r}")
    if unknown:
        raise SchemaTooNewError(
            f"the database has schema version {unknown[-1]} but this version of bowerbird only knows up to "
            f"{names[-1] if names else 'none'}; upgrade hermes-bowerbird")


def _number(name: str) -> int:
    head = name.split("_", 1)[0]
    return int(head) if head.isdigit() else -1


def _adopt_legacy_history(conn: sqlite3.Connection, db: Database, steps: Migrations) -> None:
    """The earlier runner's history moves into _sqlite_migrations (the set does it; we hold the write lock)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        steps.ensure_migrations_table(db)
    except sqlite3.Error as exc:
        conn.execute("ROLLBACK")
        raise MigrationError(f"could not adopt the migration history of {LEGACY_HISTORY}: {exc}") from exc
    conn.execute("COMMIT")
    log.info("migration history moved from %s to %s", LEGACY_HISTORY, HISTORY)


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() \
        is not None
