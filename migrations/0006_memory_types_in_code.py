"""The memory types are defined by one table in the code (hermes_bowerbird/types.py), not by the schema.

The CHECK listing them on memories.type goes, so a new type needs no migration; every connection the store opens
adds temporary triggers built from that table that refuse any other type (store/memories.py).

SQLite cannot drop a CHECK in place, and rebuilding the table would also rebuild its keys, triggers and full-text
index (and a DROP TABLE fires the ON DELETE CASCADE of every table that references it). The documented way to
remove a CHECK constraint is to edit the table's stored SQL under writable_schema: the file format does not
change. RESET reloads this connection's schema; a table made and dropped after it changes the schema version, so
other open connections reload it too.

Where SQLite runs in defensive mode (macOS's own libsqlite3 does) the stored SQL cannot be edited: the CHECK then
stays, which every built-in type passes, and the step is done all the same so the store opens.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

log = logging.getLogger("hermes_bowerbird.migrations")

TYPE_CHECK = (
    " CHECK (type IN ('identity', 'goal', 'decision', 'todo',\n"
    "                       'procedure', 'preference', 'fact', 'pattern', 'event', 'observation'))"
)
TABLE_SQL = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memories'"


def apply(db: Any) -> None:
    conn: sqlite3.Connection = db.conn
    sql = str(conn.execute(TABLE_SQL).fetchone()[0])
    if TYPE_CHECK not in sql:
        if "CHECK (type IN" in sql:
            raise ValueError("memories.type has a CHECK this step does not know; the schema was changed by hand")
        return
    try:
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'memories'",
            (sql.replace(TYPE_CHECK, ""),),
        )
    except sqlite3.OperationalError as exc:
        log.warning("the memory types stay listed in the schema (SQLite here forbids editing it: %s)", exc)
        return
    finally:
        conn.execute("PRAGMA writable_schema = RESET")
    conn.execute("CREATE TABLE schema_reload (x INTEGER)")
    conn.execute("DROP TABLE schema_reload")
    if "CHECK (type IN" in str(conn.execute(TABLE_SQL).fetchone()[0]):
        raise ValueError("the CHECK on memories.type is still in the schema after removing it")
