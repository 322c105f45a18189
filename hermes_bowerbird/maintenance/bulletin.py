"""The memory bulletin: who the user is and what is going on, rebuilt when memory changed (a model briefing hourly)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..config import Config
from ..store import Store
from ..text import word_count
from ..timestamps import DAY
from ..types import (
    LLM,
    Bulletin,
    BulletinSection,
    Clock,
    ItemKind,
    Memory,
    MemoryFilter,
    MemoryType,
    type_specs,
)
from .decay import effective_importance

log = logging.getLogger(__name__)

LLM_HARD_CAP_WORDS = 1_500
ITEM_MAX_WORDS = 40
CHANGE_LINES = 4
DETERMINISTIC = "deterministic"
MODEL_PREFIX = "llm:"  # generator of a model-written briefing: "llm:<model name>"
_SPACE = re.compile(r"\s+")
_SYSTEM = (
    "You write the memory bulletin a personal assistant reads at the start of a conversation. Use only the "
    "notes given; never invent facts. Be concise and concrete; plain text with short headed sections."
)


@dataclass(frozen=True)
class Section:
    title: str
    types: tuple[MemoryType, ...]
    limit: int
    by_recency: bool = False  # newest first (else by effective importance)
    max_age_days: float | None = None


def sections() -> tuple[Section, ...]:
    """The bulletin's sections in order, each with the memory types whose `TypeSpec.bulletin` names it."""
    grouped: dict[BulletinSection, list[MemoryType]] = {}
    for spec in type_specs():
        if spec.bulletin is not None:
            grouped.setdefault(spec.bulletin, []).append(spec.name)
    ordered = sorted(grouped.items(), key=lambda item: item[0].order)
    return tuple(
        Section(s.title, tuple(types), s.limit, s.by_recency, s.max_age_days)
        for s, types in ordered
    )


def clip_words(text: str, limit: int) -> str:
    """At most `limit` words, cut at the last sentence end inside the limit when there is one."""
    words = text.split(" ")
    if word_count(text) <= limit:
        return text
    kept, count = [], 0
    for word in words:
        count += 1 if word.strip() else 0
        if count > limit:
            break
        kept.append(word)
    clipped = " ".join(kept).rstrip()
    end = max(clipped.rfind(". "), clipped.rfind(".\n"), clipped.rfind("\n"))
    return clipped[: end + 1].rstrip() if end > len(clipped) // 2 else clipped + " ..."


def _item_text(memory: Memory) -> str:
    text = _SPACE.sub(" ", (memory.summary or memory.content)).strip()
    words = text.split(" ")
    return text if len(words) <= ITEM_MAX_WORDS else " ".join(words[:ITEM_MAX_WORDS]) + " ..."


class BulletinBuilder:
    """Builds, stores and serves bulletins per scope; an idle store costs one hash query per request."""

    def __init__(self, store: Store, config: Config, clock: Clock, llm: LLM | None = None) -> None:
        self.store = store
        self.config = config
        self.clock = clock
        self.llm = llm
        self._lock = threading.Lock()

    # -- serving ----------------------------------------------------------------------------------------------
    def current(
        self,
        scope: str,
        visible_scopes: Sequence[str],
        force: bool = False,
        *,
        synthesise: bool = True,
    ) -> Bulletin | None:
        """The latest bulletin of `scope`, first rebuilt when memory changed since it was built.

        The deterministic bulletin costs a few queries, so it is rebuilt at once: a session opens with memory as it
        is. A model-written briefing is asked for only with `synthesise`, when the latest bulletin is not one of the
        current memory, and at most once per interval; a failed one falls back to the
        deterministic text. `force` rebuilds now (with the model when `synthesise`).
        """
        visible = list(dict.fromkeys(visible_scopes))
        with self._lock:
            latest = self.store.bulletins.latest(scope)
            state = self.store.memories.state_hash(visible)
            now = self.clock()
            if force or (synthesise and self._briefing_due(scope, latest, state, now)):
                return self._build(scope, visible, latest, state, now, synthesise=synthesise)
            if latest is None or latest.state_hash != state:
                return self._build(scope, visible, latest, state, now, synthesise=False)
            return latest

    def stale(self, scope: str, visible_scopes: Sequence[str]) -> bool:
        """Whether `current` would build a new bulletin now."""
        visible = list(dict.fromkeys(visible_scopes))
        latest = self.store.bulletins.latest(scope)
        state = self.store.memories.state_hash(visible)
        return (
            latest is None
            or latest.state_hash != state
            or self._briefing_due(scope, latest, state, self.clock())
        )

    def _briefing_due(self, scope: str, latest: Bulletin | None, state: str, now: float) -> bool:
        if self.llm is None:
            return False
        if latest is not None and latest.generator != DETERMINISTIC and latest.state_hash == state:
            return False  # the briefing already tells the current memory
        briefed = self.store.bulletins.latest(scope, generator_like=f"{MODEL_PREFIX}%")
        return briefed is None or (
            briefed.state_hash != state
            and now - briefed.created_at >= self.config.bulletin_interval_seconds
        )

    def _build(
        self,
        scope: str,
        visible: Sequence[str],
        latest: Bulletin | None,
        state: str,
        now: float,
        *,
        synthesise: bool,
    ) -> Bulletin | None:
        text, generator = self.generate(visible, now, synthesise=synthesise)
        if not text:
            return None
        if latest is not None and latest.text == text and latest.state_hash == state:
            return latest  # e.g. a failed briefing fell back to the same deterministic text
        bulletin = self.store.bulletins.add(scope, text, state, generator)
        log.info("bulletin for %s rebuilt (%s, %d words)", scope, generator, word_count(text))
        return bulletin

    def generate(
        self, visible_scopes: Sequence[str], now: float, *, synthesise: bool = True
    ) -> tuple[str, str]:
        """(text, generator): synthesised by the LLM when there is one (and `synthesise`), else (or on any failure)
        deterministic."""
        sections = self.collect(visible_scopes, now)
        text = self.render(sections, now, self.config.bulletin_max_words)
        if not text or self.llm is None or not synthesise:
            return text, DETERMINISTIC
        notes = self.render(sections, now, LLM_HARD_CAP_WORDS)
        synthesised = self._synthesise(self.llm, notes)
        return (
            (synthesised, f"{MODEL_PREFIX}{self.llm.name}")
            if synthesised
            else (text, DETERMINISTIC)
        )

    def changes_since(self, old: Bulletin, new: Bulletin) -> str:
        """The one-time "what changed" note between two bulletins of a scope."""
        return changes_since(old, new)

    # -- deterministic assembly -------------------------------------------------------------------------------
    def collect(
        self, visible_scopes: Sequence[str], now: float
    ) -> list[tuple[Section, list[Memory]]]:
        """Each section's current memories of the visible scopes, best first."""
        out = []
        held = self.store.quarantine.reasons(ItemKind.MEMORY)  # never in a prompt until released
        for section in sections():
            since = now - section.max_age_days * DAY if section.max_age_days is not None else None
            found = [
                m
                for m in self.store.memories.find(
                    visible_scopes,
                    MemoryFilter(
                        types=section.types,
                        current_only=True,
                        since=since,
                        order="recent",
                        limit=200,
                    ),
                )
                if m.scope in visible_scopes and m.id not in held
            ]
            if not section.by_recency:
                found.sort(
                    key=lambda m: (-effective_importance(m, now, self.config), -m.created_at)
                )
            out.append((section, found[: section.limit]))
        return out

    def render(
        self, sections: Sequence[tuple[Section, list[Memory]]], now: float, max_words: int
    ) -> str:
        """Sections in fixed order; items are taken round-robin (every section's best first) within `max_words`."""
        header = f"Memory bulletin ({datetime.fromtimestamp(now).strftime('%Y-%m-%d')}):"
        chosen: list[list[str]] = [[] for _ in sections]
        budget = max_words - word_count(header)
        depth = max((len(items) for _, items in sections), default=0)
        for rank in range(depth):
            for n, (section, items) in enumerate(sections):
                if rank >= len(items):
                    continue
                line = f"- {_item_text(items[rank])}"
                cost = word_count(line) + (0 if chosen[n] else word_count(section.title + ":"))
                if cost <= budget:
                    chosen[n].append(line)
                    budget -= cost
        if not any(chosen):
            return ""
        lines = [header]
        for (section, _), picked in zip(sections, chosen, strict=True):
            if picked:
                lines.append(f"{section.title}:")
                lines.extend(picked)
        return "\n".join(lines)

    # -- synthesis --------------------------------------------------------------------------------------------
    def _synthesise(self, llm: LLM, notes: str) -> str | None:
        limit = max(50, min(self.config.bulletin_llm_max_words, LLM_HARD_CAP_WORDS))
        prompt = (
            f"Notes from long-term memory, grouped by kind:\n\n{notes}\n\nWrite the bulletin in at most "
            f"{limit} words: who the user is, what they are working towards, open items, and what to keep "
            "in mind. Keep only what is useful to an assistant."
        )
        try:
            text = llm.complete(prompt, system=_SYSTEM, max_tokens=limit * 2, timeout=60.0).strip()
        except Exception:
            # any failure of an external model falls back to the deterministic bulletin
            log.warning(
                "bulletin synthesis with %s failed; using the deterministic bulletin",
                llm.name,
                exc_info=True,
            )
            return None
        if not text or word_count(text) > LLM_HARD_CAP_WORDS:
            log.warning(
                "bulletin synthesis with %s returned %d words; using the deterministic bulletin",
                llm.name,
                word_count(text),
            )
            return None
        return clip_words(text, limit)


def _change_lines(text: str) -> list[str]:
    lines = [_SPACE.sub(" ", line).strip() for line in text.splitlines()]
    return [line for line in lines[1:] if line and not line.endswith(":")]


def changes_since(old: Bulletin, new: Bulletin, max_lines: int = CHANGE_LINES) -> str:
    """A short one-time note of what a newer bulletin adds or drops ("" when nothing visible changed, or when the
    newer one was only rewritten from the same memory, e.g. a briefing replacing the deterministic bulletin)."""
    if old.hash == new.hash or old.state_hash == new.state_hash:
        return ""
    before, after = _change_lines(old.text), _change_lines(new.text)
    before_set, after_set = set(before), set(after)
    added = [line for line in after if line not in before_set]
    dropped = [line for line in before if line not in after_set]
    if not added and not dropped:
        return ""
    notes = [f"+ {clip_words(line.removeprefix('- '), 25)}" for line in added[:max_lines]]
    notes += [
        f"- no longer current: {clip_words(line.removeprefix('- '), 15)}"
        for line in dropped[: max(0, max_lines - len(notes))]
    ]
    more = len(added) + len(dropped) - len(notes)
    if more > 0:
        notes.append(f"(and {more} more changes)")
    return "\n".join(["Memory changed since the session began:", *notes])
