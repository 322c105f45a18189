"""Copying a whole store into another, of either backend: every table with its ids, vectors and audit trail,
counted on both sides before it is called done."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import DatabaseError
from ..types import ItemKind
from .base import Database, chunks, marks

if TYPE_CHECKING:
    from .database import Store

log = logging.getLogger(__name__)

BATCH = 500
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Table:
    """One table as copied: its columns, the key it is read in order of, and whether rows are indexed for
    full text once written (`indexed`: the columns the index reads)."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...] = ("id",)
    indexed: tuple[str, ...] = ()

    @property
    def selected(self) -> tuple[str, ...]:
        """What a page reads: the columns, then whatever of the key is not one of them."""
        return (*self.columns, *(k for k in self.key if k not in self.columns))

    def key_of(self, row: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(row[self.selected.index(k)] for k in self.key)


_MEMORY_COLUMNS = (
    "id, scope, type, content, summary, subject, content_hash, importance, confidence, access_count, "
    "created_at, updated_at, accessed_at, valid_from, valid_until, forgotten, forgotten_at, low_since, "
    "source, session_id, tags, metadata"
)
# in the order foreign keys allow (a memory's successor is linked after every memory is in)
TABLES = (
    Table(
        "journal",
        tuple(
            [
                "id",
                "scope",
                "session_id",
                "turn_index",
                "platform",
                "source",
                "user_content",
                "assistant_content",
                "created_at",
                "status",
                "attempts",
                "error",
                "processed_at",
                "retry_at",
            ]
        ),
    ),
    Table("memories", tuple(_MEMORY_COLUMNS.split(", ")), indexed=("content", "summary", "tags")),
    Table("memory_questions", ("id", "memory_id", "text", "origin", "created_at")),
    Table(
        "episodes",
        tuple(
            [
                "id",
                "scope",
                "session_id",
                "turn_index",
                "chunk_index",
                "role",
                "content",
                "created_at",
                "journal_id",
            ]
        ),
        indexed=("content",),
    ),
    Table(
        "memory_provenance",
        ("memory_id", "session_id", "turn_index", "episode_id", "journal_id"),
        key=("memory_id", "session_id", "turn_index"),
    ),
    Table("entities", ("id", "scope", "name", "norm", "kind", "created_at")),
    Table("entity_aliases", ("entity_id", "alias", "norm"), key=("rowid",)),
    Table("memory_entities", ("memory_id", "entity_id"), key=("memory_id", "entity_id")),
    Table("episode_entities", ("episode_id", "entity_id"), key=("episode_id", "entity_id")),
    Table("edges", ("id", "src_id", "dst_id", "relation", "weight", "created_at")),
    Table("embedding_cache", ("hash", "model", "dim", "vector", "created_at"), key=("hash",)),
    Table("audit_log", ("id", "memory_id", "action", "reason", "actor", "created_at", "details")),
    Table("bulletins", ("id", "scope", "text", "hash", "state_hash", "generator", "created_at")),
    Table("meta", ("key", "value"), key=("key",)),
    Table("quarantine", ("kind", "item_id", "reason", "created_at"), key=("kind", "item_id")),
)
_KINDS = (ItemKind.MEMORY, ItemKind.EPISODE, ItemKind.QUESTION)


def copy_store(source: Store, target: Store, progress: Progress | None = None) -> dict[str, int]:
    """Copy everything `source` holds into the empty store `target`; returns rows copied per table (vectors as
    `embeddings`). Counts are compared table by table afterwards: a difference is an error."""
    _check_empty(target)
    totals = {table.name: _count(source.db, table.name) for table in TABLES}
    totals["embeddings"] = _count(source.db, "embeddings")
    total, done = sum(totals.values()), 0

    def advance(rows: int) -> None:
        nonlocal done
        done += rows
        if progress is not None:
            progress(done, total)

    for table in TABLES:
        _copy_table(source, target, table, advance)
    _copy_successors(source, target)
    _copy_vectors(source, target, advance)
    target.db.reset_identities([t.name for t in TABLES if t.key == ("id",)])
    return _verified(source, target, totals)


def _check_empty(target: Store) -> None:
    held = {name: _count(target.db, name) for name in ("memories", "journal", "episodes")}
    if any(held.values()):
        raise DatabaseError(
            f"the target store {target.location} already holds data "
            f"({', '.join(f'{n} {name}' for name, n in held.items() if n)}); copy into an empty one"
        )


def _count(db: Database, table: str) -> int:
    return int(db.scalar(f"SELECT count(*) FROM {table}"))


def _copy_table(source: Store, target: Store, table: Table, advance: Callable[[int], None]) -> None:
    after: tuple[Any, ...] | None = None
    while True:
        rows = _page(source.db, table, after)
        if not rows:
            return
        with target.transaction():
            _insert(target, table, rows)
        after = table.key_of(rows[-1])
        advance(len(rows))


def _page(db: Database, table: Table, after: tuple[Any, ...] | None) -> list[Any]:
    """The next rows of `table` in key order."""
    selected = ", ".join(table.selected)
    key = ", ".join(table.key)
    where = "" if after is None else f"WHERE ({key}) > ({marks(len(table.key))})"
    return db.query(
        f"SELECT {selected} FROM {table.name} {where} ORDER BY {key} LIMIT ?",
        (*(after or ()), BATCH),
    )


def _insert(target: Store, table: Table, rows: Sequence[Any]) -> None:
    columns = table.columns
    values = [tuple(row[: len(columns)]) for row in rows]
    if table.name == "memories":  # successors are linked once every memory is in
        values = [(*v, None) for v in values]
        columns = (*columns, "superseded_by")
    # as many rows per statement as the backend binds (a server's whole page): its statement triggers (full-text
    # totals, word counts, postings) fire once per statement, not once per row
    row = f"({marks(len(columns))})"
    for part in chunks(values, max(1, target.db.dialect.parameters // len(columns))):
        target.db.execute(
            f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES {', '.join([row] * len(part))}",
            tuple(value for v in part for value in v),
        )
    if table.indexed:
        positions = [table.columns.index(c) for c in table.indexed]
        target.text.add_many(
            table.name,
            [
                (int(row[0]), tuple("" if row[p] is None else str(row[p]) for p in positions))
                for row in rows
            ],
        )


def _copy_successors(source: Store, target: Store) -> None:
    links = source.db.query(
        "SELECT id, superseded_by FROM memories WHERE superseded_by IS NOT NULL ORDER BY id"
    )
    if links:
        target.db.executemany(
            "UPDATE memories SET superseded_by = ? WHERE id = ?",
            [(int(row[1]), int(row[0])) for row in links],
        )


def _copy_vectors(source: Store, target: Store, advance: Callable[[int], None]) -> None:
    with target.vectors.bulk():
        for kind in _KINDS:
            _copy_kind(source, target, kind, advance)


def _copy_kind(
    source: Store, target: Store, kind: ItemKind, advance: Callable[[int], None]
) -> None:
    after = 0
    while True:
        batch = source.vectors.rows_after(kind, after, BATCH)
        if not batch:
            return
        by_model: dict[str, list[tuple[int, Any]]] = {}
        for item_id, model, vector in batch:
            by_model.setdefault(model, []).append((item_id, vector))
        for model, items in by_model.items():
            target.vectors.put(kind, model, items)
        after = batch[-1][0]
        advance(len(batch))


def _verified(source: Store, target: Store, totals: dict[str, int]) -> dict[str, int]:
    copied = {name: _count(target.db, name) for name in totals}
    wrong = {name: (totals[name], n) for name, n in copied.items() if n != totals[name]}
    if wrong:
        raise DatabaseError(
            "the copy does not match its source: "
            + ", ".join(f"{name} {want} -> {got}" for name, (want, got) in wrong.items())
        )
    log.info("copied %s into %s", source.location, target.location)
    return copied
