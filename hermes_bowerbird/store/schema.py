"""The schema steps of a store of either backend: which are applied, and applying the rest (`bowerbird migrate`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import db
from ..addresses import is_server_address


@dataclass(frozen=True)
class Step:
    name: str
    applied: bool


def steps(target: Path | str) -> list[Step]:
    """Every schema step this version knows, in order, and whether the store at `target` has it; a store that
    does not exist yet has none."""
    if is_server_address(target):
        return _server_steps(str(target))
    path = Path(target)
    names = db.load_migrations()
    if not path.exists():
        return [Step(name, False) for name in names]
    conn = db.connect_read_only(path)
    try:
        pending = set(db.pending_migrations(conn))
    finally:
        conn.close()
    return [Step(name, name not in pending) for name in names]


def apply(target: Path | str) -> list[str]:
    """Bring the store at `target` up to date (creating it when new); returns the steps applied now."""
    if is_server_address(target):
        return _server_apply(str(target))
    conn = db.connect(Path(target))
    try:
        return db.migrate(conn)
    finally:
        conn.close()


def _server_steps(address: str) -> list[Step]:
    from .postgres import server_schema

    done, names = server_schema(address)
    return [Step(name, name in done) for name in names]


def _server_apply(address: str) -> list[str]:
    from .postgres import migrate_server

    return migrate_server(address)
