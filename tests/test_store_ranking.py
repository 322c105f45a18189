"""The two backends rank full text alike: the same rows, in the same order, with FTS5's bm25 scores, for the
dev sets' questions over their own texts (and a built-in sample when the dev sets are absent)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from fts_oracle import dev_texts
from pg_server import PgTestServer

from hermes_bowerbird.store import Store, fts_match_expression
from hermes_bowerbird.types import MemoryType, NewEpisode, NewMemory, Source

SCOPES = ("user:a", "user:b")
SAMPLE = [
    "I always deploy with Ansible, and we never deploy on Fridays.",
    "My sister Meera lives in Pune; her birthday is on 4 March.",
    "We decided to use SQLite in WAL mode for Quillstack, since every install is a single node.",
    "Running late: the standup moved to 10am on Mondays.",
    "She was deploying services on Fridays before the freeze.",
    "Café Olé serves the best crème brûlée in town — naïve but true.",
    "snake_case_names and e-mail addresses like ada@example.com split oddly",
    "The deploy's rollback took 3.5 minutes; rollbacks usually take two.",
]
QUESTIONS = [
    "how do we deploy",
    "when is my sister's birthday",
    "which database did we decide on",
    "what time is the standup",
    "e-mail of ada",
    "creme brulee cafe",
    "snake case names",
    "snake_case_names e-mail",
    "rollback minutes",
]


def _corpus() -> tuple[list[str], list[str]]:
    texts = dev_texts("locomo")
    if texts is None:
        return SAMPLE * 3, QUESTIONS
    turns = [t for t in texts if not t.rstrip().endswith("?")][:400]
    questions = [t for t in texts if t.rstrip().endswith("?")][:100]
    return SAMPLE + turns, QUESTIONS + questions


def _fill(store: Store, texts: Sequence[str]) -> None:
    for n, text in enumerate(texts):
        scope = SCOPES[n % 2]
        if n % 3:
            store.insert_memory(
                NewMemory(
                    scope,
                    MemoryType.FACT,
                    text,
                    Source.TURN,
                    summary=text[:40] if n % 5 == 0 else None,
                    tags=("deploy", "ops") if "deploy" in text else (),
                )
            )
        else:
            store.episodes.insert(NewEpisode(scope, f"s{n}", n, 0, "user", text))


@pytest.fixture(scope="module")
def stores(
    tmp_path_factory: pytest.TempPathFactory, pg_server: PgTestServer
) -> Iterator[tuple[Store, Store]]:
    texts, _ = _corpus()
    url = pg_server.fresh()
    pair = (Store.open(tmp_path_factory.mktemp("rank") / "m.db"), Store.open(url))
    for store in pair:
        _fill(store, texts)
    yield pair
    for store in pair:
        store.close()


def _ranked(hits: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Best first, ties by id (FTS5 leaves the order of equal scores to its sorter)."""
    return sorted(((i, round(s, 6)) for i, s in hits), key=lambda hit: (-hit[1], hit[0]))


def test_both_backends_rank_every_question_alike(stores: tuple[Store, Store]) -> None:
    file, server = stores
    _, questions = _corpus()
    differ = []
    for question in questions:
        match = fts_match_expression(question)
        if match is None:
            continue
        for scopes in (SCOPES, SCOPES[:1]):
            ranked = [
                (
                    _ranked(store.search.memories(match, scopes, limit, by_scope=by_scope)),
                    _ranked(store.search.episodes(match, scopes, limit, by_scope=by_scope)),
                )
                for store, limit, by_scope in (
                    (file, 10_000, False),
                    (server, 10_000, False),
                    (server, 10_000, True),  # each scope ranked side by side, then merged
                )
            ]
            best_few = [
                _ranked(server.search.memories(match, scopes, 5, by_scope=by_scope))
                for by_scope in (False, True)
            ]
            if ranked[0] != ranked[1] or ranked[1] != ranked[2] or best_few[0] != best_few[1]:
                differ.append(json.dumps([question, scopes]))
    assert differ == []


def test_both_backends_count_terms_alike(stores: tuple[Store, Store]) -> None:
    file, server = stores
    words = ["deploy", "sister", "birthday", "the", "fridays", "brulee", "snake", "nothing"]
    assert server.search.term_document_counts(words) == file.search.term_document_counts(words)
    assert server.search.corpus_size() == file.search.corpus_size()


def test_only_current_memories_when_asked(stores: tuple[Store, Store]) -> None:
    file, server = stores
    match = fts_match_expression("deploy fridays")
    assert match is not None
    assert _ranked(server.search.memories(match, SCOPES, 100, current_only=True)) == _ranked(
        file.search.memories(match, SCOPES, 100, current_only=True)
    )


def test_term_counts_follow_rows_that_come_change_and_go(
    tmp_path: Path, pg_server: PgTestServer
) -> None:
    """fts_stats (the totals), fts_terms (document frequencies) and fts_postings (each row's words) stay what the
    rows give as rows are added, edited by hand and repaired, and deleted; search and term counts stay FTS5's."""
    texts, questions = _corpus()
    pair = (Store.open(tmp_path / "m.db"), Store.open(pg_server.fresh()))
    words = sorted({w for q in questions[:30] for w in q.lower().split() if w.isalpha()})
    for store in pair:
        _fill(store, texts[:120])
        store.db.execute("DELETE FROM episodes WHERE id % 4 = 0")
        store.db.execute("UPDATE memories SET content = 'deploy rollback on fridays' WHERE id = 2")
        store.search.rebuild()
        store.db.execute("DELETE FROM memories WHERE id % 5 = 0")
        _fill(store, texts[120:160])
    file, server = pair
    recount = {
        (str(row[0]), str(row[1])): int(row[2])
        for row in server.db.query(
            """
            SELECT tbl, lexeme, count(*) FROM (
                SELECT 'memories' AS tbl, unnest(tsvector_to_array(fts)) AS lexeme FROM memories
                UNION ALL
                SELECT 'episodes', unnest(tsvector_to_array(fts)) FROM episodes
            ) held
            GROUP BY tbl, lexeme
        """
        )
    }
    kept = {
        (str(row[0]), str(row[1])): int(row[2])
        for row in server.db.query("SELECT tbl, lexeme, rows FROM fts_terms WHERE rows <> 0")
    }
    assert kept == recount
    assert server.search.integrity() == {
        "memories_fts": True,
        "episodes_fts": True,
    }  # fts_stats' totals
    postings = """
        SELECT tbl, lexeme, scope, item_id, hits_a, hits_b, hits_c, fts_len FROM {source} ORDER BY 1, 2, 3, 4
    """
    rebuilt = postings.format(
        source="(SELECT p.* FROM memories m, bowerbird_fts_postings('memories', m.scope, m.id, m.fts, m.fts_len) p "
        "UNION ALL SELECT p.* FROM episodes e, bowerbird_fts_postings('episodes', e.scope, e.id, e.fts, e.fts_len) p) x"
    )
    assert server.db.query(postings.format(source="fts_postings")) == server.db.query(rebuilt)
    assert server.search.term_document_counts(words) == file.search.term_document_counts(words)
    # compared by text: the ids of rows added after a deletion differ (SQLite reuses the highest)
    for question in questions[:30]:
        match = fts_match_expression(question)
        if match is not None:
            assert _by_text(server, match) == _by_text(file, match)
    for store in pair:
        store.close()


def _by_text(store: Store, match: str) -> list[tuple[float, str]]:
    hits = store.search.memories(match, SCOPES, 1000)
    texts = {i: m.content for i, m in store.memories.get_many([i for i, _ in hits]).items()}
    return sorted((-round(score, 6), texts[i]) for i, score in hits)


def _both_holding(
    tmp_path: Path, pg_server: PgTestServer, texts: Sequence[str]
) -> tuple[Store, Store]:
    """A file and a server store holding these memories, alternately in the two scopes."""
    pair = (Store.open(tmp_path / "m.db"), Store.open(pg_server.fresh()))
    for store in pair:
        for n, text in enumerate(texts):
            store.insert_memory(NewMemory(SCOPES[n % 2], MemoryType.FACT, text, Source.TURN))
    return pair


def test_the_best_few_stay_exact_when_the_best_rows_are_forgotten(
    tmp_path: Path, pg_server: PgTestServer
) -> None:
    """PostgreSQL scores rows from the postings and reads only the best few to keep the live ones; when most of
    those were forgotten it checks them all, so a short list is still the best live rows FTS5 gives."""
    texts = [
        f"deploy {'deploy ' * (n % 4)}note {n} " + "filler words here " * (n % 7) for n in range(60)
    ]
    file, server = pair = _both_holding(tmp_path, pg_server, texts)
    match = fts_match_expression("deploy note")
    assert match is not None
    assert _ranked(server.search.memories(match, SCOPES, 3)) == _ranked(
        file.search.memories(match, SCOPES, 3)
    )
    best = [memory_id for memory_id, _ in file.search.memories(match, SCOPES, 30)]
    for store in pair:
        for memory_id in best:
            store.forget(memory_id, reason="test", actor="test")
    for limit in (3, 10):
        kept = _ranked(server.search.memories(match, SCOPES, limit))
        assert kept == _ranked(file.search.memories(match, SCOPES, limit))
        assert kept == _ranked(server.search.memories(match, SCOPES, limit, by_scope=True))
        assert len(kept) == limit and not set(best) & {memory_id for memory_id, _ in kept}
    for store in pair:
        store.close()


def test_scopes_ranked_side_by_side_keep_the_best_live_rows_when_the_merge_leaves_rows_out(
    tmp_path: Path, pg_server: PgTestServer
) -> None:
    """Each scope's part holds fewer rows than it was asked for, together more: when the best of the merge were
    forgotten, the live rows the merge left out are found again, as one statement over both scopes finds them."""
    texts = [f"deploy {'deploy ' * (n % 5)}note {n} " + "filler here " * (n % 3) for n in range(20)]
    file, server = pair = _both_holding(tmp_path, pg_server, texts)
    match = fts_match_expression("deploy note")
    assert match is not None
    best = [memory_id for memory_id, _ in file.search.memories(match, SCOPES, 10)]
    for store in pair:
        for memory_id in best:
            store.forget(memory_id, reason="test", actor="test")
    kept = _ranked(server.search.memories(match, SCOPES, 3, by_scope=True))
    assert kept == _ranked(file.search.memories(match, SCOPES, 3)) and len(kept) == 3
    for store in pair:
        store.close()
