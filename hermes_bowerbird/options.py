"""The small request objects the engine's entry points take: a turn to capture, how to remember, how to recall."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .types import MemoryType, Source, TurnCapture

# TurnCapture is defined with the stored values, since the journal takes it as it is
__all__ = [
    "RECALL_DEFAULTS",
    "REMEMBER_DEFAULTS",
    "RecallOptions",
    "RememberOptions",
    "TurnCapture",
]


@dataclass(frozen=True)
class RememberOptions:
    """How to store an explicit memory: its type (guessed from the text when None), importance (0-1, the
    type's default when None), tags, where it came from and who asked."""

    type: MemoryType | None = None
    importance: float | None = None
    tags: Sequence[str] = ()
    source: Source = Source.TOOL
    session_id: str | None = None
    actor: str = "tool"


@dataclass(frozen=True)
class RecallOptions:
    """How to search: `limit` None is the configured recall_limit; `exclude` holds item keys the caller already
    has; `touch=False` leaves access counts alone (a person looking is not the agent using them); `inject` chooses
    what prefetch injects unasked (see `RecallRequest`)."""

    limit: int | None = None
    types: Sequence[MemoryType] = ()
    since: float | None = None
    until: float | None = None
    budget_tokens: int | None = None
    explain: bool = False
    exclude: Collection[tuple[str, int]] = ()
    include_episodes: bool = True
    min_relevance: float = 0.0
    touch: bool = True
    inject: bool = False


REMEMBER_DEFAULTS = RememberOptions()
RECALL_DEFAULTS = RecallOptions()
