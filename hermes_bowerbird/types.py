"""Leaf module: the enums, value dataclasses and protocols shared by every layer."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float32]

Clock = Callable[[], float]
"""Returns the current time as Unix epoch seconds; injectable for tests."""


class MemoryType(StrEnum):
    IDENTITY = "identity"
    GOAL = "goal"
    DECISION = "decision"
    TODO = "todo"
    PROCEDURE = "procedure"
    PREFERENCE = "preference"
    FACT = "fact"
    PATTERN = "pattern"
    EVENT = "event"
    OBSERVATION = "observation"


DEFAULT_IMPORTANCE: Mapping[MemoryType, float] = {
    MemoryType.IDENTITY: 1.0,
    MemoryType.GOAL: 0.9,
    MemoryType.DECISION: 0.8,
    MemoryType.TODO: 0.8,
    MemoryType.PROCEDURE: 0.75,
    MemoryType.PREFERENCE: 0.7,
    MemoryType.FACT: 0.6,
    MemoryType.PATTERN: 0.6,
    MemoryType.EVENT: 0.4,
    MemoryType.OBSERVATION: 0.3,
}


class Relation(StrEnum):
    UPDATES = "updates"
    CAUSED_BY = "caused_by"
    RESULT_OF = "result_of"
    RELATED_TO = "related_to"
    PART_OF = "part_of"
    CONTRADICTS = "contradicts"


EDGE_MULTIPLIER: Mapping[Relation, float] = {
    Relation.UPDATES: 1.5,
    Relation.CAUSED_BY: 1.3,
    Relation.RESULT_OF: 1.3,
    Relation.RELATED_TO: 1.0,
    Relation.PART_OF: 0.8,
    Relation.CONTRADICTS: 0.5,
}


class Source(StrEnum):
    """Where a memory came from."""

    TURN = "turn"
    COMPACTION = "compaction"
    TOOL = "tool"
    IMPORT = "import"
    MIRROR = "mirror"


class JournalStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class AuditAction(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    FORGET = "forget"
    RESTORE = "restore"
    PURGE = "purge"
    RELATE = "relate"
    CONSOLIDATE = "consolidate"
    QUARANTINE = "quarantine"
    RELEASE = "release"


class ItemKind(StrEnum):
    """What a vector or a search hit points at."""

    MEMORY = "memory"
    EPISODE = "episode"


@dataclass(frozen=True)
class Provenance:
    """The session a turn was captured in and its 0-based index in capture order."""

    session_id: str
    turn_index: int


@dataclass(frozen=True)
class Memory:
    id: int
    scope: str
    type: MemoryType
    content: str
    importance: float
    confidence: float
    created_at: float
    updated_at: float
    source: Source
    summary: str | None = None
    subject: str | None = None
    access_count: int = 0
    accessed_at: float | None = None
    valid_from: float | None = None
    valid_until: float | None = None
    superseded_by: int | None = None
    forgotten: bool = False
    session_id: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, object] = field(default_factory=dict)

    def is_current(self, now: float) -> bool:
        """True while the memory is neither forgotten, superseded nor expired."""
        if self.forgotten or self.superseded_by is not None:
            return False
        return self.valid_until is None or self.valid_until > now


@dataclass(frozen=True)
class NewMemory:
    """A memory about to be stored: everything but the database-assigned fields."""

    scope: str
    type: MemoryType
    content: str
    source: Source
    importance: float | None = None
    confidence: float = 1.0
    summary: str | None = None
    subject: str | None = None
    session_id: str | None = None
    valid_from: float | None = None
    created_at: float | None = None  # when it was said (a captured turn's time); None means now
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, object] = field(default_factory=dict)
    provenance: tuple[Provenance, ...] = ()

    @property
    def effective_importance(self) -> float:
        return self.importance if self.importance is not None else DEFAULT_IMPORTANCE[self.type]


@dataclass(frozen=True)
class Episode:
    id: int
    scope: str
    session_id: str
    turn_index: int
    chunk_index: int
    role: str
    content: str
    created_at: float
    journal_id: int | None = None


@dataclass(frozen=True)
class Entity:
    id: int
    scope: str
    name: str
    kind: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Edge:
    id: int
    src_id: int
    dst_id: int
    relation: Relation
    weight: float
    created_at: float


@dataclass(frozen=True)
class JournalEntry:
    id: int
    scope: str
    session_id: str
    turn_index: int
    platform: str
    user_content: str
    assistant_content: str
    created_at: float
    status: JournalStatus
    source: Source = Source.TURN
    attempts: int = 0


@dataclass(frozen=True)
class AuditEntry:
    id: int
    memory_id: int | None
    action: AuditAction
    reason: str
    actor: str
    created_at: float
    details: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Bulletin:
    id: int
    scope: str
    text: str
    hash: str
    state_hash: str
    generator: str
    created_at: float


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    @property
    def is_local(self) -> bool: ...

    def embed(self, text: str) -> FloatArray: ...

    def embed_batch(self, texts: Sequence[str]) -> FloatArray: ...


@runtime_checkable
class LLM(Protocol):
    """A text-completion model used for extraction, consolidation and the bulletin."""

    @property
    def name(self) -> str: ...

    def complete(self, prompt: str, *, system: str | None = None, max_tokens: int = 1024,
                 json_mode: bool = False, timeout: float = 30.0) -> str: ...


@dataclass(frozen=True)
class Candidate:
    """A memory proposed by extraction, before dedup/merge decides its fate.

    `subject` is a normalised key such as "user:residence" or "project:deploy-tool": two current memories of one
    scope with the same subject and different content mean the newer one supersedes the older.
    """

    type: MemoryType
    content: str
    importance: float
    confidence: float = 0.7
    subject: str | None = None
    entities: tuple[str, ...] = ()
    role: str = "user"
    origin: str = ""  # who said it: user, assistant, tool or explicit ("" until curation weighs it)
    supersedes: int | None = None  # an existing memory id this candidate replaces (LLM decisions)
    relations: tuple[tuple[Relation, int], ...] = ()  # (relation, existing memory id)
