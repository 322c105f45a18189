"""Fusion: weighted reciprocal rank fusion, rescoring (importance, supersession, type, time) and MMR diversity."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..config import RetrievalWeights
from ..timestamps import DAY
from ..types import Episode, ItemKind, Memory
from .candidates import Signal
from .query import QueryAnalysis, tokens
from .tuning import DUPLICATE_OFF, RECENCY_HALF_LIFE_DAYS, SESSION_TOP, STEM_CHARS, SUCCESSOR_MARGIN

Key = tuple[ItemKind, int]


@dataclass
class Fused:
    """A candidate during ranking: its fused score and what each signal said about it."""

    key: Key
    score: float = 0.0
    signals: dict[str, float] = field(default_factory=dict)
    # later memories carried with this one because they amend part of it (retriever.Retriever._relevant)
    amended_by: list[int] = field(default_factory=list)
    # what is never given without this one: its successors and amendments (retriever.Retriever._relevant)
    carries: list[Key] = field(default_factory=list)


def weighted_rrf(
    signals: Iterable[Signal], weights: Mapping[str, float], k: float
) -> dict[Key, Fused]:
    """sum over signals of weight / (k + rank), rank 1-based; records each signal's raw score.

    `weights` maps signal names to weights (retrieval/signals.py: `fusion_weights`); an unweighted signal adds 0.
    """
    fused: dict[Key, Fused] = {}
    for signal in signals:
        weight = weights.get(signal.name, 0.0)
        for rank, (item_id, raw) in enumerate(signal.ranked, start=1):
            key = (signal.kind, item_id)
            entry = fused.setdefault(key, Fused(key))
            if signal.name not in entry.signals:
                entry.score += weight / (k + rank)
                entry.signals[signal.name] = raw
    for entry in fused.values():
        entry.signals["rrf"] = entry.score
    return fused


def spread_to_neighbours(
    fused: Mapping[Key, Fused],
    episodes: Mapping[int, Episode],
    prev_share: float,
    next_share: float,
) -> None:
    """Episodes gain a share of the best fused score of their session's neighbouring turns.

    An answer usually follows the turn that matches the question's words (and shares its turn with it when one
    turn holds both the user's message and the reply), so the earlier side passes on `prev_share` and the later
    side `next_share`. Only episodes already among the candidates take part.
    """
    if prev_share <= 0 and next_share <= 0:
        return
    slots: dict[tuple[str, int], list[tuple[float, int]]] = {}
    for (kind, item_id), entry in fused.items():
        episode = episodes.get(item_id) if kind is ItemKind.EPISODE else None
        if episode is not None:
            slots.setdefault((episode.session_id, episode.turn_index), []).append(
                (entry.score, item_id)
            )

    def best(slot: tuple[str, int], skip: int = -1) -> float:
        return max(
            (score for score, item_id in slots.get(slot, ()) if item_id != skip), default=0.0
        )

    bonus: dict[Key, float] = {}
    for key in fused:
        episode = episodes.get(key[1]) if key[0] is ItemKind.EPISODE else None
        if episode is None:
            continue
        session, turn = episode.session_id, episode.turn_index
        extra = prev_share * max(
            best((session, turn - 1)), best((session, turn), key[1])
        ) + next_share * best((session, turn + 1))
        if extra > 0:
            bonus[key] = extra
    for key, extra in bonus.items():
        fused[key].score += extra
        fused[key].signals["neighbour"] = extra


def session_prior(
    fused: Mapping[Key, Fused],
    episodes: Mapping[int, Episode],
    weight: float,
    top: int = SESSION_TOP,
) -> None:
    """Episodes of the sessions that match best are lifted: x (1 + weight x session strength).

    A session's strength is the sum of its `top` best episode scores over the best session's.
    """
    if weight <= 0:
        return
    per_session: dict[str, list[float]] = {}
    for (kind, item_id), entry in fused.items():
        episode = episodes.get(item_id) if kind is ItemKind.EPISODE else None
        if episode is not None:
            per_session.setdefault(episode.session_id, []).append(entry.score)
    strength = {s: sum(sorted(v, reverse=True)[:top]) for s, v in per_session.items()}
    strongest = max(strength.values(), default=0.0)
    if strongest <= 0:
        return
    for (kind, item_id), entry in fused.items():
        episode = episodes.get(item_id) if kind is ItemKind.EPISODE else None
        if episode is not None:
            factor = 1.0 + weight * strength[episode.session_id] / strongest
            entry.score *= factor
            entry.signals["session"] = factor


def rescore(
    entry: Fused,
    item: Memory | Episode,
    analysis: QueryAnalysis,
    now: float,
    weights: RetrievalWeights,
    importance: float,
) -> None:
    """Multiply the fused score by the importance, type-hint, time-window and recency factors.

    In a question about the user, the assistant's turns count for `assistant_about_user` of the user's own:
    what the user said about themselves is the record, a reply mostly echoes or advises.
    """
    factor = (1.0 - weights.importance) + weights.importance * importance
    entry.signals["importance"] = importance
    if analysis.about_user and isinstance(item, Episode) and item.role == "assistant":
        factor *= weights.assistant_about_user
        entry.signals["assistant_turn"] = weights.assistant_about_user
    if isinstance(item, Memory) and item.type in analysis.type_hints:
        factor *= 1.0 + weights.type_boost
        entry.signals["type_hint"] = 1.0
    when = item.created_at
    if analysis.window is not None and analysis.window.contains(when):
        factor *= 1.0 + weights.time_boost
        entry.signals["time_window"] = 1.0
    if analysis.recency > 0:
        age_days = max(0.0, now - when) / DAY
        fresh = 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
        factor *= 1.0 + weights.recency * analysis.recency * fresh
        entry.signals["recency"] = fresh
    entry.score *= factor


def demote_superseded(
    fused: Mapping[Key, Fused], memories: Mapping[int, Memory], now: float, penalty: float
) -> None:
    """A superseded or expired memory keeps `penalty` of its score and always ranks below its successor."""
    stale = [
        m for m in memories.values() if not m.is_current(now) and (ItemKind.MEMORY, m.id) in fused
    ]
    for memory in stale:
        entry = fused[(ItemKind.MEMORY, memory.id)]
        entry.score *= penalty
        entry.signals["superseded"] = 1.0
    for memory in stale:
        successor = (
            fused.get((ItemKind.MEMORY, memory.superseded_by)) if memory.superseded_by else None
        )
        if successor is not None:
            entry = fused[(ItemKind.MEMORY, memory.id)]
            entry.score = min(entry.score, successor.score * SUCCESSOR_MARGIN)


def current_head(memory_id: int, memories: Mapping[int, Memory], hops: int = 8) -> int | None:
    """The newest known memory of `memory_id`'s supersession chain (None when the chain leaves `memories`)."""
    current = memories.get(memory_id)
    for _ in range(hops):
        if current is None or current.superseded_by is None:
            break
        current = memories.get(current.superseded_by)
    return current.id if current is not None and current.superseded_by is None else None


def demote_stale_episodes(
    fused: Mapping[Key, Fused],
    stale: Mapping[int, Sequence[int]],
    memories: Mapping[int, Memory],
    penalty: float,
) -> None:
    """An episode that stated only superseded facts is demoted like them and ranks below their current successors.

    `stale` maps episode ids to the superseded memories extracted from their turn.
    """
    for episode_id, memory_ids in stale.items():
        entry = fused.get((ItemKind.EPISODE, episode_id))
        if entry is None:
            continue
        entry.score *= penalty
        entry.signals["superseded"] = 1.0
        for memory_id in memory_ids:
            head = current_head(memory_id, memories)
            successor = fused.get((ItemKind.MEMORY, head)) if head is not None else None
            if successor is not None:
                entry.score = min(entry.score, successor.score * SUCCESSOR_MARGIN)


class KeywordCoverage:
    """Share of a query's keywords that occur in a text, each weighted by its idf when given (a rare word the item
    contains counts for more than a common one), else all alike. Words compare by their first STEM_CHARS letters
    (painted/painting); one regular expression per query finds them in each text, once per text."""

    def __init__(self, keywords: Sequence[str], idf: Mapping[str, float] | None = None) -> None:
        self.weights: dict[str, float] = {}
        for word in keywords:
            stem = word[:STEM_CHARS].lower()
            weight = 1.0 if idf is None else idf.get(word, 0.0)
            self.weights[stem] = max(self.weights.get(stem, 0.0), weight)
        self.total = sum(self.weights.values())
        alternatives = sorted(
            (
                re.escape(stem) + (r"\w*" if len(stem) == STEM_CHARS else "") + r"\b"
                for stem in self.weights
            ),
            key=len,
            reverse=True,
        )
        self._pattern = (
            re.compile(r"\b(?:" + "|".join(alternatives) + ")")  # found in lower case: far faster
            if alternatives
            else None
        )
        self._known: dict[str, float] = {}

    def __call__(self, text: str) -> float:
        if self.total <= 0 or self._pattern is None:
            return 0.0
        share = self._known.get(text)
        if share is None:
            found = {match[:STEM_CHARS] for match in self._pattern.findall(text.lower())}
            share = self._known[text] = sum(self.weights.get(s, 0.0) for s in found) / self.total
        return share

    def learn(self, texts: Iterable[str]) -> None:
        """Work out the coverage of texts asked for later (while a search waits for its vector stage)."""
        for text in texts:
            self(text)


def keyword_evidence(
    signals: Iterable[Signal],
    names: Collection[str],
    text_of: Callable[[Key], str | None],
    coverage: KeywordCoverage,
    top: int,
) -> float:
    """The best keyword coverage among the first `top` visible items of the named (keyword) signals; 0 when none."""
    best = 0.0
    for signal in signals:
        if signal.name not in names:
            continue
        texts = (text_of((signal.kind, item_id)) for item_id, _ in signal.ranked)
        for text in [t for t in texts if t is not None][:top]:
            best = max(best, coverage(text))
    return best


Similarity = Callable[[Key, Key], float]


def make_similarity(
    vectors: Mapping[Key, np.ndarray],
    texts: Mapping[Key, str],
    sources: Mapping[Key, frozenset[tuple[str, int, str]]] | None = None,
) -> Similarity:
    """Cosine of unit vectors when both items have one, else token Jaccard of their texts.

    A memory and an episode it was extracted from (`sources`: the messages behind each, as session, turn and
    side) count as the same item (1.0), so a search does not spend two places on one message.
    """
    token_sets: dict[
        Key, frozenset[str]
    ] = {}  # filled on demand: only items lacking a vector need them
    origin = sources or {}

    def words(key: Key) -> frozenset[str]:
        found = token_sets.get(key)
        if found is None:
            found = token_sets[key] = frozenset(tokens(texts.get(key, "")))
        return found

    def similarity(a: Key, b: Key) -> float:
        if a[0] is not b[0] and origin.get(a, frozenset()) & origin.get(b, frozenset()):
            return 1.0
        va, vb = vectors.get(a), vectors.get(b)
        if va is not None and vb is not None:
            return float(np.dot(va, vb))
        sa, sb = words(a), words(b)
        if not sa or not sb:
            return 0.0
        shared = len(sa & sb)
        return shared / (len(sa) + len(sb) - shared)

    return similarity


def mmr(
    ranked: Sequence[Fused],
    similarity: Similarity,
    lam: float,
    limit: int,
    duplicate: float = DUPLICATE_OFF,
) -> list[Fused]:
    """Maximal marginal relevance: greedily pick lam x relevance - (1 - lam) x max similarity to the picked.

    Relevance is the score divided by the best score, so lam keeps one meaning whatever the score scale.
    A candidate at least `duplicate` similar to a picked item says the same thing again and is dropped.
    """
    if not ranked or limit <= 0:
        return []
    top = max(e.score for e in ranked) or 1.0
    pool = list(ranked)
    picked: list[Fused] = []
    max_sim = {e.key: 0.0 for e in pool}
    while pool and len(picked) < limit:
        best = max(pool, key=lambda e: lam * e.score / top - (1.0 - lam) * max_sim[e.key])
        pool.remove(best)
        picked.append(best)
        if max_sim[best.key] > 0:
            best.signals["mmr_similarity"] = max_sim[best.key]
        for other in pool:
            max_sim[other.key] = max(max_sim[other.key], similarity(best.key, other.key))
        pool = [e for e in pool if max_sim[e.key] < duplicate]
    return picked
