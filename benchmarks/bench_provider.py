"""Through the provider, on LongMemEval chat texts: prefetch at 10K beside Hermes' holographic, curation, stalls.

    python benchmarks/bench_provider.py [--data ../shared/data/longmemeval/lme_s_proxy_dev.jsonl]
        [--memories 10000] [--cache /tmp/bb_provider_store] [--rebuild] [--no-write] [--curation-only]

1. Store: `--memories` haystack texts (`user_text_prefix`, ~450 chars) captured through `sync_turn` of a
   BowerbirdProvider and curated by its own curator (int8 ONNX embeddings, heuristic extraction, no LLM).
   Built once into `--cache` and copied for each run (`--rebuild` builds it again). Holographic gets the
   same texts as facts through its own store.
2. Prefetch: every dev question (fresh: never embedded in this store) through `prefetch()` of a new
   provider, the never-repeat filter reset before each; then holographic's `prefetch()` on the same
   questions in the same process. Peak RSS is read after this phase (before torch is loaded for step 4); the
   stores are built in a child process, so it is the prefetch phase's own.
3. Curation: a fresh store; the last `--curate` texts of the file captured by `sync_turn` one every 5 ms while
   the curator works; turns/s, sync_turn p50/p99 during curation, and the scheduling delay of a thread asking
   to wake every 1 ms (p99 and max), idle first and then while curation runs. Run once per curation mode, one
   after the other: `process` (the default: the memory home's worker process curates) and `thread` (in this
   process). `--curation-only` runs just this step and prints the rows.
4. Query embedding: the same questions through the int8 ONNX and the torch runtimes, uncached, side by side
   (torch on the first `--torch-questions` of them, interleaved with ONNX on the same ones, so that the ratio
   holds under the same load; ONNX's p50/p95 are over every question).
Results go to the `<!-- provider -->` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from report import machine_line, percentiles, write_section  # noqa: E402

from hermes_bowerbird.provider import BowerbirdProvider  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "longmemeval" / "lme_s_proxy_dev.jsonl"
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "bb_provider_store"
SETTINGS = {
    "BOWERBIRD_EMBEDDING_BACKEND": "auto",
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "BOWERBIRD_IMPORT_MARKDOWN": "false",
    "GEMINI_API_KEY": "",
    "GOOGLE_API_KEY": "",
}
TICK_S = 0.001
PACE_S = 0.005


# ----- data ------------------------------------------------------------------------------------------------


def load_corpus(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """(session id, text) of every distinct haystack text in file order, and every question."""
    texts: list[tuple[str, str]] = []
    seen: set[str] = set()
    questions: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        questions.append(str(row["question"]))
        for item in row["haystack"]:
            text = str(item.get("user_text_prefix") or "").strip()
            if text and text not in seen:
                seen.add(text)
                texts.append((str(item["session_id"]), text))
    return texts, questions


@contextmanager
def hermes_home(path: Path, models_dir: Path, curation_mode: str = "thread") -> Iterator[Path]:
    """HERMES_HOME and the benchmark's settings in the environment for the providers made inside."""
    saved = {
        k: os.environ.get(k)
        for k in [
            *SETTINGS,
            "HERMES_HOME",
            "BOWERBIRD_EMBEDDING_MODELS_DIR",
            "BOWERBIRD_CURATION_MODE",
        ]
    }
    os.environ.update(
        SETTINGS,
        HERMES_HOME=str(path),
        BOWERBIRD_EMBEDDING_MODELS_DIR=str(models_dir),
        BOWERBIRD_CURATION_MODE=curation_mode,
    )
    try:
        yield path
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def open_provider(home: Path, session: str = "bench") -> BowerbirdProvider:
    provider = BowerbirdProvider()
    provider.initialize(session, hermes_home=str(home), platform="cli")
    assert provider.engine is not None
    if not provider.engine.embeddings.wait_ready(600):
        raise RuntimeError(f"no embedding model: {provider.engine.embeddings.status()['reason']}")
    return provider


# ----- 1. the stores ---------------------------------------------------------------------------------------


def build_stores(cache: Path, texts: list[tuple[str, str]], count: int) -> dict[str, Any]:
    """Capture and curate `count` texts through the provider into `cache`/home; the same texts into holographic."""
    home = cache / "home"
    shutil.rmtree(home, ignore_errors=True)  # the built ONNX model beside it is kept
    (cache / "ready.json").unlink(missing_ok=True)
    (cache / "holographic.db").unlink(missing_ok=True)
    home.mkdir(parents=True)
    started = time.perf_counter()
    with hermes_home(home, cache / "models"):
        provider = open_provider(home, "fill")
        for session, text in texts[:count]:
            provider.sync_turn(text, "", session_id=session)
        assert provider.engine is not None
        provider.engine.flush(timeout=24 * 3600)
        provider.engine.embeddings.wait_idle(3600)
        counts = provider.engine.store.health.counts()
        provider.shutdown()
    fill_s = time.perf_counter() - started
    holo_s = fill_holographic(cache / "holographic.db", [text for _, text in texts[:count]])
    info = {"texts": count, "counts": counts, "fill_s": fill_s, "holographic_fill_s": holo_s}
    (cache / "ready.json").write_text(json.dumps(info), encoding="utf-8")
    return info


def fill_holographic(db: Path, texts: list[str]) -> float:
    """Every text as a holographic fact; its per-insert bank rebuild runs once at the end (same final state)."""
    from plugins.memory.holographic.store import MemoryStore

    started = time.perf_counter()
    store = MemoryStore(db_path=str(db))
    rebuild = store._rebuild_bank
    store._rebuild_bank = lambda category: None
    for text in texts:
        store.add_fact(text)
    store._rebuild_bank = rebuild
    store._rebuild_bank("general")
    store._conn.close()
    return time.perf_counter() - started


def build_stores_for(parent: int, cache: Path, texts: list[tuple[str, str]], count: int) -> None:
    """`build_stores` in a child process that ends when its parent does: a killed benchmark must not leave a
    child writing the cache folder that the next run reads."""
    exit_with_parent(parent)
    build_stores(cache, texts, count)


def exit_with_parent(parent: int, poll_seconds: float = 0.5) -> None:
    """End this process (exit code 1) within `poll_seconds` of its parent `parent` ending, killed or not."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_seconds)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def cached_stores(
    cache: Path, texts: list[tuple[str, str]], count: int, rebuild: bool
) -> dict[str, Any]:
    ready = cache / "ready.json"
    if not rebuild and ready.exists():
        info = json.loads(ready.read_text(encoding="utf-8"))
        if info.get("texts") == count:
            return dict(info)
    # built in a child process: what the fill allocated would otherwise stay in this process and count as the
    # prefetch phase's peak RSS
    child = multiprocessing.get_context("spawn").Process(
        target=build_stores_for, args=(os.getpid(), cache, texts, count)
    )
    child.start()
    child.join()
    if child.exitcode != 0:
        raise RuntimeError(f"building the stores failed (exit code {child.exitcode})")
    return dict(json.loads(ready.read_text(encoding="utf-8")))


# ----- 2. prefetch -----------------------------------------------------------------------------------------


def timed_calls(
    fn: Callable[[str], str], queries: list[str], before: Callable[[], None] | None = None
) -> tuple[list[float], list[int]]:
    samples, chars = [], []
    for query in queries:
        if before is not None:
            before()
        started = time.perf_counter()
        text = fn(query)
        samples.append((time.perf_counter() - started) * 1000)
        chars.append(len(text))
    return samples, chars


def bench_prefetch(cache: Path, questions: list[str], warmup: list[str]) -> dict[str, Any]:
    run_dir = Path(tempfile.mkdtemp(prefix="bench-provider-"))
    home = run_dir / "home"
    shutil.copytree(cache / "home", home)
    shutil.copy(cache / "holographic.db", run_dir / "holographic.db")
    reset_peak_rss()
    with hermes_home(home, cache / "models"):
        provider = open_provider(home)
        # load the vector index and warm the caches with questions that are not measured
        for query in warmup:
            provider.prefetch(query)

        def reset() -> None:
            # measure recall, not the never-repeat filter
            provider.on_session_switch("bench", reset=True)

        ours, our_chars = timed_calls(provider.prefetch, questions, reset)
        runtime = provider.engine.embeddings.status()["runtime"] if provider.engine else None
        provider.shutdown()
        holo = open_holographic(run_dir / "holographic.db", home)
        holo.prefetch(warmup[0])
        theirs, their_chars = timed_calls(holo.prefetch, questions)
        holo.shutdown()
    peak = peak_rss_mb()
    shutil.rmtree(run_dir, ignore_errors=True)
    return {
        "prefetch_ms": percentiles(ours, 50, 95),
        "holographic_ms": percentiles(theirs, 50, 95),
        "queries": len(questions),
        "chars": sum(our_chars) / len(our_chars),
        "holographic_chars": sum(their_chars) / len(their_chars),
        "answered": sum(1 for c in our_chars if c),
        "holographic_answered": sum(1 for c in their_chars if c),
        "runtime": runtime,
        "peak_rss_mb": peak,
    }


def open_holographic(db: Path, home: Path) -> Any:
    from plugins.memory.holographic import HolographicMemoryProvider

    provider = HolographicMemoryProvider(config={"db_path": str(db)})
    provider.initialize("bench", hermes_home=str(home), platform="cli")
    return provider


def reset_peak_rss() -> None:
    """Start the peak-RSS count afresh (Linux: writing 5 to clear_refs resets VmHWM)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        logging.getLogger(__name__).info("cannot reset the peak RSS; it counts from process start")


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ----- 3. curation, capture and scheduling delay -------------------------------------------------------------


class Ticker(threading.Thread):
    """Asks to wake every millisecond and records how late each wake-up is."""

    def __init__(self) -> None:
        super().__init__(name="bench-ticker", daemon=True)
        self.delays_ms: list[float] = []
        self.stop_event = threading.Event()

    def run(self) -> None:
        due = time.perf_counter() + TICK_S
        while not self.stop_event.is_set():
            time.sleep(max(0.0, due - time.perf_counter()))
            now = time.perf_counter()
            self.delays_ms.append(max(0.0, (now - due) * 1000))
            due = max(due + TICK_S, now)

    def take(self) -> list[float]:
        samples, self.delays_ms = self.delays_ms, []
        return samples


def bench_curation(
    models_dir: Path, texts: list[tuple[str, str]], idle_seconds: float, mode: str
) -> dict[str, Any]:
    """Capture `texts` one every PACE_S while curation runs in `mode` (thread: in this process; process: in the
    memory home's worker process, started and warmed up with one turn before the measurement)."""
    home = Path(tempfile.mkdtemp(prefix="bench-curate-"))
    ticker = Ticker()
    with hermes_home(home, models_dir, mode):
        provider = open_provider(home)
        assert provider.engine is not None
        provider.prefetch("warm the model")
        provider.sync_turn("Warm-up turn: I like tea.", "Noted.", session_id="warm-up")
        provider.engine.flush(timeout=600)  # the worker is up and its model loaded
        ticker.start()
        time.sleep(idle_seconds)
        idle = ticker.take()
        sync_ms = []
        started = time.perf_counter()
        for session, text in texts:
            t0 = time.perf_counter()
            provider.sync_turn(text, "", session_id=session)
            sync_ms.append((time.perf_counter() - t0) * 1000)
            time.sleep(PACE_S)
        provider.engine.flush(timeout=3600)
        elapsed = time.perf_counter() - started
        busy = ticker.take()
        ticker.stop_event.set()
        counts = provider.engine.store.health.counts()
        provider.shutdown()
    shutil.rmtree(home, ignore_errors=True)
    return {
        "mode": mode,
        "turns": len(texts),
        "curate_s": elapsed,
        "turns_per_s": len(texts) / elapsed,
        "sync_turn_ms": percentiles(sync_ms, 50, 99),
        "tick_idle_ms": percentiles(idle, 50, 99, 100),
        "tick_busy_ms": percentiles(busy, 50, 99, 100),
        "memories": counts["memories"],
        "episodes": counts["episodes"],
    }


def curation_runs(models_dir: Path, texts: list[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """The curation measurement in process mode (the default) and in thread mode, one after the other."""
    runs = {}
    for mode in ("process", "thread"):
        runs[mode] = bench_curation(models_dir, texts, idle_seconds=3.0, mode=mode)
        print(json.dumps({"curation": runs[mode]}), flush=True)
    return runs


# ----- 4. query embedding ------------------------------------------------------------------------------------


def bench_query_embedding(
    models_dir: Path, questions: list[str], torch_questions: int
) -> dict[str, tuple[float, ...]]:
    from hermes_bowerbird.embeddings.onnx_runtime import OnnxEmbedder
    from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder

    embedders = {"onnx-int8": OnnxEmbedder(models_dir), "torch": LocalEmbedder()}
    for embedder in embedders.values():
        for query in questions[:5]:
            embedder.embed(query)
    samples: dict[str, list[float]] = {
        "onnx-int8": [],
        "torch": [],
        "onnx-int8 (torch's questions)": [],
    }
    for position, query in enumerate(questions):
        runs = [("onnx-int8", embedders["onnx-int8"])]
        if position < torch_questions:
            runs.append(("torch", embedders["torch"]))
        for name, embedder in runs:
            started = time.perf_counter()
            embedder.embed(query)
            samples[name].append((time.perf_counter() - started) * 1000)
    samples["onnx-int8 (torch's questions)"] = samples["onnx-int8"][:torch_questions]
    return {name: percentiles(values, 50, 95) for name, values in samples.items()}


# ----- report ------------------------------------------------------------------------------------------------


def curation_rows(runs: dict[str, dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """Throughput, ticker and sync_turn rows for each curation mode, the product default (process) first."""

    def met(ok: bool) -> str:
        return "met" if ok else "**not met**"

    rows: list[tuple[str, str, str, str]] = []
    for mode, cur in runs.items():
        rows += [
            (
                f"curator throughput ({mode} mode)",
                f"{cur['turns_per_s']:.1f} turns/s ({cur['turns']} turns in {cur['curate_s']:.1f} s)",
                ">= 50 turns/s",
                met(cur["turns_per_s"] >= 50),
            ),
            (
                f"1 ms ticker: scheduling delay p50 / p99 / max, curator idle ({mode} mode)",
                "{:.2f} / {:.2f} / {:.1f} ms".format(*cur["tick_idle_ms"]),
                "",
                "",
            ),
            (
                f"1 ms ticker: scheduling delay p50 / p99 / max, during curation ({mode} mode)",
                "{:.2f} / {:.2f} / {:.1f} ms".format(*cur["tick_busy_ms"]),
                "p99 <= 2 ms",
                met(cur["tick_busy_ms"][1] <= 2),
            ),
            (
                f"sync_turn p50 / p99 during curation ({mode} mode)",
                "{:.2f} / {:.2f} ms".format(*cur["sync_turn_ms"]),
                "p99 <= 2 ms",
                met(cur["sync_turn_ms"][1] <= 2),
            ),
        ]
    return rows


def render(
    store: dict[str, Any],
    pre: dict[str, Any],
    runs: dict[str, dict[str, Any]],
    emb: dict[str, tuple[float, ...]],
    command: str,
) -> str:
    ratio = pre["prefetch_ms"][0] / pre["holographic_ms"][0]
    counts = store["counts"]
    onnx, torch, paired = emb["onnx-int8"], emb["torch"], emb["onnx-int8 (torch's questions)"]

    def met(ok: bool) -> str:
        return "met" if ok else "**not met**"

    rows = [
        (
            "query embedding p50 / p95 (int8 ONNX)",
            f"{onnx[0]:.1f} / {onnx[1]:.1f} ms",
            "p50 <= 5 ms",
            met(onnx[0] <= 5),
        ),
        (
            "query embedding p50 / p95 (torch, the first questions, each right after ONNX's)",
            f"{torch[0]:.1f} / {torch[1]:.1f} ms",
            f"ONNX/torch {paired[0] / torch[0]:.2f}x at p50",
            "",
        ),
        (
            f"prefetch p50 / p95 ({pre['queries']} questions)",
            f"{pre['prefetch_ms'][0]:.1f} / {pre['prefetch_ms'][1]:.1f} ms",
            "<= 20 / 40 ms",
            met(pre["prefetch_ms"][0] <= 20 and pre["prefetch_ms"][1] <= 40),
        ),
        (
            "holographic prefetch p50 / p95 (same store texts and questions)",
            f"{pre['holographic_ms'][0]:.1f} / {pre['holographic_ms'][1]:.1f} ms",
            "",
            "",
        ),
        ("bowerbird / holographic p50", f"{ratio:.2f}x", "<= 0.6x", met(ratio <= 0.6)),
        *curation_rows(runs),
        (
            "peak RSS of the prefetch phase (bowerbird + holographic)",
            f"{pre['peak_rss_mb']:.0f} MB",
            "",
            "",
        ),
    ]
    lines = [
        f"## Through the provider at {store['texts']:,} texts (benchmarks/bench_provider.py)",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine_line()}  ",
        f"Store: {store['texts']} LongMemEval dev haystack texts (~450 chars) captured by `sync_turn` and "
        f"curated (heuristics, no LLM, {pre['runtime']}): {counts['memories']} memories, "
        f"{counts['episodes']} episodes; holographic holds the same {store['texts']} texts as facts.  ",
        f"Questions: the {pre['queries']} dev questions, each embedded for the first time in this store; "
        f"answered (non-empty prefetch): bowerbird {pre['answered']}, holographic {pre['holographic_answered']}; "
        f"mean chars {pre['chars']:.0f} vs {pre['holographic_chars']:.0f}.",
        "",
        "| measure | value | target | |",
        "|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    cur = runs["process"]
    lines += [
        "",
        f"Curation runs: the file's last {cur['turns']} texts into a fresh store, one `sync_turn` every "
        f"{PACE_S * 1000:.0f} ms while the curator works ({cur['memories']} memories, {cur['episodes']} "
        "episodes), once per curation mode, one after the other in this run: `process` (the default: the "
        "memory home's worker process curates) and `thread` (curation inside the Hermes process). The ticker "
        "and `sync_turn` are measured in the Hermes process. The machine is shared: compare the idle and busy "
        "ticker rows, and the modes.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--memories", type=int, default=10_000, help="texts captured into the prefetch store"
    )
    parser.add_argument(
        "--curate", type=int, default=600, help="texts for the curation measurement"
    )
    parser.add_argument(
        "--torch-questions", type=int, default=50, help="questions also embedded by torch"
    )
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help="where the built stores are kept"
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="build the stores again even when cached"
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print only; leave RESULTS.md alone"
    )
    parser.add_argument(
        "--curation-only",
        action="store_true",
        help="only the curation runs (process and thread mode side by side); print, write nothing",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if not args.data.exists():
        print(f"LongMemEval data not found at {args.data}; pass --data", file=sys.stderr)
        return 2
    texts, questions = load_corpus(args.data)
    if len(texts) < max(args.memories, args.curate):
        print(
            f"only {len(texts)} distinct texts for {args.memories} and {args.curate}",
            file=sys.stderr,
        )
        return 2
    if args.curation_only:
        runs = curation_runs(args.cache / "models", texts[-args.curate :])
        print("\n".join(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in curation_rows(runs)))
        return 0
    store = cached_stores(args.cache, texts, args.memories, args.rebuild)
    print(json.dumps({"store": store}), flush=True)
    warmup = ["What did we talk about last time?", "Remind me of my plans."]
    pre = bench_prefetch(args.cache, questions, warmup)
    print(json.dumps({"prefetch": pre}), flush=True)
    cur = curation_runs(args.cache / "models", texts[-args.curate :])
    emb = bench_query_embedding(args.cache / "models", questions, args.torch_questions)
    print(json.dumps({"query_embedding": emb}), flush=True)
    raw = {"store": store, "prefetch": pre, "curation": cur, "query_embedding": emb}
    (args.cache / "last_run.json").write_text(json.dumps(raw), encoding="utf-8")
    if not args.no_write:
        command = "python benchmarks/bench_provider.py"
        if args.memories != 10_000 or args.curate != 600 or args.torch_questions != 50:
            command += f" --memories {args.memories} --curate {args.curate} --torch-questions {args.torch_questions}"
        write_section("provider", render(store, pre, cur, emb, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
