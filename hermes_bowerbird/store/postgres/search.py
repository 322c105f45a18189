"""Full-text search on PostgreSQL, ranked exactly as SQLite's FTS5 ranks it (bm25, its tokens and its weights).

PostgreSQL's own text search would tokenise, stem and rank differently (stop words, snowball, ts_rank), and
recall would then differ between the backends. So each memory and episode keeps a tsvector written by the store
from FTS5's own tokens (store/lexemes.py): one position per token in order, columns a position apart and labelled
A, B, C (content, summary, tags), with the row's token count beside it. The GIN index finds the rows a query's
phrases match; bm25 is then computed from each row's positions with FTS5's constants and the table's exact
totals (fts_stats), and phrases of several tokens, rare here, are counted in Python.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ...errors import InvalidInputError
from ...types import ItemKind
from .. import lexemes
from ..base import Database, marks

log = logging.getLogger(__name__)
_BESIDE: ThreadPoolExecutor | None = None
_BESIDE_LOCK = threading.Lock()


def _beside() -> ThreadPoolExecutor:
    """The threads that rank one scope's keyword matches beside the others' (shared by every server store of the
    process; each statement borrows its store's connection)."""
    global _BESIDE
    with _BESIDE_LOCK:
        if _BESIDE is None:
            _BESIDE = ThreadPoolExecutor(2, thread_name_prefix="bowerbird-keyword")
        return _BESIDE


K1, B = 1.2, 0.75  # FTS5's bm25 constants
MIN_IDF = 1e-6  # FTS5 gives a phrase in more than half the rows this idf instead of a negative one
MEMORY_WEIGHTS = (1.0, 0.6, 0.4)  # content, summary, tags: as the SQLite store ranks memories_fts
_LABELS = "ABC"
_TABLES = {"memories": "memories_fts", "episodes": "episodes_fts"}
# A tsvector holds words of at most 2,047 bytes; a longer token (a pasted key, a base64 blob) is kept as its
# digest, on both sides, so it still matches exactly itself and nothing else.
_LONGEST = 1_000


@dataclass(frozen=True)
class _Phrase:
    tokens: tuple[str, ...]
    prefix: bool

    @property
    def tsquery(self) -> str:
        """This phrase as tsquery text: quoted lexemes, `:*` for a prefix, `<->` between a phrase's tokens."""
        quoted = [_quote(token) for token in self.tokens]
        if self.prefix:
            quoted[-1] += ":*"
        return " <-> ".join(quoted)


@dataclass(frozen=True)
class _Ranking:
    """One full-text search as the scorers need it: the table, the phrases with their idf, the table's average
    length, the tsquery that finds the rows, the scopes, which rows are live, and the column weights."""

    table: str
    phrases: tuple[_Phrase, ...]
    idf: tuple[float, ...]
    avgdl: float
    query: str
    scopes: tuple[str, ...]
    live: str
    weights: Sequence[float]


def _quote(word: str) -> str:
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"


def lexeme(token: str) -> str:
    """A token as the tsvector keeps it: itself, or the digest of one too long for a tsvector."""
    if len(token.encode("utf-8")) <= _LONGEST:
        return token
    return "~" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_match(expression: str) -> tuple[list[_Phrase], str]:
    """The phrases of a MATCH expression from fts_match_expression (a phrase with no token dropped: it matches
    no row), and its operator; anything else is refused, as FTS5 refuses it."""
    try:
        query = lexemes.parse_match(expression)
    except ValueError as exc:
        raise InvalidInputError(
            f"not a full-text expression the store accepts ({exc}); build it with fts_match_expression"
        ) from exc
    if query.operator == "AND" and any(not p.tokens for p in query.phrases):
        return [], query.operator  # every phrase must match, and one matches nothing
    phrases = [
        _Phrase(tuple(lexeme(token) for token in p.tokens), p.prefix)
        for p in query.phrases
        if p.tokens
    ]
    return phrases, query.operator


def tsvector_text(columns: Sequence[str]) -> tuple[str, int]:
    """A row's columns as tsvector text (positions from 1, one apart between columns, labelled A, B, C...) and
    its token count."""
    positions: dict[str, list[str]] = {}
    position = 0
    for column, text in enumerate(columns):
        for token in lexemes.tokens(text):
            position += 1
            positions.setdefault(lexeme(token), []).append(
                f"{min(position, 16383)}{_LABELS[column]}"
            )
        position += 1  # a phrase never runs from one column into the next
    count = position - len(columns)
    body = " ".join(f"{_quote(token)}:{','.join(at)}" for token, at in positions.items())
    return body, count


class TokenIndex:
    """Writes each new memory's and episode's tsvector and token count, in the transaction that added the row."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, table: str, item_id: int, columns: Sequence[str]) -> None:
        self.add_many(table, [(item_id, columns)])

    def add_many(self, table: str, rows: Sequence[tuple[int, Sequence[str]]]) -> None:
        """One statement for all the rows: the postings, word counts and totals triggers fire once."""
        if not rows:
            return
        written = [(item_id, *tsvector_text(columns)) for item_id, columns in rows]
        self._db.execute(
            f"""
            UPDATE {table} t SET fts = v.fts::tsvector, fts_len = v.fts_len
            FROM unnest(?::bigint[], ?::text[], ?::integer[]) AS v(id, fts, fts_len)
            WHERE t.id = v.id
        """,
            tuple(list(column) for column in zip(*written, strict=True)),
        )


class ServerSearch:
    """bm25 search of memories and episodes, their statistics, checks and upkeep."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def memories(
        self,
        match: str,
        scopes: Sequence[str],
        limit: int = 50,
        *,
        current_only: bool = False,
        by_scope: bool = False,
    ) -> list[tuple[int, float]]:
        """(memory id, bm25 score: higher is better) of live memories of `scopes`, best first; with `by_scope`,
        the first scope's on a second connection beside the others'."""
        live = "t.forgotten = 0" + (" AND t.superseded_by IS NULL" if current_only else "")
        return self._ranked("memories", match, scopes, limit, live, MEMORY_WEIGHTS, by_scope)

    def episodes(
        self, match: str, scopes: Sequence[str], limit: int = 50, *, by_scope: bool = False
    ) -> list[tuple[int, float]]:
        """(episode id, bm25 score: higher is better) of episodes of `scopes`, best first."""
        return self._ranked("episodes", match, scopes, limit, "TRUE", (1.0,), by_scope)

    def _ranked(
        self,
        table: str,
        match: str,
        scopes: Sequence[str],
        limit: int,
        live: str,
        weights: Sequence[float],
        by_scope: bool,
    ) -> list[tuple[int, float]]:
        phrases, operator = parse_match(match)
        if not phrases or not scopes or limit <= 0:
            return []
        query = (" | " if operator == "OR" else " & ").join(f"({p.tsquery})" for p in phrases)
        if all(len(p.tokens) == 1 and not p.prefix for p in phrases):
            words = (table, [p.tokens[0] for p in phrases], scopes, live, weights)
            return self._scored_from_postings(words, limit, by_scope)
        if all(len(p.tokens) == 1 for p in phrases):
            return self._scored_in_sql(table, phrases, query, scopes, limit, live, weights)
        stats = self._idf(table, phrases, query)
        if stats is None:
            return []
        ask = _Ranking(table, tuple(phrases), *stats, query, tuple(scopes), live, weights)
        return self._scored_here(ask)[:limit]

    def _idf(
        self, table: str, phrases: Sequence[_Phrase], query: str
    ) -> tuple[tuple[float, ...], float] | None:
        """Each phrase's idf over the whole table (as FTS5 counts: rows the phrase matches), and avgdl."""
        stats = self._db.query("SELECT rows, tokens FROM fts_stats WHERE tbl = ?", (table,))
        rows, tokens = (int(stats[0][0]), int(stats[0][1])) if stats else (0, 0)
        if rows <= 0:
            return None
        counts = ", ".join("count(*) FILTER (WHERE fts @@ ?::tsquery)" for _ in phrases)
        hits = self._db.query(
            f"SELECT {counts} FROM {table} WHERE fts @@ ?::tsquery",
            (*(p.tsquery for p in phrases), query),
        )[0]
        idf = [math.log((rows - int(n) + 0.5) / (int(n) + 0.5)) for n in hits]
        return tuple(value if value > 0 else MIN_IDF for value in idf), tokens / rows

    def _scored_from_postings(
        self,
        ask: tuple[str, list[str], Sequence[str], str, Sequence[float]],
        limit: int,
        by_scope: bool,
    ) -> list[tuple[int, float]]:
        """The best `limit` live rows of single words (`ask`: the table, the words, the scopes, what is live, the
        column weights). bm25 is summed from fts_postings alone (the words' rows in these scopes, their counts per
        column and lengths), fts_terms (each word's idf) and the table's totals; only the best few rows are then
        read, to keep the live ones. Should too many of those have been forgotten or superseded, every scored row
        is checked."""
        best = limit * _OVERFETCH
        found, cut = self._from_scopes(ask, best, by_scope)
        if cut and sum(alive for _, _, alive in found) < limit:
            found, _ = self._from_scopes(ask, None, by_scope)
        return [(item_id, score) for item_id, score, alive in found if alive][:limit]

    def _from_scopes(
        self,
        ask: tuple[str, list[str], Sequence[str], str, Sequence[float]],
        best: int | None,
        by_scope: bool,
    ) -> tuple[list[tuple[int, float, bool]], bool]:
        """`_from_postings`, and whether it was cut at `best`. With `by_scope` and several scopes, the first
        scope's rows are ranked on a second connection beside the others': a row's bm25 is its own (the idf and
        lengths are the table's), so the best of the two parts' best are the best of all, in the same order."""
        table, words, scopes, live, weights = ask
        if not by_scope or len(scopes) < 2:
            found = self._from_postings(table, words, scopes, live, weights, best)
            return found, best is not None and len(found) == best
        beside = _beside().submit(
            self._from_postings, table, words, scopes[:1], live, weights, best
        )
        parts = [
            self._from_postings(table, words, scopes[1:], live, weights, best),
            beside.result(),
        ]
        found = sorted((hit for part in parts for hit in part), key=lambda hit: (-hit[1], hit[0]))
        if best is None:
            return found, False
        # cut: rows past the best were left out, by a part or by the merge
        return found[:best], len(found) > best or any(len(part) == best for part in parts)

    def _from_postings(
        self,
        table: str,
        words: list[str],
        scopes: Sequence[str],
        live: str,
        weights: Sequence[float],
        best: int | None,
    ) -> list[tuple[int, float, bool]]:
        """(row id, bm25, whether the row is live) of the `best` rows by score (all of them for None), best first."""
        # float8 throughout (a bare 0.5 is numeric, and numeric arithmetic over every posting is slow)
        weighted = " + ".join(
            f"p.hits_{_LABELS[i].lower()} * {float(w)!r}::float8" for i, w in enumerate(weights)
        )
        df = "coalesce(f.rows, 0)::float8"
        idf = f"ln((stats.n - {df} + 0.5::float8) / ({df} + 0.5::float8))"
        cut = "LIMIT ?" if best is not None else ""
        rows = self._db.query(
            f"""
            WITH {_stats(table)}, words AS MATERIALIZED (
                SELECT w.lexeme, CASE WHEN {idf} > 0 THEN {idf} ELSE {MIN_IDF!r} END AS idf
                FROM stats, unnest(?::text[]) AS w(lexeme)
                LEFT JOIN fts_terms f ON f.tbl = '{table}' AND f.lexeme = w.lexeme
            ), found AS (
                SELECT p.item_id, p.fts_len, words.idf, ({weighted}) AS f
                FROM words
                JOIN fts_postings p ON p.tbl = '{table}' AND p.lexeme = words.lexeme
                WHERE p.scope IN ({marks(len(scopes))})
            ), scored AS MATERIALIZED (
                SELECT found.item_id AS id,
                       sum(found.idf * (found.f * {K1 + 1!r}::float8) / (found.f + {_norm("found")})) AS score
                FROM found, stats
                GROUP BY found.item_id
                ORDER BY score DESC, found.item_id
                {cut}
            )
            SELECT s.id, s.score, t.id IS NOT NULL
            FROM scored s
            LEFT JOIN {table} t ON t.id = s.id AND {live}
            ORDER BY s.score DESC, s.id
        """,
            (words, *scopes, *([best] if best is not None else [])),
        )
        return [(int(row[0]), float(row[1]), bool(row[2])) for row in rows]

    def _scored_in_sql(
        self,
        table: str,
        phrases: Sequence[_Phrase],
        query: str,
        scopes: Sequence[str],
        limit: int,
        live: str,
        weights: Sequence[float],
    ) -> list[tuple[int, float]]:
        """The best `limit` rows of one-token phrases, in one statement: the table's totals, each phrase's idf from
        the rows it matches, and bm25 from each matching row's positions."""
        weight = " ".join(f"WHEN '{_LABELS[i]}' THEN {w!r}" for i, w in enumerate(weights))
        hits, hit_params = _document_frequencies(table, phrases, query)
        rows = self._db.query(
            f"""
            WITH {_stats(table)}, hits AS ({hits}
            ), idf AS (
                SELECT array_agg(
                    CASE WHEN ln((stats.n - d.df + 0.5) / (d.df + 0.5)) > 0
                         THEN ln((stats.n - d.df + 0.5) / (d.df + 0.5)) ELSE {MIN_IDF!r} END
                    ORDER BY d.ord
                ) AS idf
                FROM stats, hits, unnest(hits.df) WITH ORDINALITY AS d(df, ord)
            )
            SELECT t.id, (
                SELECT coalesce(sum(q.idf * (q.f * {K1 + 1!r}) / (q.f + {_NORM})), 0)
                FROM (
                    SELECT p.idf, sum(CASE w.label {weight} ELSE 0 END) AS f
                    FROM unnest(?::text[], ?::bool[], (SELECT idf FROM idf))
                        WITH ORDINALITY AS p(lexeme, prefix, idf, ord)
                    JOIN LATERAL unnest(t.fts) AS u(lexeme, positions, weights)
                      ON u.lexeme = p.lexeme OR (p.prefix AND starts_with(u.lexeme, p.lexeme))
                    CROSS JOIN LATERAL unnest(u.weights) AS w(label)
                    GROUP BY p.ord, p.idf
                ) q
            ) AS score
            FROM {table} t, stats
            WHERE t.fts @@ ?::tsquery AND t.scope IN ({marks(len(scopes))}) AND {live}
            ORDER BY score DESC, t.id
            LIMIT ?
        """,
            (
                *hit_params,
                [p.tokens[0] for p in phrases],
                [p.prefix for p in phrases],
                query,
                *scopes,
                limit,
            ),
        )
        return [(int(row[0]), float(row[1])) for row in rows]

    def _scored_here(self, ask: _Ranking) -> list[tuple[int, float]]:
        """Every matching row scored here, best first: a phrase of several tokens counts where its tokens stand."""
        rows = self._db.query(
            f"""
            SELECT t.id, t.fts_len, t.fts::text
            FROM {ask.table} t
            WHERE t.fts @@ ?::tsquery AND t.scope IN ({marks(len(ask.scopes))}) AND {ask.live}
        """,
            (ask.query, *ask.scopes),
        )
        scored = [(int(row[0]), _bm25(_positions(row[2]), int(row[1]), ask)) for row in rows]
        scored.sort(key=lambda hit: (-hit[1], hit[0]))
        return scored

    # -- what recall's idf and the listings need --------------------------------------------------------------
    def ids_after(self, kind: ItemKind, scopes: Sequence[str], after_id: int = 0) -> list[int]:
        """Ids of memories (any state), episodes or memories' questions in these scopes with id > after_id,
        ascending."""
        table = {
            ItemKind.MEMORY: "memories",
            ItemKind.EPISODE: "episodes",
            ItemKind.QUESTION: "(SELECT q.id, m.scope FROM memory_questions q "
            "JOIN memories m ON m.id = q.memory_id) t",
        }[kind]
        rows = self._db.query(
            f"""
            SELECT id
            FROM {table}
            WHERE scope IN ({marks(len(scopes))}) AND id > ?
            ORDER BY id
        """,
            (*scopes, after_id),
        )
        return [int(row[0]) for row in rows]

    def corpus_size(self) -> int:
        """Highest episode id plus highest memory id (as the SQLite store counts it)."""
        return int(
            self._db.scalar("""
            SELECT (SELECT coalesce(max(id), 0) FROM episodes) + (SELECT coalesce(max(id), 0) FROM memories)
        """)
        )

    def term_document_counts(self, words: Sequence[str], cap: int = 10_000) -> dict[str, int]:
        """In how many episodes plus memories each word occurs (stemmed as full-text search matches it), each
        table's count stopping at `cap`: a word of one lexeme is read from fts_terms, any other is counted."""
        from ..search import fts_match_expression

        out: dict[str, int] = {}
        single: dict[str, str] = {}
        for word in words:
            match = fts_match_expression(word)
            phrases = parse_match(match)[0] if match else []
            if len(phrases) == 1 and len(phrases[0].tokens) == 1 and not phrases[0].prefix:
                single[word] = phrases[0].tokens[0]
            elif phrases:
                out[word] = self._counted(" | ".join(f"({p.tsquery})" for p in phrases), cap)
        if single:
            rows = self._db.query(
                """
                SELECT lexeme, sum(least(rows, ?))
                FROM fts_terms
                WHERE lexeme = ANY(?::text[]) AND tbl IN ('memories', 'episodes')
                GROUP BY lexeme
            """,
                (cap, sorted(set(single.values()))),
            )
            found = {str(row[0]): int(row[1]) for row in rows}
            out |= {word: found.get(lexeme, 0) for word, lexeme in single.items()}
        return {word: out[word] for word in words if word in out}

    def _counted(self, query: str, cap: int) -> int:
        return sum(
            int(
                self._db.scalar(
                    f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE fts @@ ?::tsquery LIMIT ?) AS hits",
                    (query, cap),
                )
            )
            for table in _TABLES
        )

    # -- checks and upkeep ---------------------------------------------------------------------------------------
    def integrity(self) -> dict[str, bool]:
        """Each table's index is whole: every row has its tsvector, the totals match the rows, and the postings and
        word counts hold one entry per word of each row (counted, not compared row by row)."""
        out = {}
        for table, name in _TABLES.items():
            real = self._db.query(
                f"""
                SELECT count(*) FILTER (WHERE fts IS NULL), count(*), coalesce(sum(fts_len), 0),
                       coalesce(sum(length(fts)), 0), coalesce(sum(length(fts)::bigint * fts_len), 0)
                FROM {table}
            """
            )[0]
            kept = self._db.query(
                """
                SELECT (SELECT rows FROM fts_stats WHERE tbl = ?), (SELECT tokens FROM fts_stats WHERE tbl = ?),
                       (SELECT coalesce(sum(rows), 0) FROM fts_terms WHERE tbl = ?),
                       (SELECT count(*) FROM fts_postings WHERE tbl = ?),
                       (SELECT coalesce(sum(fts_len::bigint), 0) FROM fts_postings WHERE tbl = ?)
            """,
                (table,) * 5,
            )[0]
            missing, rows, tokens, words, lengths = (int(v) for v in tuple(real))
            out[name] = missing == 0 and tuple(
                None if v is None else int(v) for v in tuple(kept)
            ) == (rows, tokens, words, words, lengths)
        return out

    def rebuild(self) -> list[str]:
        """Write every row's tsvector again from its text, and the totals, word counts and postings from the
        rows."""
        index = TokenIndex(self._db)
        for table, columns in (
            ("memories", "content, coalesce(summary, ''), tags"),
            ("episodes", "content"),
        ):
            after = 0
            while True:
                rows = self._db.query(
                    f"SELECT id, {columns} FROM {table} WHERE id > ? ORDER BY id LIMIT 500",
                    (after,),
                )
                if not rows:
                    break
                with self._db.transaction():
                    for row in rows:
                        index.add(table, int(row[0]), [str(v) for v in tuple(row)[1:]])
                after = int(rows[-1][0])
            with self._db.transaction():
                self._db.execute(
                    f"""
                    UPDATE fts_stats
                    SET rows = (SELECT count(*) FROM {table}),
                        tokens = (SELECT coalesce(sum(fts_len), 0) FROM {table})
                    WHERE tbl = ?
                """,
                    (table,),
                )
                self._db.execute("DELETE FROM fts_postings WHERE tbl = ?", (table,))
                self._db.execute(
                    f"""
                    INSERT INTO fts_postings
                    SELECT p.* FROM {table} t, bowerbird_fts_postings(?, t.scope, t.id, t.fts, t.fts_len) AS p
                """,
                    (table,),
                )
                self._db.execute("DELETE FROM fts_terms WHERE tbl = ?", (table,))
                self._db.execute(
                    f"""
                    INSERT INTO fts_terms (tbl, lexeme, rows)
                    SELECT ?, lexeme, count(*)
                    FROM {table}, unnest(tsvector_to_array(fts)) AS lexeme
                    GROUP BY lexeme
                """,
                    (table,),
                )
        return list(_TABLES.values())

    def optimize(self) -> None:
        """Nothing to merge: a GIN index keeps itself (the health check's VACUUM reclaims deleted rows' space)."""


def _norm(row: str) -> str:
    """bm25's length normalisation of `row` (its fts_len) against the table's `stats`: k1 (1 - b + b D / avgdl)."""
    return f"{K1!r}::float8 * ({1 - B!r}::float8 + {B!r}::float8 * {row}.fts_len / stats.avgdl)"


_NORM = _norm("t")
# how many times the rows asked for are scored from the postings and checked for being live, before all of them are
_OVERFETCH = 4


def _stats(table: str) -> str:
    """The CTE `stats`: the table's row count (n) and mean token count (avgdl), from fts_stats."""
    return f"""stats AS (
                SELECT rows::float8 AS n, tokens::float8 / rows AS avgdl
                FROM fts_stats
                WHERE tbl = '{table}' AND rows > 0
            )"""


def _document_frequencies(
    table: str, phrases: Sequence[_Phrase], query: str
) -> tuple[str, tuple[Any, ...]]:
    """The SQL (one row, `df`: rows holding each phrase, in order) and its parameters: read from fts_terms when no
    phrase is a prefix, else counted over the rows the query matches."""
    if not any(p.prefix for p in phrases):
        return (
            f"""
                SELECT ARRAY(
                    SELECT coalesce(
                        (SELECT rows FROM fts_terms WHERE tbl = '{table}' AND lexeme = l.lexeme), 0
                    )
                    FROM unnest(?::text[]) WITH ORDINALITY AS l(lexeme, ord)
                    ORDER BY l.ord
                )::float8[] AS df""",
            ([p.tokens[0] for p in phrases],),
        )
    counts = ", ".join("count(*) FILTER (WHERE fts @@ ?::tsquery)" for _ in phrases)
    return (
        f"""
                SELECT ARRAY[{counts}]::float8[] AS df FROM {table} WHERE fts @@ ?::tsquery""",
        (*(p.tsquery for p in phrases), query),
    )


def _positions(text: str) -> dict[str, list[tuple[int, str]]]:
    """A tsvector's text ('lexeme':3A,7B ...) as lexeme -> [(position, label)]."""
    out: dict[str, list[tuple[int, str]]] = {}
    for entry in _entries(text):
        lexeme, _, places = entry.rpartition(":")
        word = lexeme[1:-1].replace("''", "'").replace("\\\\", "\\")
        out[word] = [
            (int(p.rstrip(_LABELS + "D")), p[-1] if p[-1].isalpha() else "D")
            for p in places.split(",")
        ]
    return out


def _entries(text: str) -> list[str]:
    """Split tsvector text into its entries, minding quotes."""
    entries, current, quoted = [], [], False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "'":
            if quoted and i + 1 < len(text) and text[i + 1] == "'":
                current.append("''")
                i += 2
                continue
            quoted = not quoted
        if ch == " " and not quoted:
            if current:
                entries.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    if current:
        entries.append("".join(current))
    return entries


def _bm25(positions: dict[str, list[tuple[int, str]]], length: int, ask: _Ranking) -> float:
    weight_of = {_LABELS[i]: w for i, w in enumerate(ask.weights)}
    score = 0.0
    for phrase, value in zip(ask.phrases, ask.idf, strict=True):
        f = sum(weight_of.get(label, 0.0) for label in _phrase_hits(positions, phrase))
        score += value * (f * (K1 + 1)) / (f + K1 * (1 - B + B * length / ask.avgdl))
    return score


def _phrase_hits(positions: dict[str, list[tuple[int, str]]], phrase: _Phrase) -> list[str]:
    """The column label of each place the phrase stands in a row."""
    *head, last = phrase.tokens
    last_places = [
        place
        for word, places in positions.items()
        if word == last or (phrase.prefix and word.startswith(last))
        for place in places
    ]
    if not head:
        return [label for _, label in last_places]
    starts = {place for place in positions.get(head[0], [])}
    for offset, token in enumerate(head[1:], start=1):
        at = {(p - offset, label) for p, label in positions.get(token, [])}
        starts &= at
    ends = {(p - len(head), label) for p, label in last_places}
    return [label for _, label in sorted(starts & ends)]
