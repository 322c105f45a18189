"""Rows the tests write or count directly in a store, for what the engine never does or never needs to ask."""

from __future__ import annotations

import numpy as np

from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind


def count_edges(store: Store) -> dict[str, int]:
    """Edges per relation."""
    rows = store.db.query("SELECT relation, count(*) AS n FROM edges GROUP BY relation")
    return {row["relation"]: row["n"] for row in rows}


def low_since(store: Store, ids: list[int]) -> dict[int, float | None]:
    """Since when each memory has been marked low-importance (None when it is not marked)."""
    marks = ",".join("?" * len(ids))
    rows = store.db.query(f"SELECT id, low_since FROM memories WHERE id IN ({marks})", ids)
    return {row["id"]: row["low_since"] for row in rows}


def stored_vectors(store: Store, kind: ItemKind, ids: list[int]) -> dict[int, np.ndarray]:
    """The stored vectors of these items, by id."""
    marks = ",".join("?" * len(ids))
    rows = store.db.query(
        f"SELECT item_id, vector FROM embeddings WHERE kind = ? AND item_id IN ({marks})",
        (str(kind), *ids),
    )
    return {row["item_id"]: np.frombuffer(row["vector"], dtype="<f4") for row in rows}
