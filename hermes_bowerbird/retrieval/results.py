"""The values a search takes and returns: RecallRequest, Hit, item keys and the JSON view of a hit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..types import ItemKind, MemoryType, Provenance

ItemKey = tuple[str, int]


def item_key(kind: ItemKind, item_id: int) -> ItemKey:
    """The key of an item as exclude_ids holds it: ("memory", 12) or ("episode", 34)."""
    return str(kind), int(item_id)


@dataclass(frozen=True)
class RecallRequest:
    """One search. `budget_tokens` None means no budget; `exclude_ids` holds item keys (see item_key) of
    items the caller already has (a session's earlier prefetches): they are never returned again.

    `min_relevance` (0 = off) drops items whose gate relevance (retrieval/gate.py: their cosine read against
    the query's similarity to this store, and the idf-weighted share of the query's keywords they hold) is
    below it. Config `prefetch_gate` is the value for automatic injection, where returning nothing beats
    returning something unrelated.

    `inject` asks for what is injected unasked (prefetch, with the gate on): a past message that only asks is left
    out, and so is a turn with a memory taken from it that answers the query and is held (`exclude_ids`) or
    returned; hits come best answer first and stop where the next adds nothing (retrieval/injection.py)."""

    query: str
    scopes: tuple[str, ...]
    limit: int = 8
    types: tuple[MemoryType, ...] = ()
    since: float | None = None
    until: float | None = None
    budget_tokens: int | None = None
    explain: bool = False
    include_episodes: bool = True
    exclude_ids: frozenset[ItemKey] = frozenset()
    min_relevance: float = 0.0
    inject: bool = False


@dataclass(frozen=True)
class Hit:
    """One search result; `signals` maps each signal that found it (and the rescoring steps) to its score."""

    kind: ItemKind
    id: int
    type: MemoryType | None
    content: str
    score: float
    created_at: float
    provenance: tuple[Provenance, ...] = ()
    signals: Mapping[str, float] = field(default_factory=dict)
    superseded: bool = (
        False  # a memory replaced since, or a turn that stated only facts replaced since
    )
    truncated: bool = False
    # later memories given with this one that change part of what it says ("Ana started at PwC" for "My wife Ana
    # works at Deloitte"): it still holds in part, so it is not superseded
    amended_by: tuple[int, ...] = ()
    # what is never given without this hit (its successors and amendments): a budget that cannot fit one of them
    # leaves this one out too (budget.fit_to_budget)
    carries: tuple[ItemKey, ...] = ()

    @property
    def key(self) -> ItemKey:
        return item_key(self.kind, self.id)

    @property
    def label(self) -> str:
        """ "preference #12" for a memory, "episode #e34" for a verbatim turn."""
        if self.kind is ItemKind.MEMORY:
            return f"{self.type} #{self.id}"
        return f"episode #e{self.id}"


def iso_date(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")
