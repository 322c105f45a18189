"""Host budgets: provider `initialize` with a 1,000-entry MEMORY.md, and `shutdown` with 1,000 turns queued.

    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_host_budgets.py [--runs 3] [--write-results]

Hermes gives a provider's shutdown 5 s and expects initialize to be quick (target: under 200 ms). Each run uses
a fresh home, the default settings (local MiniLM, no LLM) and the real provider; the ONNX model is built once
into a shared cache folder before the timed runs (as a home that ran before has it):
1. initialize: MEMORY.md holds 1,000 entries; the time initialize takes to return, then how long the background
   import takes to finish (the provider is usable meanwhile).
2. shutdown: with the model loaded, 1,000 turns synced (capture only), then shutdown at once: its time, the
   turns left pending in the journal, and the time the next start takes to curate them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from report import machine_line, write_section  # noqa: E402

from hermes_bowerbird.config import build_config  # noqa: E402
from hermes_bowerbird.provider import BowerbirdProvider  # noqa: E402
from hermes_bowerbird.store import Store  # noqa: E402

STAGES = ("build", "test", "deploy", "lint", "package")


MODELS = Path(tempfile.gettempdir()) / "bowerbird-bench-models"


def _provider(home: Path, session: str, **settings: Any) -> BowerbirdProvider:
    provider = BowerbirdProvider(
        build_config(home, {"llm_backend": "none", "embedding_models_dir": str(MODELS), **settings})
    )
    provider.initialize(session, hermes_home=str(home), platform="cli")
    return provider


def _pending(home: Path) -> int:
    store = Store.open(home / "bowerbird" / "memory.db")
    try:
        return int(store.journal.counts().get("pending", 0))
    finally:
        store.close()


def warm_up() -> str:
    """Build (or find) the local model in the shared cache; returns the embedder's name."""
    with tempfile.TemporaryDirectory() as tmp:
        provider = _provider(Path(tmp), "bench-warm-up", import_markdown=False)
        assert provider.engine is not None
        provider.engine.embeddings.wait_ready(900)
        name = provider.engine.embeddings.current()
        provider.shutdown()
    return name.model_name if name is not None else "none"


def bench_initialize(entries: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "memories").mkdir()
        lines = [
            f"Server {i} of the lab cluster runs the {STAGES[i % len(STAGES)]} stage on port {8000 + i}."
            for i in range(entries)
        ]
        (home / "memories" / "MEMORY.md").write_text("\n§\n".join(lines), encoding="utf-8")
        started = time.perf_counter()
        provider = _provider(home, "bench-init", import_markdown=True)
        init_ms = (time.perf_counter() - started) * 1000
        engine = provider.engine
        assert engine is not None
        engine.wait_import(None)
        import_s = time.perf_counter() - started
        held = sum(engine.store.memories.count_by_type(provider.visible).values())
        provider.shutdown()
    return {"initialize_ms": round(init_ms, 1), "import_s": round(import_s, 1), "memories": held}


def bench_shutdown(turns: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        provider = _provider(home, "bench-shutdown", import_markdown=False)
        assert provider.engine is not None
        provider.engine.embeddings.wait_ready(300)
        started = time.perf_counter()
        for i in range(turns):
            provider.sync_turn(
                f"Turn {i}: the nightly export of shard {i} finished at {i % 24:02d}:15 and "
                f"we moved the {STAGES[i % len(STAGES)]} job to runner {i % 7}.",
                "Noted.",
            )
        sync_s = time.perf_counter() - started
        started = time.perf_counter()
        provider.shutdown()
        shutdown_s = time.perf_counter() - started
        pending = _pending(home)
        started = time.perf_counter()
        resumed = _provider(home, "bench-next", import_markdown=False)
        assert resumed.engine is not None
        resumed.engine.flush(600)
        resume_s = time.perf_counter() - started
        resumed.shutdown()
        left = _pending(home)
    return {
        "sync_s": round(sync_s, 1),
        "shutdown_s": round(shutdown_s, 2),
        "pending_after_shutdown": pending,
        "resume_s": round(resume_s, 1),
        "pending_after_resume": left,
    }


def render(runs: list[dict[str, Any]], entries: int, turns: int, model: str, command: str) -> str:
    init = [r["init"]["initialize_ms"] for r in runs]
    stop = [r["shutdown"]["shutdown_s"] for r in runs]
    lines = [
        "## Host budgets (provider initialize and shutdown)",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {machine_line()}. Model: {model}.",
        "",
        f"- initialize with a {entries:,}-entry MEMORY.md: median **{statistics.median(init):.0f} ms**, "
        f"max {max(init):.0f} ms (target < 200 ms; the import runs on its own thread afterwards).",
        f"- shutdown with {turns:,} turns queued: median **{statistics.median(stop):.2f} s**, "
        f"max {max(stop):.2f} s (budget 5 s; what is not curated stays pending, the next start curates it).",
        "",
        "| run | initialize ms | import finished s | memories | sync s | shutdown s | pending after shutdown | "
        "next start curated them in s | pending after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(runs, start=1):
        i, s = r["init"], r["shutdown"]
        lines.append(
            f"| {n} | {i['initialize_ms']} | {i['import_s']} | {i['memories']} | {s['sync_s']} | "
            f"{s['shutdown_s']} | {s['pending_after_shutdown']} | {s['resume_s']} | "
            f"{s['pending_after_resume']} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--entries", type=int, default=1_000)
    parser.add_argument("--turns", type=int, default=1_000)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = warm_up()
    runs = []
    for _ in range(args.runs):
        run = {"init": bench_initialize(args.entries), "shutdown": bench_shutdown(args.turns)}
        print(json.dumps(run), flush=True)
        runs.append(run)
    if args.write_results:
        command = (
            "PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_host_budgets.py "
            f"--runs {args.runs} --write-results"
        )
        write_section("host-budgets", render(runs, args.entries, args.turns, model, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
