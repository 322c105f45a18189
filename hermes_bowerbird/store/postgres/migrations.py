"""The PostgreSQL schema's steps (migrations/postgres/NNNN_name.sql): which are applied, and applying the rest
under an advisory lock, so hosts that start together never both apply a step."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool

from ...errors import DatabaseError, MigrationError, SchemaTooNewError
from .connection import lock_id

log = logging.getLogger(__name__)

HISTORY = "bowerbird_migrations"
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK = "bowerbird:migrations"


@dataclass(frozen=True)
class Step:
    name: str
    path: Path


def steps(folder: Path) -> list[Step]:
    """The steps in `folder`, in number order; a malformed or duplicated name is a MigrationError."""
    found: dict[int, Step] = {}
    for path in sorted(folder.glob("*.sql")):
        match = _FILE.match(path.name)
        if match is None:
            raise MigrationError(f"{path.name}: a PostgreSQL step is named NNNN_name.sql")
        number = int(match.group(1))
        if number in found:
            raise MigrationError(f"two PostgreSQL steps numbered {number:04d}")
        found[number] = Step(path.stem, path)
    return [found[n] for n in sorted(found)]


def applied(conn: psycopg.Connection[Any]) -> dict[str, float]:
    """Applied steps with when (epoch seconds); none when the history table does not exist yet."""
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (HISTORY,)).fetchone()
    if not exists or not exists[0]:
        return {}
    rows = conn.execute(
        f"SELECT name, extract(epoch FROM applied_at) FROM {HISTORY} ORDER BY applied_at, name"
    ).fetchall()
    return {str(row[0]): float(row[1]) for row in rows}


def pending(conn: psycopg.Connection[Any], folder: Path) -> list[str]:
    """Steps not applied yet; refuses a database that a newer bowerbird has migrated further."""
    names = [step.name for step in steps(folder)]
    done = applied(conn)
    _check_not_newer(list(done), names)
    return [name for name in names if name not in done]


def check_current(pool: ConnectionPool, folder: Path, address: str) -> None:
    """A read-only store can apply nothing: it must already be at this version's schema."""
    with pool.connection() as conn:
        todo = pending(conn, folder)
    if todo:
        raise DatabaseError(
            f"the database at {address} is opened read-only and needs an upgrade ({', '.join(todo)}); "
            "open it once with write access"
        )


def migrate(pool: ConnectionPool, folder: Path, address: str) -> list[str]:
    """Apply every pending step, each in its own transaction with its history row; returns those applied.

    The migration lock is a session advisory lock: a second host starting meanwhile waits for it, then finds
    nothing left to do."""
    with pool.connection() as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (lock_id(_LOCK),))
        try:
            return _apply_pending(conn, folder, address)
        finally:
            if not conn.closed:
                conn.execute("SELECT pg_advisory_unlock(%s)", (lock_id(_LOCK),))


def _apply_pending(conn: psycopg.Connection[Any], folder: Path, address: str) -> list[str]:
    todo = pending(conn, folder)
    if not todo:
        return []
    ensure_pgvector(conn, address)
    conn.execute(
        f"""
        CREATE TABLE IF NOT EXISTS {HISTORY} (
            name        text        PRIMARY KEY,
            applied_at  timestamptz NOT NULL DEFAULT now()
        )
    """
    )
    by_name = {step.name: step for step in steps(folder)}
    for name in todo:
        _apply(conn, by_name[name])
        log.info("applied PostgreSQL migration %s", name)
    return todo


def _apply(conn: psycopg.Connection[Any], step: Step) -> None:
    sql = step.path.read_text(encoding="utf-8")
    try:
        with conn.transaction():
            conn.execute(sql)  # a whole file, run as one script
            conn.execute(f"INSERT INTO {HISTORY} (name) VALUES (%s)", (step.name,))
    except psycopg.Error as exc:
        raise MigrationError(f"migration {step.name} failed and was rolled back: {exc}") from exc


def ensure_pgvector(conn: psycopg.Connection[Any], address: str) -> None:
    """Create the pgvector extension when the database lacks it; one clear sentence when that cannot be done."""
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    available = conn.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()
    if not available:
        raise DatabaseError(
            f"the PostgreSQL server {address} has no pgvector extension: install pgvector on the server "
            "(e.g. the postgresql-NN-pgvector package, or https://github.com/pgvector/pgvector), then connect again"
        )
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except pg_errors.InsufficientPrivilege as exc:
        raise DatabaseError(
            f"the database at {address} needs the pgvector extension and this role may not create it: "
            "ask an administrator to run CREATE EXTENSION vector; in it, then connect again"
        ) from exc


def _check_not_newer(done: list[str], names: list[str]) -> None:
    unknown = sorted(name for name in done if name not in names)
    if unknown:
        raise SchemaTooNewError(
            f"the database has schema step {unknown[-1]} but this version of bowerbird only knows up to "
            f"{names[-1] if names else 'none'}; upgrade hermes-bowerbird"
        )
