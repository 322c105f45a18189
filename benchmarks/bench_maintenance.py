"""Benchmark of the maintenance jobs: time and peak memory of each job at 10K and 100K memories.

Run:  python benchmarks/bench_maintenance.py [--sizes 10000,100000] [--new 1000] [--no-write]

Synthetic memories of every type, spread over two years, in a profile scope and four user scopes; random
unit vectors stand in for embeddings, with 5% of memories in tight groups of four (so association and
consolidation find real work). "Incremental" means the last `--new` memories are new since the previous run.
Results go to the ``<!-- maintenance -->`` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import machine_line, rss_mb, write_section

from hermes_bowerbird.config import Config, build_config
from hermes_bowerbird.embeddings.index import normalize_rows
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.maintenance import Maintenance
from hermes_bowerbird.maintenance.associate import CURSOR_KEY as ASSOCIATE_CURSOR
from hermes_bowerbird.maintenance.consolidate import CURSOR_KEY as CONSOLIDATE_CURSOR
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewMemory, Source

DIM = 384
DAY = 86_400.0
T_END = 1_750_000_000.0
SCOPES = ("profile:default", "user:u1", "user:u2", "user:u3", "user:u4")
TYPES = list(MemoryType)


class RandomEmbedder:
    """Deterministic random unit vectors per text: the shape of a real model, none of its cost."""

    model_name = "bench-random"
    dimension = DIM
    is_local = True

    def embed(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        return normalize_rows(np.random.default_rng(seed).standard_normal((1, DIM)))[0]

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.embed(t) for t in texts]) if texts else np.empty((0, DIM), np.float32)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class PeakRss:
    """Samples the process RSS on a thread; `peak_mb` is the rise above the starting RSS."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._start = self._peak = rss_mb()
        self._thread = threading.Thread(target=self._sample, name="bench-rss", daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._peak = max(self._peak, rss_mb())

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self._peak = max(self._peak, rss_mb())

    @property
    def peak_mb(self) -> float:
        return self._peak - self._start


def vectors_for(n: int, rng: np.random.Generator) -> np.ndarray:
    """Random unit vectors; 5% of memories form tight groups of four of one scope and type (cosine ~0.93)."""
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    group = np.arange(4) * len(TYPES)  # same scope and type: ids ten apart
    for start in range(0, n - group[-1], 800):
        for offset in range(len(TYPES)):  # ten disjoint groups in the first 40 rows of each 800
            rows = start + offset + group
            base = matrix[rows[0]] / np.linalg.norm(matrix[rows[0]])
            matrix[rows] = base + rng.standard_normal((4, DIM)).astype(np.float32) * 0.014
    return normalize_rows(matrix)


def build(path: Path, n: int, config: Config, seed: int = 7) -> tuple[Store, VectorTier, Clock]:
    rng = np.random.default_rng(seed)
    clock = Clock(T_END - 730 * DAY)
    store = Store.open(path, clock=clock)
    step = 730 * DAY / n
    for i in range(n):
        clock.now += step
        type_ = TYPES[i % len(TYPES)]
        store.insert_memory(
            NewMemory(
                SCOPES[i % len(SCOPES)],
                type_,
                f"synthetic {type_} memory number {i}",
                Source.TURN,
                importance=float(rng.uniform(0.05, 1.0)),
                subject=f"subject:{i % 997}" if type_ is MemoryType.FACT else None,
            )
        )
    matrix = vectors_for(n, rng)
    for start in range(0, n, 10_000):
        chunk = range(start + 1, min(n, start + 10_000) + 1)
        store.vectors.put(
            ItemKind.MEMORY, RandomEmbedder.model_name, [(i, matrix[i - 1]) for i in chunk]
        )
    vectors = VectorTier(
        store, EmbeddingService.from_embedder(RandomEmbedder(), store, cache=False)
    )
    return store, vectors, clock


def timed(fn: Callable[[], dict[str, object]]) -> tuple[float, float, dict[str, object]]:
    with PeakRss() as peak:
        started = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - started
    return elapsed, peak.peak_mb, result


def counts(result: dict[str, object]) -> str:
    keep = (
        "scanned",
        "low",
        "newly_low",
        "candidate_count",
        "forgotten",
        "purged",
        "processed",
        "related",
        "superseded",
        "clusters",
        "linked",
        "rebuilt",
    )
    return ", ".join(
        f"{k} {len(v) if isinstance(v, list) else v}" for k, v in result.items() if k in keep
    )


def bench_size(n: int, new: int, workdir: Path) -> list[str]:
    config = build_config(
        workdir, {"db_path": str(workdir / f"bench-{n}.db"), "maintenance_job_seconds": 60}
    )
    started = time.perf_counter()
    store, vectors, clock = build(config.db_path, n, config)
    print(f"{n}: built in {time.perf_counter() - started:.1f}s", flush=True)
    load_s, load_mb, _ = timed(lambda: {"rows": len(vectors.index(ItemKind.MEMORY) or [])})
    maintenance = Maintenance(store, vectors, config, clock)
    first_new = n - new
    store.meta.set(ASSOCIATE_CURSOR, str(first_new))
    store.meta.set(CONSOLIDATE_CURSOR, str(first_new))
    rows = [f"| {n:,} | index load | {load_s:.2f} | {load_mb:.0f} | {n:,} vectors |"]
    clock.now = T_END - (config.prune_grace_days + 1) * DAY
    plan = [
        ("decay", "decay", T_END - (config.prune_grace_days + 1) * DAY),
        (
            "prune",
            "prune (nothing past the grace period yet)",
            T_END - config.prune_grace_days * DAY,
        ),
        ("prune", "prune (forgets the whole backlog at once)", T_END),
        ("purge", "purge", T_END + (config.purge_after_days + 1) * DAY),
        ("associate", f"associate (incremental, {new:,} new)", None),
        ("consolidate", f"consolidate (incremental, {new:,} new)", None),
        ("bulletin", "bulletin", None),
    ]
    for job, label, at in plan:
        if at is not None:
            clock.now = at
        elapsed, peak, result = timed(partial(maintenance.run_job, job))
        rows.append(f"| {n:,} | {label} | {elapsed:.2f} | {peak:.0f} | {counts(result)} |")
        print(rows[-1], flush=True)
    store.close()
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument(
        "--new", type=int, default=1_000, help="memories new since the last incremental run"
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print only; leave RESULTS.md alone"
    )
    args = parser.parse_args(argv)
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            rows += bench_size(n, args.new, Path(tmp))
    body = "\n".join(
        [
            "## Maintenance jobs",
            "",
            f"Machine: {machine_line()}",
            "",
            "`python benchmarks/bench_maintenance.py` (synthetic memories, random unit vectors, 5 scopes; peak = RSS "
            "rise during the job). Targets at 100K: prune <= 1 s, incremental association <= 10 s.",
            "",
            "| memories | job | seconds | peak MB | work |",
            "|---:|---|---:|---:|---|",
            *rows,
        ]
    )
    print(body)
    if not args.no_write:
        write_section("maintenance", body)


if __name__ == "__main__":
    main()
