"""Open SQLite files with the project's pragmas and bring their schema up to date from migrations/*.sql."""

from __future__ import annotations

import errno
import functools
import importlib.util
import logging
import os
import shutil
import sqlite3
import tempfile
import urllib.parse
import weakref
from collections.abc import Callable, Collection
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import TypeVar, cast

from sqlite_utils import Database, Migrations
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_delay,
    wait_random_exponential,
)

from .errors import DatabaseError, MigrationError, SchemaTooNewError

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
# On top of SQLite's own busy wait: more attempts with growing, jittered pauses, then the error is raised.
BUSY_RETRY_SECONDS = 60.0
BUSY_PAUSE_MAX_SECONDS = 2.0
HISTORY = "_sqlite_migrations"  # the table sqlite-utils keeps migration history in
LEGACY_HISTORY = "schema_migrations"  # the table of the store's own runner up to 0.1
T = TypeVar("T")


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
    """The sqlite-utils migration set for a folder of NNNN_name.sql/.py files (default: the shipped one)."""
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
        conn = sqlite3.connect(
            uri,
            uri=readonly,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            retry_busy(lambda: conn.execute("PRAGMA journal_mode = WAL"))
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        # deleted text is overwritten, never left in free pages
        conn.execute("PRAGMA secure_delete = ON")
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"cannot open database {path}: {exc}") from exc
    return conn


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "database is busy" (another writer holds the lock)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return (
        "database is locked" in text
        or "database is busy" in text
        or "database table is locked" in text
    )


def _log_busy(state: RetryCallState) -> None:
    pause = state.next_action.sleep if state.next_action is not None else 0.0
    log.info("database busy (attempt %d); retrying in %.2fs", state.attempt_number, pause)


def busy_retry(seconds: float = BUSY_RETRY_SECONDS) -> Retrying:
    """The one policy for a busy database: retry with jittered exponential backoff for at most `seconds`."""
    return Retrying(
        retry=retry_if_exception(is_busy),
        stop=stop_after_delay(seconds),
        wait=wait_random_exponential(multiplier=0.05, max=BUSY_PAUSE_MAX_SECONDS),
        before_sleep=_log_busy,
        reraise=True,
    )


def retry_busy(action: Callable[[], T], seconds: float = BUSY_RETRY_SECONDS) -> T:
    """Run `action` (a whole write that failed atomically when busy) under the busy policy.

    The first attempt runs bare: building the policy for every statement cost more than most statements do.
    """
    try:
        return action()
    except sqlite3.OperationalError as exc:
        if not is_busy(exc):
            raise
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


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """Names of the bowerbird migrations recorded in _sqlite_migrations, in the order they were applied."""
    return [m.name for m in migration_set().applied(wrap(conn))]


def migrate(
    conn: sqlite3.Connection, folder: Path | None = None, *, only: Collection[str] | None = None
) -> list[str]:
    """Apply every pending migration, each with its history row in one transaction. Returns names applied.

    sqlite-utils runs the steps and keeps the history; the store takes the write lock first (BEGIN
    IMMEDIATE) so two processes opening a new file cannot both apply a step, and re-reads what is pending
    under that lock. `only` limits the run to the named steps (rebuilding an older store's schema)."""
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
        if name in done or (only is not None and name not in only):
            continue
        if _apply_one(conn, db, steps, name, names[index + 1 :]):
            applied.append(name)
            log.info("applied migration %s", name)
    return applied


def _apply_one(
    conn: sqlite3.Connection, db: Database, steps: Migrations, name: str, later: list[str]
) -> bool:
    """Apply one step (and nothing after it) inside an IMMEDIATE transaction; False if another process did."""
    retry_busy(lambda: conn.execute("BEGIN IMMEDIATE"))
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
        raise MigrationError(
            f"migration {number:04d} is recorded as {clash[0]!r} but the code has {known[number]!r}"
        )
    if unknown:
        raise SchemaTooNewError(
            f"the database has schema version {unknown[-1]} but this version of bowerbird only knows up to "
            f"{names[-1] if names else 'none'}; upgrade hermes-bowerbird"
        )


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
        raise MigrationError(
            f"could not adopt the migration history of {LEGACY_HISTORY}: {exc}"
        ) from exc
    conn.execute("COMMIT")
    log.info("migration history moved from %s to %s", LEGACY_HISTORY, HISTORY)


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        is not None
    )


# -- read-only stores ----------------------------------------------------------------------------------------
ASKED_READ_ONLY = "it was opened read-only on request"
_FILE_BLOCKERS = {
    errno.EROFS: "the file system holding it is read-only",
    errno.EACCES: "the file is not writable (permission denied)",
    errno.EPERM: "the file may not be changed (operation not permitted: an immutable file?)",
}
_SIDE_SUFFIXES = ("-wal", "-shm", "-journal")


def write_blocker(path: Path) -> str | None:
    """Why this process cannot write the database file itself (a read-only file system, a read-only or
    immutable file), or None; a file that does not exist yet is not blocked (it will be created)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in _FILE_BLOCKERS:
            return _FILE_BLOCKERS[exc.errno]
        raise
    os.close(fd)
    return None


def file_writable(path: Path) -> bool:
    """Whether this process may write the database file (see write_blocker)."""
    return write_blocker(path) is None


def folder_blocker(path: Path) -> str:
    """Why SQLite could not write a database whose file itself is writable: a side file it may not write, else
    the folder, where it must create them."""
    for suffix in _SIDE_SUFFIXES:
        side = path.with_name(path.name + suffix)
        if side.exists() and write_blocker(side) is not None:
            return f"its side file {side.name} is not writable"
    return (
        f"its folder {path.parent} is not writable, and SQLite must create the database's "
        "-wal and -shm files there"
    )


class _SnapshotConnection(sqlite3.Connection):
    """A read-only connection to a private copy of a database and its WAL; closing it deletes the copy (so does
    collecting it, or the interpreter's exit, should it never be closed)."""

    remove_copy: weakref.finalize[..., object] | None = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.remove_copy is not None:
                self.remove_copy()


def connect_read_only(path: Path) -> sqlite3.Connection:
    """Open an existing database without ever writing to it or its folder.

    `mode=ro` first (it still shares the WAL with writers). When the folder cannot hold the WAL's side files:
    `immutable=1`, which reads the main file as it is, or, when the WAL still holds changes not yet copied
    into the main file (a store copied or mounted while an agent ran), a private copy of both, so recall sees
    every change (SQLite reads a WAL only beside its -shm file, which it cannot create in that folder)."""
    if not path.is_file():
        raise DatabaseError(f"no database at {path}")
    try:
        return _open_uri(path, "mode=ro")
    except sqlite3.Error as exc:
        if "unable to open" not in str(exc).lower():
            raise DatabaseError(f"cannot open database {path} read-only: {exc}") from exc
    try:
        if _wal_holds_changes(path):
            return _open_snapshot(path)
        return _open_uri(path, "mode=ro&immutable=1")
    except (sqlite3.Error, OSError) as exc:
        raise DatabaseError(f"cannot open database {path} read-only: {exc}") from exc


def _open_uri(
    path: Path, params: str, factory: type[sqlite3.Connection] = sqlite3.Connection
) -> sqlite3.Connection:
    base = "file:" + urllib.parse.quote(str(path.resolve()))
    conn = sqlite3.connect(
        f"{base}?{params}",
        uri=True,
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=False,
        factory=factory,
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    log.info("opened %s read-only (%s)", path, params)
    return conn


def _wal_holds_changes(path: Path) -> bool:
    wal = path.with_name(path.name + "-wal")
    try:
        return wal.stat().st_size > 0
    except FileNotFoundError:
        return False


def _open_snapshot(path: Path) -> sqlite3.Connection:
    """`path` and its WAL copied into a private temporary folder and opened read-only there."""
    folder = Path(tempfile.mkdtemp(prefix="bowerbird-snapshot-"))
    try:
        copy = folder / path.name
        for suffix in ("", "-wal"):
            shutil.copyfile(path.with_name(path.name + suffix), copy.with_name(copy.name + suffix))
        conn = cast(_SnapshotConnection, _open_uri(copy, "mode=ro", factory=_SnapshotConnection))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    conn.remove_copy = weakref.finalize(conn, shutil.rmtree, folder, ignore_errors=True)
    log.info("%s: its WAL cannot be shared from a read-only folder; reading a private copy", path)
    return conn


def pending_migrations(conn: sqlite3.Connection) -> list[str]:
    """Names of migrations not applied yet, found without writing (a read-only store cannot apply them)."""
    steps = migration_set()
    names = load_migrations()
    try:
        done = [m.name for m in steps.applied(wrap(conn))]
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"the database is unreadable (corrupt or not SQLite): {exc}") from exc
    _check_not_newer(done, names)
    return [name for name in names if name not in done]
