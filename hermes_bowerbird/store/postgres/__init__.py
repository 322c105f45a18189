"""The PostgreSQL backend (psycopg 3 and pgvector): opening a server's database, and the parts only it has."""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, cast

from ...errors import DatabaseError
from ...types import Clock

if TYPE_CHECKING:
    from ..base import Database, FullTextSearch, TextIndex
    from ..health import Health
    from ..vectors import Vectors
    from .connection import ServerConnection

INSTALL_HINT = "pip install 'hermes-bowerbird[postgres]'"


def _modules() -> tuple[ModuleType, ModuleType]:
    """The backend's connection and migration modules (psycopg is imported only when a server is named)."""
    try:
        from . import connection, migrations
    except ImportError as exc:
        raise DatabaseError(
            f"a postgresql:// store needs psycopg 3 and psycopg-pool ({INSTALL_HINT}): {exc}"
        ) from exc
    return connection, migrations


def _folder() -> Path:
    from ...db import migrations_dir

    return migrations_dir() / "postgres"


def open_server(
    address: str, *, clock: Clock = time.time, readonly: bool = False
) -> ServerConnection:
    """Connect to the PostgreSQL database at `address`, bring its schema up to date, and return its connection."""
    connection, migrations = _modules()
    from . import vectors

    shown = connection.shown(address)
    setup = connection.open_pool(address, readonly=readonly, size=1)
    try:
        if readonly:
            migrations.check_current(setup, _folder(), shown)
        else:
            migrations.migrate(setup, _folder(), shown)
    finally:
        setup.close()
    pool = connection.open_pool(address, readonly=readonly, configure=vectors.configure)
    server: ServerConnection = connection.ServerConnection(pool, address, clock, readonly=readonly)
    return server


def server_schema(address: str) -> tuple[dict[str, float], list[str]]:
    """(applied steps with when, every step this version knows) of the database at `address`; refuses a schema
    newer than this version's."""
    connection, migrations = _modules()
    pool = connection.open_pool(address, size=1)
    try:
        with pool.connection() as conn:
            migrations.pending(conn, _folder())
            done: dict[str, float] = migrations.applied(conn)
    finally:
        pool.close()
    return done, [step.name for step in migrations.steps(_folder())]


def migrate_server(address: str) -> list[str]:
    """Apply the pending schema steps of the database at `address`; returns those applied now."""
    connection, migrations = _modules()
    pool = connection.open_pool(address, size=1)
    try:
        applied: list[str] = migrations.migrate(pool, _folder(), connection.shown(address))
    finally:
        pool.close()
    return applied


def parts(db: Database) -> tuple[TextIndex, FullTextSearch, Vectors, Health]:
    """The text index, full-text search, vectors and health checks of a PostgreSQL store."""
    from .health import ServerHealth
    from .search import ServerSearch, TokenIndex
    from .vectors import ServerVectors

    server = cast("ServerConnection", db)  # a store opens its server connection before its parts
    return TokenIndex(db), ServerSearch(db), ServerVectors(server), ServerHealth(db)
