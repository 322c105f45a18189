"""Tests for the in-memory vector index, its ANN tier and the process-wide registry."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from hermes_bowerbird.embeddings.index import IndexRegistry, VectorIndex, normalize_rows
from hermes_bowerbird.errors import EmbeddingError
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind

DIM = 16


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    return normalize_rows(rng.standard_normal((n, dim)).astype(np.float32))


def brute_force(ids: np.ndarray, mat: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    scores = mat @ (q / np.linalg.norm(q))
    return [int(ids[i]) for i in np.argsort(-scores)[:k]]


def test_search_matches_brute_force_and_is_sorted() -> None:
    rng = np.random.default_rng(1)
    ids = np.arange(100, 600, dtype=np.int64)
    mat = unit(rng, len(ids))
    index = VectorIndex.from_arrays(ids, mat)
    q = rng.standard_normal(DIM).astype(np.float32)
    hits = index.search(q, 10)
    assert [i for i, _ in hits] == brute_force(ids, mat, q, 10)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0001 <= s <= 1.0001 for s in scores)


def test_self_query_scores_one_and_rows_are_normalised() -> None:
    index = VectorIndex(3)
    index.add([7, 8], np.array([[3.0, 0, 0], [0, 2.0, 0]], np.float32))
    (best_id, best), _ = index.search([10.0, 0, 0], 2)
    assert best_id == 7 and best == pytest.approx(1.0, abs=1e-6)
    stored = index.get(8)
    assert stored is not None and np.linalg.norm(stored) == pytest.approx(1.0)


@pytest.mark.parametrize("k, expected_len", [(0, 0), (1, 1), (3, 3), (50, 5)])
def test_k_is_clipped_to_live_rows(k: int, expected_len: int) -> None:
    rng = np.random.default_rng(2)
    index = VectorIndex.from_arrays(np.arange(5), unit(rng, 5))
    assert len(index.search(rng.standard_normal(DIM), k)) == expected_len


def test_delete_tombstones_rows_and_upsert_replaces() -> None:
    index = VectorIndex(2)
    index.add([1, 2, 3], np.array([[1, 0], [0.9, 0.1], [0, 1]], np.float32))
    assert index.remove([1, 99]) == 1
    assert 1 not in index and len(index) == 2
    assert [i for i, _ in index.search([1, 0], 3)] == [2, 3]
    index.add([3], np.array([[1, 0]], np.float32))  # id 3 now points the other way
    hits = index.search([1, 0], 3)
    assert [i for i, _ in hits] == [3, 2]
    assert len(index) == 2 and index.stats()["tombstones"] == 2


def test_duplicate_ids_in_one_batch_keep_the_last_vector() -> None:
    index = VectorIndex(2)
    index.add([5, 5], np.array([[1, 0], [0, 1]], np.float32))
    assert len(index) == 1
    assert index.search([0, 1], 1)[0][1] == pytest.approx(1.0)


def test_append_grows_without_losing_rows_and_compaction_keeps_results() -> None:
    rng = np.random.default_rng(3)
    index = VectorIndex(DIM)
    all_ids, all_rows = [], []
    for batch in range(40):  # 40 x 100 rows: several capacity growths
        ids = np.arange(batch * 100, batch * 100 + 100)
        rows = unit(rng, 100)
        index.add(ids, rows)
        all_ids.append(ids)
        all_rows.append(rows)
    ids, mat = np.concatenate(all_ids), np.concatenate(all_rows)
    assert len(index) == 4000 and int(str(index.stats()["capacity"])) >= 4000
    q = rng.standard_normal(DIM).astype(np.float32)
    assert [i for i, _ in index.search(q, 5)] == brute_force(ids, mat, q, 5)
    index.remove(ids[:2000])  # more than a quarter: compacts
    assert index.stats()["tombstones"] == 0 and len(index) == 2000
    assert [i for i, _ in index.search(q, 5)] == brute_force(ids[2000:], mat[2000:], q, 5)


@pytest.mark.parametrize("as_kind", ["set", "list", "array", "mask"])
@pytest.mark.parametrize("allowed_count", [3, 300, 900])
def test_filters_restrict_results(as_kind: str, allowed_count: int) -> None:
    rng = np.random.default_rng(4)
    ids = np.arange(1000, 2000, dtype=np.int64)
    mat = unit(rng, 1000)
    index = VectorIndex.from_arrays(ids, mat)
    allowed_ids = rng.choice(ids, allowed_count, replace=False)
    allowed: object
    if as_kind == "set":
        allowed = {int(i) for i in allowed_ids}
    elif as_kind == "list":
        allowed = [int(i) for i in allowed_ids]
    elif as_kind == "array":
        allowed = allowed_ids
    else:
        allowed = np.isin(index.row_ids(), allowed_ids)
    q = rng.standard_normal(DIM).astype(np.float32)
    keep = np.isin(ids, allowed_ids)
    expected = brute_force(ids[keep], mat[keep], q, 10)
    assert [i for i, _ in index.search(q, 10, allowed)] == expected


def test_filter_ignores_deleted_and_unknown_ids() -> None:
    index = VectorIndex(2)
    index.add([1, 2], np.array([[1, 0], [0, 1]], np.float32))
    index.remove([1])
    assert index.search([1, 0], 5, {1, 2, 3}) == [(2, pytest.approx(0.0, abs=1e-6))]
    assert index.search([1, 0], 5, set()) == []


def test_a_reused_frozenset_filter_follows_removals_and_additions() -> None:
    index = VectorIndex(2)
    index.add([1, 2, 3], np.array([[1, 0], [0.9, 0.1], [0.8, 0.2]], np.float32))
    allowed = frozenset({1, 2})
    assert [i for i, _ in index.search([1, 0], 5, allowed)] == [1, 2]
    index.remove([1])
    assert [i for i, _ in index.search([1, 0], 5, allowed)] == [2]
    index.add([4], np.array([[1, 0]], np.float32))
    assert [i for i, _ in index.search([1, 0], 5, allowed)] == [2]


def test_a_frozenset_admitting_every_row_ranks_as_no_filter() -> None:
    rng = np.random.default_rng(9)
    ids = np.arange(1, 301, dtype=np.int64)
    index = VectorIndex.from_arrays(ids, unit(rng, 300))
    q = rng.standard_normal(DIM).astype(np.float32)
    assert index.search(q, 10, frozenset(int(i) for i in ids)) == index.search(q, 10)


def test_short_mask_excludes_rows_added_after_it() -> None:
    index = VectorIndex(2)
    index.add([1], np.array([[1, 0]], np.float32))
    mask = np.ones(len(index.row_ids()), np.bool_)
    index.add([2], np.array([[1, 0]], np.float32))
    assert [i for i, _ in index.search([1, 0], 5, mask)] == [1]


def test_wrong_dimension_raises_a_clear_error() -> None:
    index = VectorIndex(4)
    with pytest.raises(EmbeddingError, match="reindex"):
        index.search(np.ones(3), 1)
    with pytest.raises(EmbeddingError):
        index.add([1], np.ones((1, 5)))


def test_empty_index_searches_return_nothing() -> None:
    assert VectorIndex(4).search(np.ones(4), 3) == []


def test_concurrent_readers_while_one_writer_appends_and_deletes() -> None:
    rng = np.random.default_rng(5)
    index = VectorIndex.from_arrays(np.arange(2000), unit(rng, 2000))
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader(seed: int) -> None:
        local = np.random.default_rng(seed)
        try:
            while not stop.is_set():
                hits = index.search(
                    local.standard_normal(DIM), 10, None if seed % 2 else set(range(0, 20_000, 3))
                )
                assert len(hits) <= 10
                assert all(hits[j][1] >= hits[j + 1][1] for j in range(len(hits) - 1))
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for step in range(60):
        base = 2000 + step * 200
        index.add(np.arange(base, base + 200), unit(rng, 200))
        index.remove(np.arange(step * 50, step * 50 + 50))
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(index) == 2000 + 60 * 200 - 60 * 50


def test_ann_tier_serves_large_indexes_with_exact_rescoring() -> None:
    pytest.importorskip("usearch")
    rng = np.random.default_rng(6)
    n = 3000
    ids = np.arange(n, dtype=np.int64) + 10
    mat = unit(rng, n)
    index = VectorIndex(DIM, ann_threshold=1000, ann_background=False)
    index.add(ids, mat)
    assert index.ann_active and index.stats()["ann"] == "ready"
    recall = []
    for _ in range(20):
        q = rng.standard_normal(DIM).astype(np.float32)
        hits = index.search(q, 10)
        expected = brute_force(ids, mat, q, 10)
        recall.append(len({i for i, _ in hits} & set(expected)) / 10)
        exact = mat[ids.searchsorted(hits[0][0])] @ (q / np.linalg.norm(q))
        assert hits[0][1] == pytest.approx(float(exact), abs=2e-3)
    assert np.mean(recall) >= 0.9
    index.remove([int(i) for i, _ in index.search(mat[0], 1)])
    assert all(i != ids[0] for i, _ in index.search(mat[0], 5))
    index.add([99_999], mat[:1])
    assert index.search(mat[0], 1)[0][0] == 99_999
    allowed = {int(ids[5]), int(ids[6])}
    assert {i for i, _ in index.search(mat[5], 10, allowed)} == allowed


def test_ann_builds_in_background_and_catches_up_with_writes() -> None:
    pytest.importorskip("usearch")
    rng = np.random.default_rng(7)
    index = VectorIndex(DIM, ann_threshold=2000)
    index.add(np.arange(2500), unit(rng, 2500))
    index.add([50_000], unit(rng, 1))
    index.remove([0])
    assert index.wait_ann(30)
    extra = index.get(50_000)
    assert extra is not None
    assert index.search(extra, 1)[0][0] == 50_000
    assert 0 not in {i for i, _ in index.search(unit(rng, 1)[0], 2500)}


def test_registry_loads_once_and_shares_the_index(tmp_path: Path) -> None:
    calls = []

    def loader() -> tuple[np.ndarray, np.ndarray]:
        calls.append(1)
        return np.array([1, 2]), np.eye(2, DIM, dtype=np.float32)

    registry = IndexRegistry()
    db = tmp_path / "m.db"
    first = registry.get(db, "memory", "m1", DIM, loader)
    second = registry.get(str(db), "memory", "m1", DIM, loader)
    assert first is second and len(calls) == 1 and len(first) == 2
    other = registry.get(db, "episode", "m1", DIM, loader)
    assert other is not first and len(calls) == 2
    registry.drop(db)
    assert registry.peek(db, "memory", "m1") is None


def test_registry_gives_one_reindex_lock_per_database(tmp_path: Path) -> None:
    registry = IndexRegistry()
    assert registry.reindex_lock(tmp_path / "m.db") is registry.reindex_lock(str(tmp_path / "m.db"))


def test_registry_gives_each_database_its_own_reindex_lock(tmp_path: Path) -> None:
    registry = IndexRegistry()
    assert registry.reindex_lock(tmp_path / "a.db") is not registry.reindex_lock(tmp_path / "b.db")


def test_a_dropped_database_gets_a_fresh_reindex_lock(tmp_path: Path) -> None:
    registry = IndexRegistry()
    old = registry.reindex_lock(tmp_path / "m.db")
    with old:  # a reindex of the old file still running when the file is closed
        registry.drop(tmp_path / "m.db")
        fresh = registry.reindex_lock(tmp_path / "m.db")
        assert fresh.acquire(blocking=False)
        fresh.release()


def test_registry_starts_empty_when_stored_dimension_differs(tmp_path: Path) -> None:
    registry = IndexRegistry()
    index = registry.get(
        tmp_path / "m.db", "memory", "m", 8, lambda: (np.array([1]), np.ones((1, 4)))
    )
    assert len(index) == 0 and index.dim == 8


def test_registry_concurrent_first_use_loads_once(tmp_path: Path) -> None:
    calls = []
    barrier = threading.Barrier(4)

    def loader() -> tuple[np.ndarray, np.ndarray]:
        calls.append(1)
        return np.array([1]), np.ones((1, DIM), np.float32)

    registry = IndexRegistry()
    got: list[VectorIndex] = []

    def use() -> None:
        barrier.wait()
        got.append(registry.get(tmp_path / "x.db", "memory", "m", DIM, loader))

    threads = [threading.Thread(target=use) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and all(g is got[0] for g in got)


def test_index_loaded_from_store_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    store = Store.open(tmp_path / "v.db")
    try:
        mat = unit(rng, 50)
        store.vectors.put(ItemKind.EPISODE, "m", list(zip(range(1, 51), mat, strict=True)))
        index = IndexRegistry().get(
            store.path, "episode", "m", DIM, lambda: store.vectors.load(ItemKind.EPISODE, "m", DIM)
        )
        assert len(index) == 50
        assert index.search(mat[9], 1)[0][0] == 10
    finally:
        store.close()
