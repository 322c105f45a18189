"""Benchmark of the vector tier: exact and ANN search latency, recall, load time from SQLite and memory.

Run:  python benchmarks/bench_vectors.py [--million] [--sizes 1000,10000,100000] [--no-write]

Synthetic vectors stand in for embeddings: unit vectors scattered around many random centres (topic-like
clusters, as sentence embeddings are), queries are perturbed corpus points. Results go to the
``<!-- vectors -->`` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from report import machine_line, percentiles, rss_mb, write_section

from hermes_bowerbird.embeddings.index import VectorIndex, normalize_rows
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind

DIM = 384
NEVER = 2**62  # an ANN threshold that is never reached


def clustered(n: int, dim: int, seed: int, chunk: int = 100_000) -> Iterator[np.ndarray]:
    """Unit vectors around n/200 random centres, produced in chunks to bound peak memory."""
    rng = np.random.default_rng(seed)
    centres = normalize_rows(rng.standard_normal((max(8, n // 200), dim)).astype(np.float32))
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        picks = rng.integers(0, len(centres), m)
        noise = rng.standard_normal((m, dim)).astype(np.float32) * np.float32(0.9 / np.sqrt(dim))
        yield normalize_rows(centres[picks] + noise)


def corpus(n: int, dim: int = DIM, seed: int = 0) -> np.ndarray:
    out = np.empty((n, dim), np.float32)
    pos = 0
    for block in clustered(n, dim, seed):
        out[pos : pos + len(block)] = block
        pos += len(block)
    return out


def queries_for(data: np.ndarray, count: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picks = data[rng.integers(0, len(data), count)]
    noise = rng.standard_normal(picks.shape).astype(np.float32) * np.float32(
        0.6 / np.sqrt(data.shape[1])
    )
    return normalize_rows(picks + noise)


def time_search(search: Callable[[np.ndarray], object], queries: np.ndarray) -> tuple[float, float]:
    for q in queries[:10]:
        search(q)
    samples = []
    for q in queries:
        started = time.perf_counter()
        search(q)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


def exact_topk(data: np.ndarray, queries: np.ndarray, k: int) -> list[set[int]]:
    out = []
    for q in queries:
        scores = data @ q
        out.append(set(np.argpartition(scores, len(scores) - k)[len(scores) - k :].tolist()))
    return out


def bench_exact(n: int, n_queries: int) -> dict[str, str]:
    data = corpus(n)
    queries = queries_for(data, n_queries)
    before = rss_mb()
    index = VectorIndex.from_arrays(np.arange(n, dtype=np.int64), data, ann_threshold=NEVER)
    index_mb = rss_mb() - before
    p50, p95 = time_search(lambda q: index.search(q, 10), queries)
    allowed = np.arange(0, n, 10, dtype=np.int64)
    f50, _ = time_search(lambda q: index.search(q, 10, allowed), queries)
    truth = exact_topk(data, queries, 10)
    recall = np.mean(
        [
            len({i for i, _ in index.search(q, 10)} & t) / 10
            for q, t in zip(queries, truth, strict=True)
        ]
    )
    return {
        "size": f"{n:,}",
        "tier": "exact",
        "p50 ms": f"{p50:.3f}",
        "p95 ms": f"{p95:.3f}",
        "p50 ms, 10% id filter": f"{f50:.3f}",
        "recall@10": f"{recall:.3f}",
        "index RSS MB": f"{index_mb:.0f}",
    }


def bench_load(n: int) -> dict[str, str]:
    data = corpus(n, seed=2)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.db")
        try:
            for start in range(0, n, 10_000):
                block = data[start : start + 10_000]
                store.vectors.put(
                    ItemKind.MEMORY,
                    "bench",
                    list(zip(range(start + 1, start + 1 + len(block)), block, strict=True)),
                )
            started = time.perf_counter()
            ids, matrix = store.vectors.load(ItemKind.MEMORY, "bench", data.shape[1])
            loaded = time.perf_counter() - started
            index = VectorIndex.from_arrays(ids, matrix, ann_threshold=NEVER)
            total = time.perf_counter() - started
        finally:
            store.close()
    assert len(index) == n
    return {"size": f"{n:,}", "SELECT + decode s": f"{loaded:.3f}", "into index s": f"{total:.3f}"}


def time_exact(data: np.ndarray, queries: np.ndarray) -> tuple[float, float]:
    exact = VectorIndex.from_arrays(np.arange(len(data), dtype=np.int64), data, ann_threshold=NEVER)
    return time_search(lambda q: exact.search(q, 10), queries)


def bench_million(n_queries: int) -> tuple[list[dict[str, str]], str]:
    n = 1_000_000
    data = corpus(n, seed=3)
    queries = queries_for(data, n_queries)
    truth = exact_topk(data, queries, 10)
    e50, e95 = time_exact(data, queries)
    exact_mb = data.nbytes / 2**20  # the exact tier is this one float32 matrix
    gc.collect()
    # the corpus itself is freed below, once the index holds its own copy
    baseline = rss_mb() - exact_mb
    started = time.perf_counter()
    index = VectorIndex.from_arrays(np.arange(n, dtype=np.int64), data, ann_background=False)
    build = time.perf_counter() - started
    del data
    gc.collect()
    index_mb = rss_mb() - baseline
    p50, p95 = time_search(lambda q: index.search(q, 10), queries)
    recall = np.mean(
        [
            len({i for i, _ in index.search(q, 10)} & t) / 10
            for q, t in zip(queries, truth, strict=True)
        ]
    )
    rows = [
        {
            "size": "1,000,000",
            "tier": "exact (float32 matvec)",
            "p50 ms": f"{e50:.2f}",
            "p95 ms": f"{e95:.2f}",
            "p50 ms, 10% id filter": "-",
            "recall@10": "1.000",
            "index RSS MB": f"{exact_mb:.0f}",
        },
        {
            "size": "1,000,000",
            "tier": "ANN (usearch HNSW i8 + float16 rescoring)",
            "p50 ms": f"{p50:.2f}",
            "p95 ms": f"{p95:.2f}",
            "p50 ms, 10% id filter": "-",
            "recall@10": f"{recall:.3f}",
            "index RSS MB": f"{index_mb:.0f}",
        },
    ]
    return rows, f"ANN build (1M, synchronous, {os.cpu_count()} threads): {build:.0f} s"


def table(rows: list[dict[str, str]]) -> str:
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r[h] for h in head) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--load-sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--million", action="store_true", help="also run 1M exact and ANN (several minutes)"
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print only; leave RESULTS.md alone"
    )
    args = parser.parse_args(argv)
    search_rows = [bench_exact(int(s), args.queries) for s in args.sizes.split(",") if s]
    notes = []
    if args.million:
        rows, note = bench_million(args.queries)
        search_rows += rows
        notes.append(note)
    load_rows = [bench_load(int(s)) for s in args.load_sizes.split(",") if s]
    command = "python benchmarks/bench_vectors.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    body = "\n".join(
        [
            "## Vector tier (`benchmarks/bench_vectors.py`)",
            "",
            f"Command: `{command.strip()}`  ",
            f"Machine: {machine_line()}  ",
            f"Dimension {DIM}, k=10, {args.queries} queries; synthetic clustered unit vectors.",
            "",
            "Search latency (single query, one thread calling):",
            "",
            table(search_rows),
            "",
            "Load from SQLite (one SELECT, `b''.join` + `np.frombuffer`, then into the index):",
            "",
            table(load_rows),
            "",
            *[f"- {n}" for n in notes],
            "- Targets: exact p50 <= 0.5 ms at 10K, <= 8 ms at 100K; 1M p50 <= 5 ms with recall@10 >= 0.95 "
            "and <= 1.6 GB for vectors; load 100K <= 1.5 s.",
        ]
    )
    print(body)
    if not args.no_write:
        write_section("vectors", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
