"""SQLite FTS5 as the oracle of the pure full-text code: the project's tokenizer, its tables, its bm25; the dev-set
texts to compare on."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

TOKENIZE = "porter unicode61 remove_diacritics 2"
DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DEV_SETS = ("locomo", "persona", "longmemeval")


def dev_texts(name: str) -> list[str] | None:
    """Every text of one dev set (turns, messages, questions, haystack sessions); None when it is absent."""
    if name == "locomo":
        path = DATA / "locomo" / "locomo_dev.json"
        if not path.is_file():
            return None
        conversations = json.loads(path.read_text(encoding="utf-8"))["conversations"]
        turns = [
            turn["text"]
            for conversation in conversations
            for session in conversation["sessions"].values()
            for turn in session
        ]
        return turns + [
            qa["question"] for conversation in conversations for qa in conversation["qa"]
        ]
    if name == "persona":
        path = DATA / "persona" / "conversations.jsonl"
        if not path.is_file():
            return None
        return [json.loads(line)["content"] for line in _lines(path)]
    path = DATA / "longmemeval" / "lme_s_proxy_dev.jsonl"
    if not path.is_file():
        return None
    out: list[str] = []
    for line in _lines(path):
        row = json.loads(line)
        out.append(row["question"])
        out.extend(session["user_text_prefix"] for session in row["haystack"])
    return out


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as handle:
        yield from (line for line in handle if line.strip())


class Fts5Table:
    """An in-memory FTS5 table with the project's tokenizer and an fts5vocab 'instance' view of it."""

    def __init__(self, columns: Sequence[str] = ("content",)) -> None:
        self.columns = tuple(columns)
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5 ({', '.join(columns)}, tokenize = '{TOKENIZE}')"
        )
        self.db.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab (docs, 'instance')")

    def add(self, rows: Sequence[tuple[int, Sequence[str]]]) -> None:
        marks = ", ".join("?" for _ in self.columns)
        self.db.executemany(
            f"INSERT INTO docs (rowid, {', '.join(self.columns)}) VALUES (?, {marks})",
            [(rowid, *values) for rowid, values in rows],
        )

    def delete(self, rowid: int) -> None:
        self.db.execute("DELETE FROM docs WHERE rowid = ?", (rowid,))

    def tokens(self) -> dict[int, list[list[str]]]:
        """rowid -> per column, the stored tokens in position order."""
        out: dict[int, list[list[str]]] = {}
        rows = self.db.execute("SELECT term, doc, col, offset FROM vocab ORDER BY doc, col, offset")
        for term, doc, column, _offset in rows:
            per_column = out.setdefault(doc, [[] for _ in self.columns])
            per_column[self.columns.index(column)].append(term)
        return out

    def bm25(self, match: str, weights: Sequence[float] = ()) -> list[tuple[int, float]]:
        """(rowid, -bm25) of every matching row, best first (ties in rowid order), as the store ranks."""
        args = "".join(f", {float(w)!r}" for w in weights)
        sql = f"SELECT rowid, -bm25(docs{args}) AS score FROM docs WHERE docs MATCH ? ORDER BY score DESC"
        return [(int(rowid), float(score)) for rowid, score in self.db.execute(sql, (match,))]


_PEOPLE = ("Caroline", "Melanie", "Marcus", "Jorge", "Priya", "Tomás", "Zoë", "Ana")
_PLACES = ("Kyoto", "Lisbon", "the gym", "Denver", "the café", "Oaxaca", "the lake", "São Paulo")
_THINGS = (
    "running shoes", "a pottery class", "the e-mail", "sourdough", "my sister's wedding", "a new_job offer",
    "the quarterly report", "painting", "adoption agency", "camping trip", "guitar lessons", "the dentist",
)  # fmt: skip
_VERBS = (
    "went to",
    "talked about",
    "loved",
    "is planning",
    "started",
    "finished",
    "hated",
    "booked",
)
_TAILS = (
    "last week.",
    "yesterday!",
    "again, honestly.",
    "with friends :)",
    "in 2023?",
    "- it was great",
    "",
)


def synthetic_texts(count: int, seed: int = 7) -> list[str]:
    """Chat-like sentences over a small vocabulary (names, places, accents, underscores, hyphens), so common
    and rare words, repeats and exact duplicates all occur."""
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        parts = [
            f"{rnd.choice(_PEOPLE)} {rnd.choice(_VERBS)} {rnd.choice(_THINGS)} in {rnd.choice(_PLACES)}"
            f" {rnd.choice(_TAILS)}"
            for _ in range(rnd.randint(1, 3))
        ]
        out.append(" ".join(parts).strip())
    return out


def synthetic_questions(count: int, seed: int = 11) -> list[str]:
    """Questions over the same vocabulary as synthetic_texts, with words the texts never use."""
    rnd = random.Random(seed)
    extra = ("when", "what", "did", "who", "recently", "zebra", "mail", "job", "runs", "weddings")
    words = [
        w
        for group in (_PEOPLE, _PLACES, _THINGS, _VERBS)
        for phrase in group
        for w in phrase.split()
    ]
    return [
        " ".join(rnd.choice(words + list(extra)) for _ in range(rnd.randint(1, 6))) + "?"
        for _ in range(count)
    ]


def memory_rows(texts: Sequence[str]) -> list[tuple[int, tuple[str, str, str]]]:
    """Memory-like rows (content, summary, tags) made of texts: summaries from other texts (empty for every
    third row), tags as the JSON list the store keeps; some rows exact duplicates of others, for ties."""
    rows = []
    for i, text in enumerate(texts, 1):
        summary = "" if i % 3 == 0 else texts[(i * 7) % len(texts)][:60]
        tags = json.dumps(sorted({w.lower() for w in text.split()[:3]}))
        rows.append((i, (text, summary, tags)))
    for i in range(len(texts) + 1, len(texts) + 1 + len(texts) // 20):
        rows.append((i, rows[(i * 13) % len(texts)][1]))
    return rows


def match_expressions(questions: Sequence[str]) -> list[str]:
    """MATCH expressions the store builds from questions: words, words as prefixes, every word (AND)."""
    from hermes_bowerbird.store import fts_match_expression

    out = []
    for i, question in enumerate(questions):
        prefix_min, operator = ((0, "OR"), (4, "OR"), (3, "AND"), (0, "AND"))[i % 4]
        match = fts_match_expression(question, prefix_min=prefix_min, operator=operator)
        if match is not None:
            out.append(match)
    return out
