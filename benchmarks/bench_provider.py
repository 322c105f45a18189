"""Provider hooks as Hermes calls them: initialize, sync_turn and prefetch latency on a realistic store.

    .venv/bin/python benchmarks/bench_provider.py [--persona ../shared/data/persona] [--no-write]

1. initialize(): the first provider in a process (the model keeps loading behind it) and a second one that
   shares the engine, as a gateway does for each user.
2. sync_turn(): the time the host's sync thread spends per turn (redaction + one journal INSERT).
3. prefetch(): after the persona's conversations are captured and curated, one query per persona question
   and per user message sample, with the vector signal on and with it off (keyword + graph only).
Results go to the `<!-- provider -->` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from report import machine_line, percentiles, write_section  # noqa: E402

from hermes_bowerbird.provider import BowerbirdProvider  # noqa: E402

DEFAULT_PERSONA = ROOT.parent / "shared" / "data" / "persona"


def _timed(fn: object, *args: object, **kwargs: object) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn(*args, **kwargs)  # type: ignore[operator]
    return (time.perf_counter() - started) * 1000, result


def _messages(persona: Path) -> list[dict[str, object]]:
    lines = (persona / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted((json.loads(line) for line in lines if line.strip()), key=lambda m: str(m["timestamp"]))


def _pairs(messages: list[dict[str, object]]) -> list[tuple[str, str, str]]:
    """(session id, user text, assistant text) in time order."""
    pairs, pending = [], None
    for message in messages:
        if message["role"] == "user":
            pending = message
        elif pending is not None:
            pairs.append((str(pending["session_id"]), str(pending["content"]), str(message["content"])))
            pending = None
    return pairs


def run(persona: Path, backend: str) -> dict[str, object]:
    home = Path(tempfile.mkdtemp(prefix="bench-provider-"))
    os.environ.update(BOWERBIRD_EMBEDDING_BACKEND=backend, BOWERBIRD_LLM_BACKEND="none",
                      BOWERBIRD_MAINTENANCE_ENABLED="false")
    cold_ms, _ = _timed((first := BowerbirdProvider()).initialize, "s0", hermes_home=str(home), platform="cli")
    warm_ms, _ = _timed((second := BowerbirdProvider()).initialize, "s1", hermes_home=str(home),
                        platform="telegram", user_id="someone-else")
    assert first.engine is not None
    first.engine.embeddings.wait_ready(120)
    sync_ms = []
    for session, user, assistant in _pairs(_messages(persona)):
        elapsed, _ = _timed(first.sync_turn, user, assistant, session_id=session)
        sync_ms.append(elapsed)
    started = time.perf_counter()
    first.engine.flush(timeout=3600)
    first.engine.embeddings.wait_idle(600)
    curate_s = time.perf_counter() - started
    truth = json.loads((persona / "ground_truth.json").read_text(encoding="utf-8"))
    queries = [pair["query"] for pair in truth["query_relevance_pairs"]]
    queries += [user for _, user, _ in _pairs(_messages(persona))[::25]]
    prefetch_ms, chars = [], []
    for query in queries:
        first.on_session_switch("bench", reset=True)  # measure recall, not the never-repeat filter
        elapsed, text = _timed(first.prefetch, query)
        prefetch_ms.append(elapsed)
        chars.append(len(str(text)))
    counts = first.engine.store.counts()
    second.shutdown()
    first.shutdown()
    return {"backend": backend, "initialize_cold_ms": cold_ms, "initialize_shared_ms": warm_ms,
            "sync_turn_ms": percentiles(sync_ms, 50, 99), "turns": len(sync_ms), "curate_s": curate_s,
            "prefetch_ms": percentiles(prefetch_ms, 50, 95), "queries": len(queries),
            "prefetch_chars_mean": sum(chars) / max(1, len(chars)), "memories": counts["memories"],
            "episodes": counts["episodes"]}


def render(results: list[dict[str, object]], command: str) -> str:
    lines = ["## Provider hooks (benchmarks/bench_provider.py)", "", f"Command: `{command}`  ",
             f"Machine: {machine_line()}", "",
             "| vectors | initialize (first / shared) | sync_turn p50 / p99 | curation of all turns | "
             "prefetch p50 / p95 | prefetch chars (mean) | store |", "|---|---|---|---|---|---|---|"]
    for r in results:
        sync, pre = r["sync_turn_ms"], r["prefetch_ms"]
        lines.append(
            f"| {r['backend']} | {r['initialize_cold_ms']:.0f} ms / {r['initialize_shared_ms']:.1f} ms | "
            f"{sync[0]:.2f} / {sync[1]:.2f} ms ({r['turns']} turns) | {r['curate_s']:.1f} s | "  # type: ignore[index]
            f"{pre[0]:.1f} / {pre[1]:.1f} ms ({r['queries']} queries) | "  # type: ignore[index]
            f"{r['prefetch_chars_mean']:.0f} | {r['memories']} memories, {r['episodes']} episodes |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--persona", type=Path, default=DEFAULT_PERSONA)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not (args.persona / "conversations.jsonl").exists():
        print(f"persona data not found at {args.persona}; pass --persona", file=sys.stderr)
        return 2
    results = [run(args.persona, "auto"), run(args.persona, "none")]
    for result in results:
        print(json.dumps(result))
    if not args.no_write:
        write_section("provider", render(results, ".venv/bin/python benchmarks/bench_provider.py"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
