"""FTS5's bm25 in pure Python: the reference every full-text backend's ranking must reproduce.

For a query of phrases p over a table of N rows holding T tokens in all (avgdl = T / N), a matching row of D
tokens (all columns) scores

    sum over p of idf(p) * f(p) * (k1 + 1) / (f(p) + k1 * (1 - b + b * D / avgdl)),   k1 = 1.2, b = 0.75

where idf(p) = log((N - n + 0.5) / (n + 0.5)), raised to 1e-6 when not positive, n = the rows (of the whole
table, whatever their scope) holding the phrase, and f(p) = the phrase's hits in the row, each weighted by its
column's weight. This is the value of SQLite's `-bm25(table, weights...)`: higher is better. Sums run in the
order FTS5 runs them (hits by column then position, phrases in query order), so equal inputs give equal bits.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .lexemes import MatchQuery, Phrase

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
# Column weights of the memories index (content, summary, tags); episodes have one column, weight 1.0
MEMORY_WEIGHTS = (1.0, 0.6, 0.4)
EPISODE_WEIGHTS = (1.0,)

Columns = Sequence[Sequence[str]]


def idf(rows: int, hits: int) -> float:
    """Inverse document frequency of a phrase held by `hits` of `rows` rows."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else IDF_FLOOR


def phrase_hits(column: Sequence[str], phrase: Phrase) -> int:
    """How many positions of one column start the phrase (its last token as a prefix when it is one)."""
    return count_hits(column, token_sets(phrase, column))


def token_sets(phrase: Phrase, vocabulary: Iterable[str]) -> list[frozenset[str]]:
    """Per token of the phrase, the tokens of `vocabulary` it matches: itself, or for a prefix every token
    beginning with it."""
    sets = [frozenset((token,)) for token in phrase.tokens]
    if phrase.prefix and sets:
        last = phrase.tokens[-1]
        sets[-1] = frozenset(t for t in vocabulary if t.startswith(last))
    return sets


def count_hits(column: Sequence[str], sets: Sequence[frozenset[str]]) -> int:
    """How many positions of the column start a run of tokens in `sets`, one set per position."""
    if not sets:
        return 0
    if len(sets) == 1:
        return sum(map(sets[0].__contains__, column))
    size = len(sets)
    return sum(
        1
        for start in range(len(column) - size + 1)
        if all(column[start + k] in sets[k] for k in range(size))
    )


def phrase_frequency(columns: Columns, phrase: Phrase, weights: Sequence[float]) -> float:
    """The phrase's weighted hits in a row: each hit adds its column's weight (1.0 past the weights given)."""
    return weighted([phrase_hits(column, phrase) for column in columns], weights)


def weighted(hits: Sequence[int], weights: Sequence[float]) -> float:
    """Per-column hit counts as a weighted frequency, added one hit at a time in column order as FTS5 adds."""
    frequency = 0.0
    for index, count in enumerate(hits):
        weight = weights[index] if index < len(weights) else 1.0
        for _ in range(count):
            frequency += weight
    return frequency


def matches(hits: Sequence[float], operator: str) -> bool:
    """Whether a row with these per-phrase hits matches: any phrase for OR, every phrase for AND."""
    return all(h > 0 for h in hits) if operator == "AND" else any(h > 0 for h in hits)


def score(frequencies: Sequence[float], idfs: Sequence[float], length: int, avgdl: float) -> float:
    """bm25 of one row of `length` tokens whose phrases have these weighted frequencies and idfs."""
    total = 0.0
    for frequency, weight in zip(frequencies, idfs, strict=True):
        total += weight * (
            (frequency * (K1 + 1.0)) / (frequency + K1 * (1 - B + B * length / avgdl))
        )
    return total


@dataclass
class Corpus:
    """Rows of tokenized columns ranked by bm25, as an FTS5 table of them ranks them."""

    weights: Sequence[float] = EPISODE_WEIGHTS
    rows: dict[int, Columns] = field(default_factory=dict)
    _rows_of: dict[str, set[int]] = field(default_factory=dict)
    _counts: dict[int, list[Counter[str]]] = field(default_factory=dict)

    def add(self, rows: Iterable[tuple[int, Columns]]) -> None:
        for row_id, columns in rows:
            self.remove(row_id)
            self.rows[row_id] = columns
            self._counts[row_id] = [Counter(column) for column in columns]
            for token in {t for column in columns for t in column}:
                self._rows_of.setdefault(token, set()).add(row_id)

    def remove(self, row_id: int) -> None:
        self._counts.pop(row_id, None)
        for token in {t for column in self.rows.pop(row_id, ()) for t in column}:
            self._rows_of[token].discard(row_id)

    def hits(self, query: MatchQuery) -> dict[int, list[list[int]]]:
        """Row id -> per phrase, its hits in each column (rows holding none of the phrases left out)."""
        sets = [token_sets(p, self._rows_of) for p in query.phrases]
        candidates: set[int] = set()
        for phrase_sets in sets:
            for token in phrase_sets[0] if phrase_sets else ():
                candidates.update(self._rows_of.get(token, ()))
        out = {}
        for row_id in sorted(candidates):
            columns, counts = self.rows[row_id], self._counts[row_id]
            per_phrase = [
                [_hits(column, count, s) for column, count in zip(columns, counts, strict=True)]
                for s in sets
            ]
            if any(any(h) for h in per_phrase):
                out[row_id] = per_phrase
        return out

    def search(self, query: MatchQuery) -> list[tuple[int, float]]:
        """(row id, score) of every matching row, best first, ties by id."""
        hits = self.hits(query)
        if not hits:
            return []
        avgdl = sum(len(c) for columns in self.rows.values() for c in columns) / len(self.rows)
        counts = [sum(1 for row in hits.values() if any(row[i])) for i in range(len(query.phrases))]
        idfs = [idf(len(self.rows), n) for n in counts]
        found = []
        for row_id, per_phrase in hits.items():
            frequencies = [weighted(h, self.weights) for h in per_phrase]
            if matches(frequencies, query.operator):
                length = sum(len(c) for c in self.rows[row_id])
                found.append((row_id, score(frequencies, idfs, length, avgdl)))
        return sorted(found, key=lambda item: (-item[1], item[0]))


def _hits(column: Sequence[str], counts: Counter[str], sets: Sequence[frozenset[str]]) -> int:
    """count_hits, from the column's token counts when the phrase is one token."""
    if len(sets) != 1:
        return count_hits(column, sets)
    if len(sets[0]) < len(counts):
        return sum(counts[t] for t in sets[0] if t in counts)
    return sum(n for t, n in counts.items() if t in sets[0])
