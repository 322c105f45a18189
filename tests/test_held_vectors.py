"""A host's copy of small scopes' vectors on a shared store: ranked as the server ranks them, and kept in step with
what any host adds, rewrites, re-embeds or deletes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import cast

import numpy as np
import psycopg
import pytest

from hermes_bowerbird.store import Store
from hermes_bowerbird.store.postgres import held as held_module
from hermes_bowerbird.store.postgres.connection import ServerConnection
from hermes_bowerbird.store.postgres.held import HeldVectors
from hermes_bowerbird.types import ItemKind, MemoryType, NewMemory, Source

DIM = 16
MODEL = "m"


@pytest.fixture
def stores(pg_url: str) -> Iterator[tuple[Store, Store]]:
    """Two hosts' stores on one database: `a` searches, `b` writes."""
    a, b = Store.open(pg_url), Store.open(pg_url)
    yield a, b
    a.close()
    b.close()


def _server(store: Store) -> ServerConnection:
    return cast("ServerConnection", store.db)


def _memories(store: Store, scope: str, n: int) -> list[int]:
    return [
        store.insert_memory(
            NewMemory(scope, MemoryType.FACT, f"{scope} fact {i}", source=Source.TURN)
        ).id
        for i in range(n)
    ]


def _with_vectors(store: Store, rng: np.random.Generator, scope: str, n: int) -> list[int]:
    """`n` new memories of `scope`, each with a random vector of MODEL."""
    ids = _memories(store, scope, n)
    store.vectors.put(ItemKind.MEMORY, MODEL, list(zip(ids, _random(rng, n), strict=True)))
    return ids


def _random(rng: np.random.Generator, n: int = 1) -> np.ndarray:
    return rng.standard_normal((n, DIM)).astype(np.float32)


def _held(
    held: HeldVectors, query: np.ndarray, k: int, scopes: Sequence[str]
) -> list[tuple[int, float]]:
    """The held ranking, once the background reader has read every scope searched."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = held.nearest(ItemKind.MEMORY, MODEL, query, k, scopes)
        if found is not None:
            return found
        time.sleep(0.02)
    raise AssertionError("the scopes were never read into memory")


def _cosine(vectors: dict[int, np.ndarray], query: np.ndarray, k: int) -> list[int]:
    score = {
        i: float(v @ query / (np.linalg.norm(v) * np.linalg.norm(query)))
        for i, v in vectors.items()
    }
    return sorted(score, key=lambda i: -score[i])[:k]


def _recorded(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements the store sends from now on (kept in the list returned)."""
    asked: list[str] = []
    real_query = store.db.query

    def counted(sql: str, params: object = (), **kwargs: object) -> object:
        asked.append(sql)
        return real_query(sql, params, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store.db, "query", counted)
    return asked


def _until_ranked_here(asked: list[str], search: Callable[[], object], what: str) -> object:
    """`search()` again until the server is asked for no ranking (the store holds what it searches); its last
    answer."""
    deadline = time.monotonic() + 10
    while True:
        asked.clear()
        found = search()
        if not any("<=>" in sql for sql in asked):
            return found
        assert time.monotonic() < deadline, f"{what} never ranked in memory"
        time.sleep(0.02)


def test_held_scopes_rank_as_the_server_does(
    stores: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = stores
    rng = np.random.default_rng(1)
    mine, shared, theirs = (
        _memories(b, "user:a", 40),
        _memories(b, "team", 30),
        _memories(b, "user:b", 30),
    )
    for ids in (mine, shared, theirs):
        b.vectors.put(ItemKind.MEMORY, MODEL, list(zip(ids, _random(rng, len(ids)), strict=True)))
    query = _random(rng)[0]
    scopes = ["user:a", "team"]

    # the server's, while not held
    served = a.vectors.nearest(ItemKind.MEMORY, MODEL, query, 12, scopes)
    held = _held(HeldVectors(_server(a)), query, 12, scopes)

    assert [i for i, _ in held] == [i for i, _ in served]
    assert [s for _, s in held] == pytest.approx([s for _, s in served], abs=1e-5)
    assert not set(i for i, _ in held) & set(theirs)
    # the store's own search ranks them here too, once it holds them: the server is asked no ranking
    asked = _recorded(a, monkeypatch)

    def search() -> list[tuple[int, float]]:
        found = a.vectors.nearest(ItemKind.MEMORY, MODEL, query, 12, scopes)
        assert [i for i, _ in found] == [i for i, _ in served]
        return found

    found = _until_ranked_here(asked, search, "the store's search")
    assert found == held


def test_what_another_host_adds_rewrites_and_deletes_is_seen_at_the_next_search(
    stores: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(held_module, "MARKS_FRESH_SECONDS", 0.0)  # each search here reads them anew
    a, b = stores
    rng = np.random.default_rng(2)
    ids = _memories(b, "user:a", 20)
    vectors = dict(zip(ids, _random(rng, len(ids)), strict=True))
    b.vectors.put(ItemKind.MEMORY, MODEL, list(vectors.items()))
    held = HeldVectors(_server(a))
    query = _random(rng)[0]
    _held(held, query, 5, ["user:a"])

    added = _memories(b, "user:a", 1)[0]
    vectors[added] = query * 2  # the best match there can be
    b.vectors.put(ItemKind.MEMORY, MODEL, [(added, vectors[added])])
    found = held.nearest(ItemKind.MEMORY, MODEL, query, 5, ["user:a"])
    assert found is not None and found[0] == (added, pytest.approx(1.0, abs=1e-5))

    vectors[ids[3]] = query + 0.01  # rewritten: now second best
    b.vectors.put(ItemKind.MEMORY, MODEL, [(ids[3], vectors[ids[3]])])
    found = held.nearest(ItemKind.MEMORY, MODEL, query, 5, ["user:a"])
    assert found is not None and [i for i, _ in found] == _cosine(vectors, query, 5)

    b.vectors.delete(ItemKind.MEMORY, [added])  # gone: the scope is read again whole
    del vectors[added]
    assert [i for i, _ in _held(held, query, 5, ["user:a"])] == _cosine(vectors, query, 5)

    b.vectors.put(ItemKind.MEMORY, "other", [(ids[3], query)])
    del vectors[ids[3]]  # re-embedded by another model: no longer this model's
    found = held.nearest(ItemKind.MEMORY, MODEL, query, 5, ["user:a"])
    assert found is not None and [i for i, _ in found] == _cosine(vectors, query, 5)


def test_a_new_scope_is_read_in_the_background_and_held_within_the_budget(
    stores: tuple[Store, Store],
) -> None:
    a, b = stores
    rng = np.random.default_rng(3)
    for scope in ("user:a", "user:b", "user:c"):
        ids = _memories(b, scope, 50)
        b.vectors.put(ItemKind.MEMORY, MODEL, list(zip(ids, _random(rng, len(ids)), strict=True)))
    one_scope = 50 * (DIM * 4 + 16)
    held = HeldVectors(_server(a), budget=2 * one_scope)
    query = _random(rng)[0]

    assert held.nearest(ItemKind.MEMORY, MODEL, query, 5, ["user:a"]) is None  # not held yet
    _held(held, query, 5, ["user:a"])
    _held(held, query, 5, ["user:b"])
    _held(held, query, 5, ["user:c"])  # over the budget: user:a, searched least recently, is let go
    assert held.nearest(ItemKind.MEMORY, MODEL, query, 5, ["user:c"]) is not None
    assert held.nearest(ItemKind.MEMORY, MODEL, query, 5, ["user:a"]) is None
    empty = HeldVectors(_server(a))
    assert _held(empty, query, 5, ["user:nobody"]) == []


def test_vectors_read_by_id_come_from_memory_except_those_this_process_is_writing(
    stores: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = stores
    rng = np.random.default_rng(4)
    ids = _with_vectors(b, rng, "user:a", 10)
    query = _random(rng)[0]
    deadline = time.monotonic() + 10
    while not _served_here(a, ids, monkeypatch):
        a.vectors.nearest(ItemKind.MEMORY, MODEL, query, 3, ["user:a"])  # reads the scope in
        assert time.monotonic() < deadline, "the scope was never held"
        time.sleep(0.02)

    def stored(item_id: int) -> np.ndarray:
        with psycopg.connect(_server(a).address) as conn:
            row = conn.execute(
                "SELECT vector::text FROM embeddings WHERE item_id = %s", (item_id,)
            ).fetchone()
        assert row is not None
        return np.array(row[0].strip("[]").split(","), np.float32)

    new = _random(rng)[0]
    with pytest.raises(RuntimeError), a.transaction():  # a write of this process, rolled back
        a.vectors.put(ItemKind.MEMORY, MODEL, [(ids[0], new)])
        raise RuntimeError
    got = a.vectors.get_many(ItemKind.MEMORY, MODEL, DIM, [ids[0]])[ids[0]]
    assert np.allclose(got / np.linalg.norm(got), stored(ids[0]) / np.linalg.norm(stored(ids[0])))

    # committed: the server's until read back
    a.vectors.put(ItemKind.MEMORY, MODEL, [(ids[1], new)])
    assert not _served_here(a, [ids[1]], monkeypatch)
    got = a.vectors.get_many(ItemKind.MEMORY, MODEL, DIM, [ids[1]])[ids[1]]
    assert np.allclose(got, new, atol=1e-6)
    a.vectors.nearest(ItemKind.MEMORY, MODEL, query, 3, ["user:a"])  # reads the new row back
    assert _served_here(a, [ids[1]], monkeypatch)
    got = a.vectors.get_many(ItemKind.MEMORY, MODEL, DIM, [ids[1]])[ids[1]]
    assert np.allclose(got, new / np.linalg.norm(new), atol=1e-6)


def _served_here(store: Store, ids: list[int], monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether reading these items' vectors asks the server nothing."""
    with monkeypatch.context() as patch:
        asked = _recorded(store, patch)
        found = store.vectors.get_many(ItemKind.MEMORY, MODEL, DIM, ids)
    return len(found) == len(ids) and not asked


def test_the_kinds_of_one_search_share_one_read_of_the_marks_and_a_write_here_reads_them_again(
    stores: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = stores
    rng = np.random.default_rng(5)
    _with_vectors(b, rng, "user:a", 5)
    query = _random(rng)[0]
    asked = _recorded(a, monkeypatch)
    kinds = (ItemKind.MEMORY, ItemKind.QUESTION, ItemKind.EPISODE)
    _until_ranked_here(
        asked,
        lambda: [a.vectors.nearest(kind, MODEL, query, 3, ["user:a"]) for kind in kinds],
        "a search of every kind",
    )

    monkeypatch.setattr(held_module, "MARKS_FRESH_SECONDS", 60.0)
    asked.clear()
    for kind in kinds:
        a.vectors.nearest(kind, MODEL, query, 3, ["user:a"])
    assert sum("embedding_scopes" in sql for sql in asked) <= 1  # once for the three kinds

    added = _memories(a, "user:a", 1)[0]
    a.vectors.put(ItemKind.MEMORY, MODEL, [(added, query)])  # this process writes: read again
    asked.clear()
    found = a.vectors.nearest(ItemKind.MEMORY, MODEL, query, 3, ["user:a"])
    assert sum("embedding_scopes" in sql for sql in asked) == 1
    assert found[0][0] == added
