"""What prefetch injects, through the Hermes provider: tokens per injected turn and whether the block holds an answer.

Each question is asked by `BowerbirdProvider.prefetch` on a store a benchmark filled, twice over: each in a new
session (what one turn is sent on its own), and one after another in one session (what a session is sent, with
nothing given twice). A turn is injected when prefetch returns a block; its tokens are the block's as the host
receives it (`estimate_tokens`, ~4 characters a token), header and data note included. The host sends every block
again with each later turn, so tokens per injected turn is what each turn of recall costs from then on.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_bowerbird.config import Config
from hermes_bowerbird.provider import PREFETCH_HEADER, BowerbirdProvider
from hermes_bowerbird.retrieval import estimate_tokens

# `- [episode #e12, 2026-03-04] ...`, `- [preference #4, 2026-03-04, superseded] ...`
_LINE_LABEL = re.compile(r"^- \[(?:episode #e(?P<episode>\d+)|[a-z_]+ #(?P<memory>\d+)),", re.M)

# whether a block answers its question: the block's text after the header, and the turns each line came from
# ("session#turn" slots)
Answers = Callable[[str, list[list[str]]], bool]


@dataclass(frozen=True)
class Ask:
    """One question, and how to tell a block that answers it (None: the store cannot answer it)."""

    text: str
    answers: Answers | None = None


@dataclass
class Injected:
    """What the questions of one set were given."""

    asked: int = 0
    tokens: list[int] = field(default_factory=list)  # per injected turn
    lines: list[int] = field(default_factory=list)  # per injected turn
    answered: list[bool] = field(default_factory=list)  # per answerable question

    def add(self, other: Injected) -> None:
        self.asked += other.asked
        self.tokens += other.tokens
        self.lines += other.lines
        self.answered += other.answered

    def row(self) -> dict[str, float]:
        injected = len(self.tokens)
        return {
            "asked": float(self.asked),
            "injected": injected / self.asked if self.asked else float("nan"),
            "tokens": statistics.fmean(self.tokens) if self.tokens else 0.0,
            "lines": statistics.fmean(self.lines) if self.lines else 0.0,
            "total": float(sum(self.tokens)),
            "answered": statistics.fmean(self.answered) if self.answered else float("nan"),
        }


def ask_through_provider(
    config: Config,
    asks: Sequence[Ask],
    *,
    user_id: str | None = None,
    name: str = "bench",
    one_session: bool = True,
) -> dict[str, Injected]:
    """The asks, each in a new session ("alone") and, with `one_session`, all in one session ("session"), by a
    provider on `config`'s home (it shares the engine a benchmark opened with `Bowerbird.open_shared`); `user_id`
    makes the provider read the scope `user:<user_id>` (the key stores written before per-platform keys used, still
    read as the user's)."""
    provider = BowerbirdProvider(config)
    provider.initialize(
        f"{name}-alone-0",
        hermes_home=str(config.hermes_home),
        platform="cli",
        **({"user_id": user_id} if user_id else {}),
    )
    out = {"alone": Injected(), **({"session": Injected()} if one_session else {})}
    try:
        for n, ask in enumerate(asks):
            provider.on_session_switch(f"{name}-alone-{n}", reset=True)
            _record(out["alone"], provider, ask)
        if one_session:
            provider.on_session_switch(f"{name}-session", reset=True)
            for ask in asks:
                _record(out["session"], provider, ask)
    finally:
        provider.shutdown()
    return out


def _record(into: Injected, provider: BowerbirdProvider, ask: Ask) -> None:
    block = provider.prefetch(ask.text)
    into.asked += 1
    shown = block.split(PREFETCH_HEADER, 1)[1] if PREFETCH_HEADER in block else ""
    if block:
        into.tokens.append(estimate_tokens(block))
        into.lines.append(len(_LINE_LABEL.findall(shown)))
    if ask.answers is not None:
        into.answered.append(bool(shown) and ask.answers(shown, _slots(provider, shown)))


def _slots(provider: BowerbirdProvider, shown: str) -> list[list[str]]:
    """The turns each line of a block came from, as "session#turn"."""
    engine = provider.engine
    assert engine is not None
    found = [(m["episode"], m["memory"]) for m in _LINE_LABEL.finditer(shown)]
    episodes = engine.store.episodes.get_many([int(e) for e, _ in found if e])
    provenance = engine.store.provenance.of([int(m) for _, m in found if m])
    out = []
    for episode, memory in found:
        if episode:
            item = episodes.get(int(episode))
            out.append([f"{item.session_id}#{item.turn_index}"] if item else [])
        else:
            out.append([f"{p.session_id}#{p.turn_index}" for p in provenance.get(int(memory), [])])
    return out


def render(sets: dict[str, dict[str, Injected]]) -> list[str]:
    """One row per set and way of asking."""
    lines = [
        "Each set's questions through the provider's prefetch, each in a new session (alone) and one after another "
        "in one session (session; LoCoMo: one per conversation; LongMemEval has one question per store): the share "
        "of turns injected, tokens per injected turn (the whole block, header included; mean), lines per injected "
        "turn, all tokens injected, and the share of answerable questions whose block holds an answer (LoCoMo: a "
        "line from an evidence turn; LongMemEval: from an answer session; persona and everyday: the value).",
        "",
        "| set | asked | turns injected | tokens per injected turn | lines | all tokens | answer in the block |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, ways in sets.items():
        for way, got in ways.items():
            row = got.row()
            lines.append(
                f"| {name}, {way} | {int(row['asked'])} | {row['injected']:.3f} | {row['tokens']:.1f} | "
                f"{row['lines']:.2f} | {int(row['total'])} | {row['answered']:.3f} |"
            )
    return lines


def raw(sets: dict[str, dict[str, Injected]]) -> dict[str, Any]:
    return {name: {way: got.row() for way, got in ways.items()} for name, ways in sets.items()}
