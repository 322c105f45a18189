"""The Store: opens a backend's database, composes one object per table, and writes each change that spans tables.

Two backends serve the same Store: SQLite (a file, the default) and PostgreSQL with pgvector (a server several
hosts share, opened by a `postgresql://` address). Most table modules are shared (their SQL is written for both);
full-text search, vector search and whole-database checks are each backend's own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from ..addresses import is_server_address
from ..errors import DatabaseError, InvalidInputError, ReadOnlyStoreError
from ..explain import nothing_stored
from ..types import AuditAction, Clock, Edge, ItemKind, Memory, NewMemory, Provenance, Relation
from .audit import Audit, Quarantine
from .base import Database, FullTextSearch, RunnerLock, TextIndex
from .bulletins import Bulletins
from .connection import Connection, TriggerIndex, open_connection
from .graph import Graph
from .health import FileHealth, Health
from .journal import Episodes, Journal
from .memories import Memories, Retention
from .meta import Meta
from .provenance import Provenances
from .questions import Questions
from .search import Search
from .vectors import EmbeddingCache, Vectors


class Store:
    """A migrated SQLite database, thread-safe through one connection guarded by a re-entrant lock.

    Reads and single-table writes go through the parts (`store.memories.get(...)`, `store.journal.append(...)`);
    a change that spans tables (a new memory with its provenance and audit row, a supersession with its
    `updates` edge) is a method here, one transaction each.
    """

    def __init__(self, db: Database) -> None:
        # the connection itself: statements, transactions (what sqlite-utils calls `conn`)
        self.db = db
        self._db = db
        parts: tuple[TextIndex, FullTextSearch, Vectors, Health]
        if isinstance(db, Connection):
            parts = _sqlite_parts(db)
        else:
            from . import postgres

            parts = postgres.parts(db)
        text, search, vectors, health = parts
        # keeps the backend's full-text index of each memory and episode written (SQLite's by trigger)
        self.text = text
        self.memories = Memories(db, text)
        self.retention = Retention(db)
        self.provenance = Provenances(db)
        self.questions = Questions(db)
        self.journal = Journal(db)
        self.episodes = Episodes(db, text)
        self.graph = Graph(db)
        self.search: FullTextSearch = search
        self.vectors: Vectors = vectors
        self.embedding_cache = EmbeddingCache(db)
        self.bulletins = Bulletins(db)
        self.audit = Audit(db)
        self.quarantine = Quarantine(db)
        self.meta = Meta(db)
        self.health: Health = health

    @classmethod
    def open(cls, target: Path | str, *, clock: Clock = time.time, readonly: bool = False) -> Store:
        """Open or create the store at `target` (a file path, or a `postgresql://` server address) and apply
        pending migrations.

        An existing SQLite store whose file, folder or file system cannot be written opens read-only instead of
        failing.
        """
        if is_server_address(target):
            from .postgres import open_server

            return cls(open_server(str(target), clock=clock, readonly=readonly))
        return cls(open_connection(target, clock=clock, readonly=readonly))

    @property
    def location(self) -> str:
        """Where the data lives, safe to print: the file's path, or the server's address without a password."""
        return self._db.location

    @property
    def file(self) -> Path | None:
        """The SQLite file, or None when the store is on a server."""
        return self._db.path if isinstance(self._db, Connection) else None

    @property
    def path(self) -> Path:
        """The SQLite file (what only a file has: backups, salvage, side files); a server store has none."""
        if not isinstance(self._db, Connection):
            raise DatabaseError(f"the store {self.location} is on a server: it has no file")
        return self._db.path

    def runner_lock(self, name: str) -> RunnerLock:
        """The lock that names the one runner of `name` (maintenance, reindexing) of this store, wherever it runs."""
        return self._db.runner_lock(name)

    @property
    def clock(self) -> Clock:
        return self._db.clock

    @property
    def readonly(self) -> bool:
        """Opened read-only: reads work, the read path skips its bookkeeping writes."""
        return self._db.readonly

    @property
    def readonly_reason(self) -> str | None:
        """Why the store was opened read-only ("its folder ... is not writable"), or None when it is writable."""
        return self._db.readonly_reason

    def require_writable(self) -> None:
        """Refuse a write to a store opened read-only, naming why it cannot be written (before any work is done)."""
        reason = self.readonly_reason
        if reason is not None:
            raise ReadOnlyStoreError(nothing_stored(self.location, reason))

    def close(self) -> None:
        self.vectors.close()
        self._db.close()

    def copy_to(
        self, target: Store, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        """Copy everything into the empty store `target` (either backend); rows copied per table, verified."""
        from .transfer import copy_store

        return copy_store(self, target, progress)

    def reading(self) -> AbstractContextManager[None]:
        """Meanwhile this thread's reads share one connection (for a search's many small statements)."""
        return self._db.reading()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several writes atomically; nested use joins the outer transaction."""
        with self._db.transaction():
            yield

    # -- changes that span tables ---------------------------------------------------------------------------
    def insert_memory(self, new: NewMemory, *, actor: str = "", reason: str = "created") -> Memory:
        """Store a new memory with its provenance and an audit row, atomically."""
        if not new.content.strip():
            raise InvalidInputError("memory content is empty")
        with self._db.transaction():
            memory_id = self.memories.insert(new)
            self.provenance.add(memory_id, new.provenance)
            self.audit.add(
                memory_id,
                AuditAction.CREATE,
                reason,
                actor or str(new.source),
                {"type": str(new.type)},
            )
        return self.memories.require(memory_id)

    def reinforce(
        self,
        memory_id: int,
        provenance: Sequence[Provenance],
        *,
        reason: str,
        actor: str,
        importance: float | None = None,
    ) -> None:
        """A near-duplicate arrived: boost access, extend provenance, optionally raise importance."""
        with self._db.transaction():
            self.memories.boost(memory_id, importance)
            self.provenance.add(memory_id, provenance)
            self.audit.add(memory_id, AuditAction.MERGE, reason, actor)

    def set_origin(
        self, memory_id: int, origin: str, *, confidence: float, reason: str, actor: str
    ) -> None:
        """A stronger source stated a memory again: record that origin and raise its confidence."""
        with self._db.transaction():
            self.memories.set_origin(memory_id, origin, confidence)
            self.audit.add(memory_id, AuditAction.UPDATE, reason, actor, {"origin": origin})

    def supersede(self, old_id: int, new_id: int, *, reason: str, actor: str) -> None:
        """Mark `old_id` as no longer current: valid_until now, superseded_by new, an `updates` edge new->old."""
        with self._db.transaction():
            self.memories.mark_superseded(old_id, new_id)
            self.graph.add_edge(new_id, old_id, Relation.UPDATES, 1.0)
            self.audit.add(old_id, AuditAction.SUPERSEDE, reason, actor, {"superseded_by": new_id})

    def forget(self, memory_id: int, *, reason: str, actor: str) -> list[int]:
        """Soft-delete: the row stays (audit, provenance, its questions) but search and listings skip it; the
        vectors of its questions go (a restore embeds them again). Returns the ids of those questions."""
        with self._db.transaction():
            self.memories.mark_forgotten(memory_id)
            self.audit.add(memory_id, AuditAction.FORGET, reason, actor)
            questions = self.questions.ids_of([memory_id])
            self.vectors.delete(ItemKind.QUESTION, questions)
        return questions

    def forget_turn(
        self, scope: str, session_id: str, turn_index: int, *, reason: str, actor: str
    ) -> tuple[list[int], list[int]]:
        """Forget one captured turn of a scope: its episodes (both roles) and their vectors are deleted, its text
        in the journal blanked, and the memories learnt from it forgotten (soft, audited); returns the episode and
        memory ids."""
        with self._db.transaction():
            episode_ids = self.episodes.of_turn(scope, session_id, turn_index)
            learnt = sorted(
                {
                    m
                    for ids in self.provenance.memories_from_episodes(episode_ids).values()
                    for m in ids
                }
            )
            for memory_id in learnt:
                self.memories.mark_forgotten(memory_id)
                self.audit.add(memory_id, AuditAction.FORGET, reason, actor)
            self.vectors.delete(ItemKind.QUESTION, self.questions.ids_of(learnt))
            self.vectors.delete(ItemKind.EPISODE, episode_ids)
            self.episodes.delete(episode_ids)
            self.journal.erase_turn(scope, session_id, turn_index)
        return episode_ids, learnt

    def restore(self, memory_id: int, *, reason: str, actor: str) -> None:
        with self._db.transaction():
            self.memories.mark_restored(memory_id)
            self.audit.add(memory_id, AuditAction.RESTORE, reason, actor)

    def set_importance(self, memory_id: int, importance: float, *, reason: str, actor: str) -> None:
        with self._db.transaction():
            self.memories.set_importance(memory_id, importance)
            self.audit.add(memory_id, AuditAction.UPDATE, reason, actor, {"importance": importance})

    def purge(self, memory_id: int, *, reason: str, actor: str) -> None:
        """Hard-delete a forgotten memory, its questions and their vectors; its audit trail stays."""
        with self._db.transaction():
            self.vectors.delete(ItemKind.MEMORY, [memory_id])
            self.vectors.delete(ItemKind.QUESTION, self.questions.ids_of([memory_id]))
            self.memories.delete_forgotten(memory_id)
            self.audit.add(memory_id, AuditAction.PURGE, reason, actor)

    def add_edge(
        self,
        src_id: int,
        dst_id: int,
        relation: Relation,
        weight: float = 1.0,
        *,
        actor: str = "",
        reason: str = "",
    ) -> Edge:
        """Create or strengthen a typed edge (the stronger weight wins); with an `actor`, audited."""
        with self._db.transaction():
            edge = self.graph.add_edge(src_id, dst_id, relation, weight)
            if actor:
                self.audit.add(
                    src_id,
                    AuditAction.RELATE,
                    reason or str(relation),
                    actor,
                    {"relation": str(relation), "target": dst_id},
                )
        return edge

    def quarantine_item(self, kind: ItemKind, item_id: int, reason: str) -> None:
        """Hold a memory or episode back from recall and prompts until the user releases it."""
        with self._db.transaction():
            if self.quarantine.add(kind, item_id, reason) and kind is ItemKind.MEMORY:
                self.audit.add(item_id, AuditAction.QUARANTINE, reason, "screen")

    def release(self, kind: ItemKind, item_id: int, *, actor: str) -> bool:
        """Let a quarantined item be recalled again; False when it was not quarantined."""
        with self._db.transaction():
            released = self.quarantine.remove(kind, item_id)
            if released and kind is ItemKind.MEMORY:  # a changed memory state rebuilds the bulletin
                self.memories.mark_changed(item_id)
                self.audit.add(item_id, AuditAction.RELEASE, "released from quarantine", actor)
        return released

    def delete_episodes_before(self, cutoff: float) -> list[int]:
        """Delete episodes (and their stored vectors) created before `cutoff`; returns their ids."""
        with self._db.transaction():
            ids = self.episodes.ids_before(cutoff)
            self.vectors.delete(ItemKind.EPISODE, ids)
            self.episodes.delete_before(cutoff)
        return ids


def _sqlite_parts(db: Connection) -> tuple[TextIndex, FullTextSearch, Vectors, Health]:
    search = Search(db)
    return TriggerIndex(), search, Vectors(db), FileHealth(db, search)
