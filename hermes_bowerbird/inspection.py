"""The read side the edges see (CLI, inspector, MCP, provider, exports): listings, one memory in full, counts."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from . import exporter, scopes
from .maintenance.bulletin import changes_since
from .store import Store, content_hash
from .types import (
    AuditEntry,
    Bulletin,
    Edge,
    Entity,
    Episode,
    ItemKind,
    Memory,
    MemoryFilter,
    MemoryQuestion,
    MemoryType,
    Provenance,
    Relation,
)


def capture_digest(text: str) -> str:
    """The digest `Inspection.captured_texts` holds for a text (its case- and space-folded content hash)."""
    return content_hash(text)


@dataclass(frozen=True)
class MemoryDetail:
    """A memory with everything known about it, for `show`."""

    memory: Memory
    edges: tuple[Edge, ...]
    provenance: tuple[Provenance, ...]
    audit: tuple[AuditEntry, ...]
    entities: tuple[Entity, ...]
    quarantine: str | None = None  # why the screen holds it back, if it does
    # the questions it is found by (curation/questions.py), who wrote each
    questions: tuple[MemoryQuestion, ...] = ()


class Inspection:
    """Read-only views of one engine's store; every memory asked for by id must lie in the given scopes."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def location(self) -> str:
        """Where the memory lives, safe to print (a file's path, or a server address without its password)."""
        return self._store.location

    @property
    def read_only(self) -> bool:
        """The store was opened read-only: recall works, nothing new is stored."""
        return self._store.readonly

    @property
    def read_only_reason(self) -> str | None:
        """Why the store cannot be written (its file, folder or file system), or None when it can."""
        return self._store.readonly_reason

    # -- one memory -----------------------------------------------------------------------------------------
    def show(self, memory_id: int, *, scopes: Sequence[str]) -> MemoryDetail:
        store = self._store
        memory = store.memories.require(memory_id, scopes)
        entity_ids = store.graph.entities_of_memories([memory.id]).get(memory.id, [])
        return MemoryDetail(
            memory=memory,
            edges=tuple(store.graph.edges_of([memory.id])),
            provenance=tuple(store.provenance.of([memory.id])[memory.id]),
            audit=tuple(store.audit.of_memory(memory.id)),
            entities=tuple(store.graph.get_entities(entity_ids).values()),
            quarantine=store.quarantine.reasons(ItemKind.MEMORY, [memory.id]).get(memory.id),
            questions=tuple(store.questions.of([memory.id]).get(memory.id, ())),
        )

    def versions(self, memory_id: int, *, scopes: Sequence[str], limit: int = 50) -> list[Memory]:
        """The supersession chain through `memory_id`, oldest version first."""
        memories = self._store.memories
        chain = [memories.require(memory_id, scopes)]
        while len(chain) < limit:
            older = [
                e.dst_id
                for e in self._store.graph.edges_of([chain[0].id])
                if e.relation is Relation.UPDATES and e.src_id == chain[0].id
            ]
            found = memories.get(older[0]) if older else None
            if found is None or found.id in {m.id for m in chain}:
                break
            chain.insert(0, found)
        while chain[-1].superseded_by is not None and len(chain) < limit:
            newer = memories.get(chain[-1].superseded_by)
            if newer is None or newer.id in {m.id for m in chain}:
                break
            chain.append(newer)
        return chain

    def source_turns(
        self, memory_id: int, *, scopes: Sequence[str], limit: int = 20
    ) -> list[Episode]:
        """The verbatim turns a memory came from, as far as they are still kept."""
        memory = self._store.memories.require(memory_id, scopes)
        wanted = self._store.provenance.of([memory.id])[memory.id][:limit]
        turns: list[Episode] = []
        for session_id in dict.fromkeys(p.session_id for p in wanted):
            indexes = {p.turn_index for p in wanted if p.session_id == session_id}
            turns += [
                e
                for e in self._store.episodes.find([memory.scope], session_id=session_id)
                if e.turn_index in indexes
            ]
        return turns

    # -- listings -------------------------------------------------------------------------------------------
    def scopes(self) -> dict[str, int]:
        """Every scope in this file with its count of live memories."""
        return self._store.memories.scopes()

    def user_platforms(self, user_id: str) -> tuple[str, ...]:
        """The platforms on which this raw user id has memories, episodes or turns waiting for curation;
        scopes.NO_PLATFORM stands for its keys without a platform (an older store's readable-only key too, which
        every platform's reader sees as well, so that key alone is never a choice of its own)."""
        store = self._store
        keys = {*store.memories.scopes(), *store.episodes.scopes(), *store.journal.waiting_scopes()}
        held = scopes.platforms_holding(user_id, keys)
        if not held and scopes.legacy_user_scope(user_id) in keys:
            return (scopes.NO_PLATFORM,)
        return held

    def list_memories(
        self,
        scopes: Sequence[str],
        *,
        types: Sequence[MemoryType] = (),
        current_only: bool = True,
        include_forgotten: bool = False,
        limit: int | None = 200,
        order: str = "recent",
    ) -> list[Memory]:
        """Newest first unless `order` says oldest or importance; `current_only` hides superseded and expired."""
        return self._store.memories.find(
            scopes,
            MemoryFilter(
                types=types,
                current_only=current_only,
                include_forgotten=include_forgotten,
                limit=limit,
                order=order,
            ),
        )

    def memories(self, ids: Iterable[int]) -> dict[int, Memory]:
        """These memories by id (any scope: the ids come from the caller's own earlier results)."""
        return self._store.memories.get_many(ids)

    def containing(self, scope: str, text: str, limit: int = 5) -> list[Memory]:
        """Current memories of `scope` whose content holds `text` verbatim, newest first."""
        return self._store.memories.find_containing(scope, text, limit)

    def seen_before(self, scope: str, text: str) -> bool:
        """Whether `scope` ever held this content (forgotten memories count: forgetting survives a re-import)."""
        return self._store.memories.find_by_hash(scope, text, include_forgotten=True) is not None

    def quarantined(self, scopes: Sequence[str]) -> list[tuple[Memory, str]]:
        """Held-back memories of these scopes with the reason, newest first."""
        held = self._store.quarantine.reasons(ItemKind.MEMORY)
        memories = self._store.memories.get_many(held)
        return sorted(
            ((m, held[m.id]) for m in memories.values() if m.scope in scopes),
            key=lambda pair: -pair[0].created_at,
        )

    def prompt_safe(self, scopes: Sequence[str]) -> list[Memory]:
        """Current memories not held back by the screen, most important first (what may reach a host file)."""
        held = self._store.quarantine.reasons(ItemKind.MEMORY)
        return [
            m
            for m in self._store.memories.find(
                scopes, MemoryFilter(current_only=True, order="importance")
            )
            if m.id not in held
        ]

    def counts(self, scopes: Sequence[str] | None = None) -> dict[str, int]:
        """Live memories by type."""
        return self._store.memories.count_by_type(scopes)

    def vector_counts(self) -> dict[tuple[str, str, int], int]:
        """Stored vectors by (kind, model, dimension)."""
        return self._store.vectors.model_counts()

    def journal_backlog(self) -> int:
        """Captured turns still waiting for curation."""
        return int(self._store.journal.counts().get("pending", 0))

    # -- sessions and bulletins -----------------------------------------------------------------------------
    def session_episodes(self, scopes: Sequence[str], session_id: str) -> list[Episode]:
        return self._store.episodes.find(scopes, session_id=session_id)

    def episodes(self, ids: Iterable[int]) -> dict[int, Episode]:
        """These episodes by id (any scope: the ids come from the caller's own earlier results)."""
        return self._store.episodes.get_many(ids)

    def memories_from_episodes(self, episode_ids: Sequence[int]) -> dict[int, list[int]]:
        """Episode id -> ids of live memories extracted from that episode's turn."""
        return self._store.provenance.memories_from_episodes(episode_ids)

    def captured_texts(self, session_id: str) -> set[str]:
        """Content hashes of the user and assistant texts already journaled for a session."""
        return self._store.journal.texts(session_id)

    def next_turn_index(self, session_id: str) -> int:
        return self._store.journal.next_turn_index(session_id)

    def latest_bulletin(self, scope: str) -> Bulletin | None:
        return self._store.bulletins.latest(scope)

    @staticmethod
    def bulletin_changes(old: Bulletin, new: Bulletin) -> str:
        """The one-time "what changed" note between two bulletins of a scope."""
        return changes_since(old, new)

    def export_records(self, scopes: Sequence[str]) -> Iterator[dict[str, Any]]:
        """Memories (forgotten and superseded ones too, flagged), then edges among them, then verbatim episodes."""
        store = self._store
        memories = store.memories.find(scopes, MemoryFilter(include_forgotten=True, order="oldest"))
        ids = [m.id for m in memories]
        provenance = store.provenance.of(ids)
        entity_ids = store.graph.entities_of_memories(ids)
        entities = store.graph.get_entities({e for values in entity_ids.values() for e in values})
        for memory in memories:
            names = [entities[e].name for e in entity_ids.get(memory.id, []) if e in entities]
            yield exporter.memory_record(memory, provenance.get(memory.id, []), names)
        inside = set(ids)
        for edge in sorted(store.graph.edges_of(ids), key=lambda e: e.id):
            if edge.src_id in inside and edge.dst_id in inside:
                yield exporter.edge_record(edge)
        for episode in store.episodes.find(scopes):
            yield exporter.episode_record(episode)
