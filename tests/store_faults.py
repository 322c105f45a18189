"""Faults the tests plant in a store of either backend: a column whose updates the database itself refuses."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from hermes_bowerbird.errors import DatabaseError
from hermes_bowerbird.store import Store

# what a refused statement raises: SQLite's own error, or the PostgreSQL store's translation of the server's
REFUSED = (sqlite3.IntegrityError, DatabaseError)


def refuse_updates(store: Store, table: str, column: str, message: str) -> None:
    """Every later UPDATE of `column` in `table` fails inside the database with `message`."""
    if store.file is not None:
        store.db.execute(f"""
            CREATE TEMP TRIGGER refuse_{column} BEFORE UPDATE OF {column} ON {table}
            BEGIN SELECT RAISE(ABORT, '{message}'); END
        """)
        return
    store.db.execute(f"""
        CREATE FUNCTION refuse_{column}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION '{message}'; END;
        $$
    """)
    store.db.execute(f"""
        CREATE TRIGGER refuse_{column} BEFORE UPDATE OF {column} ON {table}
        FOR EACH ROW EXECUTE FUNCTION refuse_{column}()
    """)


@contextmanager
def another_writer(store: Store) -> Iterator[None]:
    """Another connection holds the store's write lock meanwhile (as the curation worker does while it writes)."""
    if store.file is not None:
        blocker = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        return
    import psycopg

    from hermes_bowerbird.store.postgres.connection import WRITERS, lock_id

    with psycopg.connect(store.db.address) as conn:  # type: ignore[attr-defined]
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id(WRITERS),))
        yield
        conn.rollback()
