"""The store's schema as a sqlite-utils migration set: one step per NNNN_name.sql or NNNN_name.py file beside this.

A .sql step is its statements in order. A .py step defines `apply(db)` (db: the sqlite-utils Database) for a
change SQL alone cannot make safely, such as one that must check what the file holds first.
Self-contained on purpose: `sqlite-utils migrate memory.db migrations/migrations.py` executes this file
outside the package, so it imports nothing from hermes_bowerbird.
"""

from __future__ import annotations

import datetime
import importlib.util
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlite_utils import Migrations

SET_NAME = "bowerbird"
FILE_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.(sql|py)$")
LEGACY_HISTORY = "schema_migrations"  # where the store's own runner kept its history up to 0.1


class StoreMigrations(Migrations):
    """A migration set that first adopts the history of the store's earlier runner (schema_migrations).

    sqlite-utils calls ensure_migrations_table() at the start of apply(), before it reads what is pending:
    the old rows become rows of this set with their original times and the old table goes, in one
    transaction, so a store made before 0.2 is upgraded in place by either `bowerbird` or `sqlite-utils
    migrate`, and an older bowerbird opening the upgraded file refuses it instead of skipping steps."""

    def ensure_migrations_table(self, db: Any) -> None:
        with db.atomic():
            super().ensure_migrations_table(db)
            if db[LEGACY_HISTORY].exists():
                recorded = {m.name for m in super().applied(db)}
                rows = db.execute(f"SELECT name, applied_at FROM {LEGACY_HISTORY} ORDER BY number").fetchall()
                db[self.migrations_table].insert_all(
                    {"migration_set": self.name, "name": name, "applied_at": _history_time(applied_at)}
                    for name, applied_at in rows if name not in recorded)
                db[LEGACY_HISTORY].drop()

    def applied(self, db: Any) -> list[Any]:
        """Recorded steps, plus those only the earlier runner recorded (read-only: --list adopts nothing)."""
        done = super().applied(db)
        if db[LEGACY_HISTORY].exists():
            names = {m.name for m in done}
            rows = db.execute(f"SELECT name, applied_at FROM {LEGACY_HISTORY} ORDER BY number").fetchall()
            done += [self._AppliedMigration(name=name, applied_at=_history_time(at))
                     for name, at in rows if name not in names]
        return done


def _history_time(epoch: float) -> str:
    """sqlite-utils records applied_at as str() of an aware UTC datetime."""
    return str(datetime.datetime.fromtimestamp(float(epoch), tz=datetime.UTC))


def split_statements(sql: str) -> list[str]:
    """Split a script into complete statements (trigger bodies stay whole); executescript would commit."""
    statements, buffer = [], ""
    for line in sql.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement at the end of a migration: {buffer.strip()[:80]!r}")
    return statements


def step_files(folder: Path) -> list[Path]:
    """The NNNN_name.sql and NNNN_name.py files in number order; a duplicate number or a stray name is an error."""
    found: dict[int, Path] = {}
    for path in sorted([*folder.glob("*.sql"), *folder.glob("[0-9]*.py")]):
        match = FILE_NAME.match(path.name)
        if not match:
            raise ValueError(f"migration file {path.name!r} is not named NNNN_name.sql or NNNN_name.py")
        number = int(match.group(1))
        if number in found:
            raise ValueError(f"two migrations share number {number:04d}: {found[number].stem} and {path.stem}")
        found[number] = path
    return [found[n] for n in sorted(found)]


def _step(statements: list[str]) -> Callable[[Any], None]:
    def run(db: Any) -> None:
        for statement in statements:
            db.conn.execute(statement)
    return run


def _python_step(path: Path) -> Callable[[Any], None]:
    spec = importlib.util.spec_from_file_location(f"bowerbird_migration_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load the migration {path.name}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    apply: Callable[[Any], None] | None = getattr(module, "apply", None)
    if not callable(apply):
        raise ValueError(f"the migration {path.name} defines no apply(db)")
    return apply


def build(folder: Path) -> StoreMigrations:
    """A migration set with one transactional step per file, named after the file (0001_initial...)."""
    steps = StoreMigrations(SET_NAME)
    for path in step_files(folder):
        if path.suffix == ".py":
            steps(name=path.stem)(_python_step(path))
        else:
            statements = split_statements(path.read_text(encoding="utf-8"))
            steps(name=path.stem)(_step(statements))
    return steps


migrations = build(Path(__file__).resolve().parent)
