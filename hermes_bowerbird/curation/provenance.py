"""Where a memory's words came from (the user, the assistant, a tool's output, an explicit write) and its weight.

What the user said is the ground truth about the user. The assistant's text carries web pages and tool output it
read, so a memory taken only from it (or from a tool's result) is stored with less importance and confidence; it
reaches the user's weight once the user states the same thing, and it never replaces what the user said.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..text import stem_words
from ..types import Candidate

ORIGIN_KEY = "origin"  # the metadata key of a memory's origin
USER = "user"
ASSISTANT = "assistant"
TOOL = "tool"
EXPLICIT = "explicit"  # remember/update tools, imports, the host's built-in memory mirror
# journal platform of a subagent's task (the agent's words) and result (a tool's)
DELEGATION_PREFIX = "delegation"

# importance multiplier and confidence ceiling per origin; stronger origins first
_WEIGHT = {USER: 1.0, EXPLICIT: 1.0, ASSISTANT: 0.6, TOOL: 0.5}
_CONFIDENCE_CAP = {USER: 1.0, EXPLICIT: 1.0, ASSISTANT: 0.6, TOOL: 0.5}
_RANK = {TOOL: 0, ASSISTANT: 1, USER: 2, EXPLICIT: 2}
_STOP_WORDS = (
    "the and for are was were has have had that this with from they them their there user users "
    "you your yours its not but can will would should about into than then also just"
)
_STOP = frozenset(_STOP_WORDS.split())


def column_origin(role: str, platform: str = "") -> str:
    """The origin of text in a journal column ("user" or "assistant"); a delegation row's task is the agent's
    words and its result a tool's output."""
    if platform.startswith(DELEGATION_PREFIX):
        return ASSISTANT if role == "user" else TOOL
    return USER if role == "user" else ASSISTANT


def model_origin(content: str, user_text: str, assistant_text: str) -> str:
    """The origin of a memory a model wrote from a turn: the assistant's (or a tool's) only when more of its words
    are found in that text than in the user's; "" when the texts share none of its words."""
    words = _stems(content)
    in_user = len(words & _stems(user_text))
    in_assistant = len(words & _stems(assistant_text))
    if not words or in_user == in_assistant == 0:
        return ""
    return ASSISTANT if in_assistant > in_user else USER


def _stems(text: str) -> set[str]:
    """Content words cut to four letters, so "lives" meets "live" and "moved" meets "move"."""
    return {w[:4] for w in stem_words(text.lower()) if w not in _STOP}


def weigh(candidate: Candidate, origin: str) -> Candidate:
    """The candidate with its origin recorded and its importance and confidence lowered for a weak origin."""
    weight = _WEIGHT.get(origin, 1.0)
    return replace(
        candidate,
        origin=origin,
        importance=round(candidate.importance * weight, 4),
        confidence=min(candidate.confidence, _CONFIDENCE_CAP.get(origin, 1.0)),
    )


def origin_of(metadata: Mapping[str, object]) -> str:
    """A stored memory's origin; memories written before origins were recorded count as the user's."""
    origin = str(metadata.get(ORIGIN_KEY, "") or "")
    if origin in _RANK:
        return origin
    return ASSISTANT if metadata.get("role") == "assistant" else USER


def weaker(origin: str, than: str) -> bool:
    """True when `origin` weighs less than `than` (assistant or tool text against the user's own words)."""
    return _RANK.get(origin, _RANK[USER]) < _RANK.get(than, _RANK[USER])


def promoted_confidence(current: float, candidate: Candidate) -> float:
    """The confidence a weak-origin memory gets when a stronger source states it again."""
    return max(current, candidate.confidence)
