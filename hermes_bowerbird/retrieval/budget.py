"""Token budget and compact text: fit hits into a budget (best hits get more room) and render one line each.

Tokens are counted cheaply (`text.estimate_tokens`, ceil(characters / 4)); it over-counts slightly for plain
prose, so a budget is rarely exceeded in real tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..curation.screen import inert
from ..text import CHARS_PER_TOKEN, estimate_tokens
from .results import Hit, ItemKey, iso_date

# a hit that cannot get this much room is dropped rather than shown as a stub
MIN_CONTENT_TOKENS = 12
ELLIPSIS = "…"
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def hit_prefix(hit: Hit) -> str:
    """`- [fact #12, 2026-03-04] `; `- [fact #3, 2025-01-10, superseded] ` for what was replaced since, and
    `- [fact #3, 2025-01-10, amended by #9] ` for what a later memory given with it changes in part."""
    state = ", superseded" if hit.superseded else ""
    if hit.amended_by:
        state += ", amended by " + ", ".join(f"#{i}" for i in hit.amended_by)
    return f"- [{hit.label}, {iso_date(hit.created_at)}{state}] "


def hit_line(hit: Hit) -> str:
    """`- [preference #12, 2026-03-04] Never deploys on Fridays` (content on one line, rendered inert)."""
    return hit_prefix(hit) + " ".join(inert(hit.content).split())


def truncate_text(text: str, max_chars: int) -> tuple[str, bool]:
    """Whole sentences that fit in `max_chars`; if not even the first fits, cut it at a word boundary."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text, False
    kept = ""
    for sentence in _SENTENCE_END.split(text):
        candidate = f"{kept} {sentence}" if kept else sentence
        if len(candidate) > max_chars:
            break
        kept = candidate
    if kept:
        return kept, True
    cut = text[: max(0, max_chars - len(ELLIPSIS))]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-") + ELLIPSIS, True


def fit_to_budget(hits: Sequence[Hit], budget_tokens: int | None) -> list[Hit]:
    """Hits (in ranked order) cut to the budget; each gets a share of what is left in proportion to its score."""
    if budget_tokens is None:
        return list(hits)
    ordered = list(hits)
    remaining = float(budget_tokens)
    out: list[Hit] = []
    for position, hit in enumerate(ordered):
        overhead = estimate_tokens(hit_prefix(hit)) + 1  # +1 for the line break
        if remaining < overhead + MIN_CONTENT_TOKENS:
            break
        rest = sum(max(h.score, 1e-9) for h in ordered[position:])
        share = max(MIN_CONTENT_TOKENS, remaining * max(hit.score, 1e-9) / rest - overhead)
        share = min(share, remaining - overhead)
        content, cut = truncate_text(hit.content, int(share * CHARS_PER_TOKEN))
        if not content.strip(ELLIPSIS + " "):
            continue
        fitted = replace(hit, content=content, truncated=hit.truncated or cut)
        out.append(fitted)
        remaining -= estimate_tokens(hit_line(fitted)) + 1
    return _whole(out, {h.key for h in ordered})


def _whole(fitted: list[Hit], given: set[ItemKey]) -> list[Hit]:
    """The fitted hits less any whose successor or amendment was given to fit but did not: an old value is never
    shown without what says it changed (what was not given at all, as already shown this session, is no matter)."""
    kept = list(fitted)
    while True:
        keys = {h.key for h in kept}
        whole = [h for h in kept if all(k in keys or k not in given for k in h.carries)]
        if len(whole) == len(kept):
            return whole
        kept = whole


def format_hits(hits: Sequence[Hit], budget_tokens: int | None = None) -> str:
    """Compact text for a prompt: one line per hit, best first, within the budget (None = no budget)."""
    return hit_lines(fit_to_budget(hits, budget_tokens))


def hit_lines(fitted: Sequence[Hit]) -> str:
    """Hits already fitted to a budget, one line each."""
    return "\n".join(hit_line(h) for h in fitted)
