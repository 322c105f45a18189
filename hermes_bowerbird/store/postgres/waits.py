"""Taking a transaction's advisory lock, and saying who holds it when the wait runs long.

Writers on every host take one advisory lock in turn. A writer that never ends its transaction (a host stalled
mid-write, a connection left idle in a transaction) stops every other writer of the fleet without an error: the
server sees no deadlock in it. So a wait is cut into steps of `WAIT_STEP_SECONDS`; after each, the waiter logs
which connection holds the lock (its application name names the host and process), what it last ran and for how
long its transaction has been open, and waits on. An uncontended lock costs the one statement it always did.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import psycopg
from psycopg import errors as pg_errors

log = logging.getLogger(__name__)

WAIT_STEP_SECONDS = 10.0


def take(conn: psycopg.Connection[Any], lock: int, name: str, *, wait: bool) -> bool:
    """Take the transaction-level advisory lock `lock` (called `name` in logs) on `conn`, inside its transaction:
    at once, or (with `wait`) after the holder lets go. False when it is held and `wait` is not set."""
    row = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (lock,)).fetchone()
    if row and row[0]:
        return True
    if not wait:
        return False
    began = time.monotonic()
    while True:
        try:
            with (
                conn.transaction()
            ):  # a savepoint: a wait cut short leaves the transaction as it was
                conn.execute(
                    "SELECT set_config('lock_timeout', %s, true)",
                    (f"{int(WAIT_STEP_SECONDS * 1000)}ms",),
                )
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
                conn.execute("SET LOCAL lock_timeout TO DEFAULT")
            return True
        except pg_errors.LockNotAvailable:
            log.warning(
                "waited %.1f s for the %s lock, held by %s",
                time.monotonic() - began,
                name,
                holder(conn, lock),
            )


def holder(conn: psycopg.Connection[Any], lock: int) -> str:
    """Who holds the advisory lock `lock`, in a phrase for a log line."""
    key = lock & 0xFFFF_FFFF_FFFF_FFFF  # pg_locks shows a bigint key as two unsigned 32-bit halves
    row = conn.execute(
        """
        SELECT a.pid, a.application_name, a.client_addr::text, a.state,
               extract(epoch FROM now() - a.xact_start), left(a.query, 200)
        FROM pg_locks l
        JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid
        LIMIT 1
    """,
        (key >> 32, key & 0xFFFF_FFFF),
    ).fetchone()
    if row is None:
        return "a connection this role cannot see (or none any more)"
    pid, application, client, state, open_for, query = row
    opened = f"its transaction open {float(open_for):.0f} s" if open_for is not None else ""
    return (
        f"server process {pid} ({application or 'no application name'}"
        f"{f', from {client}' if client else ''}), {state or 'state unknown'}, {opened}; "
        f"last statement: {query!r}"
    )
