"""Leaf module: the enums, value dataclasses and protocols shared by every layer."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

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


MarkdownTarget = Literal["user", "memory"]
"""The host file a memory type is exported to: "user" is USER.md, "memory" is MEMORY.md."""


@dataclass(frozen=True)
class BulletinSection:
    """A headed section of the deterministic bulletin; types that share one share the same value."""

    title: str
    order: int  # sections appear in ascending order (a tie keeps table order)
    limit: int  # at most this many items
    by_recency: bool = False  # newest first (else by effective importance)
    max_age_days: float | None = None


@dataclass(frozen=True)
class TypeSpec:
    """Everything the modules need to know about one memory type; no field has a default, so a new type cannot
    silently miss one (a missing argument is a TypeError at import)."""

    name: MemoryType
    # what memories of this type hold, for the extraction prompt and tool descriptions
    description: str
    importance: float  # default importance of a new memory of this type
    # x config.weights.decay_half_life_days, for types not exempt from decay
    half_life_factor: float
    bulletin: BulletinSection | None  # where the bulletin shows it (None: never)
    markdown: MarkdownTarget | None  # which host file an export writes it to (None: neither)
    markdown_rank: int  # export order within its file (ascending)
    query_hints: str  # regex (case-insensitive) of query words that ask for this type ("" = none)
    extractable: bool  # offered to a model in the extraction prompt and accepted from its reply
    from_assistant: bool  # heuristic extraction keeps it from the assistant's own conclusions


_FACTS = BulletinSection("Important facts", 5, 8)
_OBSERVATIONS = BulletinSection("Observations", 7, 4)

# The one table per memory type. A new type is one entry here and one member of MemoryType above (checked
# below); the schema names no types (the store refuses a type this table lacks, store/memories.py).
_BUILTIN_SPECS: tuple[TypeSpec, ...] = (
    TypeSpec(
        MemoryType.IDENTITY,
        "who the user is",
        1.0,
        4.0,
        BulletinSection("Identity", 0, 6),
        "user",
        0,
        r"\b(who am i|my name|about me|who i am|where do i live|my (job|age|family|background))\b",
        extractable=True,
        from_assistant=False,
    ),
    TypeSpec(
        MemoryType.GOAL,
        "goals",
        0.9,
        2.0,
        BulletinSection("Active goals", 1, 5),
        "user",
        2,
        r"\b(goals?|aims?|objectives?|plans? to|trying to|want to)\b",
        extractable=True,
        from_assistant=False,
    ),
    TypeSpec(
        MemoryType.DECISION,
        "decisions",
        0.8,
        2.0,
        BulletinSection("Recent decisions", 2, 5, by_recency=True),
        "memory",
        3,
        r"\b(decid\w*|decision\w*|agreed|settled on|chose|chosen|went with)\b",
        extractable=True,
        from_assistant=True,
    ),
    TypeSpec(
        MemoryType.TODO,
        "plans and todos",
        0.8,
        1.0,
        BulletinSection("Open todos", 3, 6, by_recency=True),
        "memory",
        5,
        r"\b(to-?dos?|remind\w*|tasks?|need to|have to|follow[- ]?up|pending|deadline\w*)\b",
        extractable=True,
        from_assistant=True,
    ),
    TypeSpec(
        MemoryType.PROCEDURE,
        "procedures",
        0.75,
        3.0,
        _FACTS,
        "memory",
        4,
        r"\b(how (do|did|should|can) (i|we)|how to|steps?|procedure\w*|process|workflow|recipe)\b",
        extractable=True,
        from_assistant=True,
    ),
    TypeSpec(
        MemoryType.PREFERENCE,
        "preferences",
        0.7,
        3.0,
        BulletinSection("Preferences", 4, 6),
        "user",
        1,
        r"\b(prefer\w*|favou?rite\w*|likes?|dislikes?|hates?|loves?|enjoys?)\b",
        extractable=True,
        from_assistant=True,
    ),
    TypeSpec(
        MemoryType.FACT,
        "facts about their life, work and projects",
        0.6,
        2.0,
        _FACTS,
        "memory",
        6,
        "",
        extractable=True,
        from_assistant=True,
    ),
    TypeSpec(
        MemoryType.PATTERN,
        "habits and recurring patterns",
        0.6,
        2.0,
        _OBSERVATIONS,
        "memory",
        7,
        r"\b(usually|tend to|habits?|patterns?|always|often)\b",
        extractable=True,
        from_assistant=False,
    ),
    TypeSpec(
        MemoryType.EVENT,
        "notable events",
        0.4,
        0.5,
        BulletinSection("Recent events", 6, 5, by_recency=True, max_age_days=30.0),
        "memory",
        8,
        r"\b(happened|events?|meeting|when did)\b",
        extractable=True,
        from_assistant=False,
    ),
    TypeSpec(
        MemoryType.OBSERVATION,
        "passing observations",
        0.3,
        0.5,
        _OBSERVATIONS,
        "memory",
        9,
        "",
        extractable=True,
        from_assistant=False,
    ),
)

MEMORY_TYPES: dict[str, TypeSpec] = {str(spec.name): spec for spec in _BUILTIN_SPECS}
"""The registry every module reads (in this order): name -> spec."""

if list(MEMORY_TYPES) != [str(t) for t in MemoryType]:
    raise ImportError(
        "MemoryType and the TypeSpec table must list the same types in the same order"
    )


def type_specs() -> tuple[TypeSpec, ...]:
    """Every memory type's spec, in table order."""
    return tuple(MEMORY_TYPES.values())


def type_names() -> tuple[str, ...]:
    """Every memory type's name, in table order (CLI choices, tool and prompt enums)."""
    return tuple(MEMORY_TYPES)


def type_spec(name: str) -> TypeSpec:
    """The spec of memory type `name`; ValueError naming the known types when there is none."""
    spec = MEMORY_TYPES.get(name)
    if spec is None:
        raise ValueError(f"unknown memory type {name!r}; use one of {', '.join(MEMORY_TYPES)}")
    return spec


def memory_type(value: object) -> MemoryType:
    """The memory type `value` names (case and surrounding space ignored); ValueError when it names none."""
    return type_spec(str(value).strip().lower()).name


class _DefaultImportance(Mapping[MemoryType, float]):
    """The table's default importances as a read-only mapping (read live, so a registered type is in it)."""

    def __getitem__(self, key: MemoryType) -> float:
        return MEMORY_TYPES[key].importance

    def __iter__(self) -> Iterator[MemoryType]:
        return iter(spec.name for spec in MEMORY_TYPES.values())

    def __len__(self) -> int:
        return len(MEMORY_TYPES)


DEFAULT_IMPORTANCE: Mapping[MemoryType, float] = _DefaultImportance()


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
    QUESTION = "question"  # a question that gets a memory back (store/questions.py); its hits point at the memory


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
        return self.importance if self.importance is not None else type_spec(self.type).importance


class QuestionOrigin(StrEnum):
    """Who wrote a memory's question: the language model, or the rules of curation/questions.py."""

    MODEL = "model"
    RULES = "rules"


@dataclass(frozen=True)
class MemoryQuestion:
    """A question a user would ask to get a memory back, in the user's voice ("who do I report to?")."""

    id: int
    memory_id: int
    text: str
    origin: QuestionOrigin
    created_at: float


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


@dataclass(frozen=True)
class VectorModel:
    """An embedding model's name and dimension: vectors are only ever compared with vectors of the same one."""

    name: str
    dim: int

    def __str__(self) -> str:
        return f"{self.name} ({self.dim} dimensions)"


@runtime_checkable
class LLM(Protocol):
    """A text-completion model used for extraction, consolidation and the bulletin."""

    @property
    def name(self) -> str: ...

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 1024,
        json_mode: bool = False,
        timeout: float = 30.0,
    ) -> str: ...


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
    # the questions a user would ask to get it back, when a model wrote them (else curation/questions.py writes them)
    questions: tuple[str, ...] = ()
    # kept only when it closes an open item or changes a value: "Flights are booked!" is worth a memory only after
    # "I need to book flights" (curation/completion.py), "The standup moved to 10am" after "Our standup is at 9:30"
    # (curation/changes.py)
    closing_only: bool = False


@dataclass(frozen=True)
class TurnCapture:
    """One finished exchange to journal; `turn_index` is the caller's guess (the journal settles it)."""

    user: str
    assistant: str
    scope: str
    session_id: str
    platform: str = ""
    turn_index: int | None = None
    source: Source = Source.TURN
    created_at: float | None = None


@dataclass(frozen=True)
class NewEpisode:
    """A verbatim chunk of a turn about to be stored: everything but the database-assigned id."""

    scope: str
    session_id: str
    turn_index: int
    chunk_index: int
    role: str
    content: str
    created_at: float | None = None  # None means now
    journal_id: int | None = None


@dataclass(frozen=True)
class MemoryFilter:
    """Which memories a listing returns, in what order: every type when `types` is empty; `current_only` hides
    superseded and expired ones; `since` and `until` bound the creation time; `order` is recent (newest first),
    oldest or importance; `after_id` pages on past an id; `limit` None means all."""

    types: Sequence[MemoryType] = ()
    include_forgotten: bool = False
    current_only: bool = False
    since: float | None = None
    until: float | None = None
    order: str = "recent"
    limit: int | None = None
    after_id: int = 0
