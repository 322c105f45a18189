"""Rows the tests write or count directly in a store, for what the engine never does or never needs to ask."""

from __future__ import annotations

from hermes_bowerbird.store import Store


def add_alias(store: Store, entity_id: int, alias: str, norm: str) -> None:
    """Another name for an entity: queries resolve aliases, but nothing in the engine writes one yet."""
    store.db.execute("INSERT OR IGNORE INTO entity_aliases (entity_id, alias, norm) VALUES (?, ?, ?)",
                     (entity_id, alias, norm))


def count_edges(store: Store) -> dict[str, int]:
    """Edges per relation."""
    rows = store.db.query("SELECT relation, count(*) AS n FROM edges GROUP BY relation")
    return {row["relation"]: row["n"] for row in rows}
