"""Write-path benchmark: capture latency, curator throughput, and a persona replay checking facts and supersession.

    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_capture.py [--turns 10000]
        [--throughput-turns 400] [--persona ../shared/data/persona] [--write-results]

1. Capture: redact + one journal INSERT per turn on the calling thread, timed per turn over `--turns` turns,
   once with the curator idle and once with the curator worker running (embedding and merging) beside it.
2. Throughput: the worker curates `--throughput-turns` persona turns with the local MiniLM model (turns/s).
3. Persona replay: every conversation in time order through capture + curation with the clock set from the
   message timestamps (each session is curated when it ends, so the clock is within minutes of every turn);
   reports which `final_profile` facts are held by current memories (keyword match, per part of each value)
   and, for each `changes` entry, whether a memory of the old value was superseded on the way to the new one.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from report import write_section  # noqa: E402

from hermes_bowerbird.config import build_config  # noqa: E402
from hermes_bowerbird.curation.curator import Curator, CuratorWorker  # noqa: E402
from hermes_bowerbird.curation.redact import redact  # noqa: E402
from hermes_bowerbird.embeddings.service import EmbeddingService  # noqa: E402
from hermes_bowerbird.embeddings.tier import VectorTier  # noqa: E402
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder  # noqa: E402
from hermes_bowerbird.store import Store  # noqa: E402
from hermes_bowerbird.types import Memory, MemoryFilter, TurnCapture  # noqa: E402

SCOPE = "user:marcus"
DEFAULT_PERSONA = ROOT.parent / "shared" / "data" / "persona"
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "the",
        "of",
        "for",
        "to",
        "in",
        "on",
        "at",
        "with",
        "from",
        "by",
        "or",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "his",
        "her",
        "their",
        "its",
        "into",
        "near",
        "after",
        "before",
        "about",
        "over",
        "under",
        "very",
        "mostly",
        "occasional",
        "previously",
        "completely",
        "uses",
        "moved",
        "simpler",
        "starting",
        "local",
        "daily",
        "works",
        "prefers",
    }
)


@dataclass(frozen=True)
class Turn:
    session_id: str
    turn_index: int
    user: str
    assistant: str
    timestamp: float
    first_message_id: int


def load_turns(folder: Path) -> list[Turn]:
    """Persona messages paired into (user, assistant) turns, in time order."""
    messages = [
        json.loads(line)
        for line in (folder / "conversations.jsonl").read_text().splitlines()
        if line
    ]
    messages.sort(key=lambda m: (m["timestamp"], m["message_id"]))
    turns: list[Turn] = []
    index: dict[str, int] = {}
    pending: dict[str, Any] | None = None
    for message in messages:
        if message["role"] == "user":
            if pending is not None:
                turns.append(_turn(pending, None, index))
            pending = message
        elif pending is not None and pending["session_id"] == message["session_id"]:
            turns.append(_turn(pending, message, index))
            pending = None
    if pending is not None:
        turns.append(_turn(pending, None, index))
    return turns


def _turn(user: dict[str, Any], assistant: dict[str, Any] | None, index: dict[str, int]) -> Turn:
    session = user["session_id"]
    n = index.get(session, 0)
    index[session] = n + 1
    stamp = datetime.fromisoformat(user["timestamp"]).replace(tzinfo=UTC).timestamp()
    return Turn(
        session,
        n,
        user["content"],
        assistant["content"] if assistant else "",
        stamp,
        user["message_id"],
    )


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- 1. capture latency ---------------------------------------------------------------------------------------


def capture(store: Store, turn: Turn, i: int, worker: CuratorWorker | None = None) -> int:
    """What the engine does on the host's thread: redact both texts, one INSERT, wake the worker."""
    journal_id = store.journal.append(
        TurnCapture(
            scope=SCOPE,
            session_id=f"bench-{turn.session_id}",
            turn_index=i,
            platform="cli",
            user=redact(turn.user),
            assistant=redact(turn.assistant),
        )
    )
    if worker is not None:
        worker.notify()
    return journal_id


def bench_capture(
    turns: list[Turn], n: int, vectors_embedder: LocalEmbedder | None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in ("idle", "worker"):
        with tempfile.TemporaryDirectory() as tmp:
            store = Store.open(Path(tmp) / "capture.db")
            worker = None
            if mode == "worker" and vectors_embedder is not None:
                vectors = VectorTier(store, EmbeddingService.from_embedder(vectors_embedder, store))
                worker = CuratorWorker(
                    Curator(store, vectors, build_config(Path(tmp), {}), store.clock), store
                )
                worker.start()
            samples = []
            for i in range(n):
                turn = turns[i % len(turns)]
                started = time.perf_counter_ns()
                capture(store, turn, i, worker)
                samples.append((time.perf_counter_ns() - started) / 1e6)
            backlog = store.journal.counts().get("pending", 0)
            if worker is not None:
                worker.stop(30)
            store.close()
        out[mode] = {
            "turns": n,
            "p50_ms": round(percentile(samples, 0.50), 3),
            "p99_ms": round(percentile(samples, 0.99), 3),
            "max_ms": round(max(samples), 3),
            "mean_ms": round(statistics.fmean(samples), 3),
            "backlog_at_end": backlog,
        }
    return out


# -- 2. curator throughput ------------------------------------------------------------------------------------


def bench_throughput(turns: list[Turn], n: int, embedder: LocalEmbedder) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "throughput.db")
        vectors = VectorTier(store, EmbeddingService.from_embedder(embedder, store))
        for i, turn in enumerate(turns[:n]):
            capture(store, turn, i)
        worker = CuratorWorker(
            Curator(store, vectors, build_config(Path(tmp), {}), store.clock), store
        )
        started = time.perf_counter()
        worker.start()
        drained = worker.drain(1800)
        elapsed = time.perf_counter() - started
        worker.stop(30)
        counts = store.health.counts()
        store.close()
    chars = sum(len(t.user) + len(t.assistant) for t in turns[:n]) / max(1, n)
    return {
        "turns": n,
        "seconds": round(elapsed, 2),
        "turns_per_s": round(n / elapsed, 1),
        "drained": drained,
        "mean_chars_per_turn": round(chars),
        "episodes": counts["episodes"],
        "memories": counts["memories"],
    }


# -- 3. persona replay ------------------------------------------------------------------------------------------


def key_terms(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9$]+(?:[-'][a-z0-9]+)*", text.lower())
    return {
        w for w in words if (len(w) >= 4 or w.isdigit() or w.startswith("$")) and w not in STOPWORDS
    }


def value_parts(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    parts = []
    for item in items:
        parts += [
            p.strip()
            for p in re.split(r"[,;]", re.sub(r"\([^)]*\)", "", str(item)))
            if key_terms(p)
        ]
    return parts


def matches(part: str, memory: Memory) -> bool:
    terms = key_terms(part)
    found = terms & key_terms(memory.content)
    return bool(terms) and len(found) >= max(1, (len(terms) + 1) // 2)


def replay(
    turns: list[Turn], embedder: LocalEmbedder | None, truth: dict[str, Any]
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        now = [turns[0].timestamp]
        store = Store.open(Path(tmp) / "persona.db", clock=lambda: now[0])
        vectors = (
            VectorTier(store, EmbeddingService.from_embedder(embedder, store)) if embedder else None
        )
        curator = Curator(store, vectors, build_config(Path(tmp), {}), store.clock)
        started = time.perf_counter()
        for i, turn in enumerate(turns):
            now[0] = turn.timestamp
            store.journal.append(
                TurnCapture(
                    scope=SCOPE,
                    session_id=turn.session_id,
                    turn_index=turn.turn_index,
                    platform="cli",
                    user=redact(turn.user),
                    assistant=redact(turn.assistant),
                    created_at=turn.timestamp,
                )
            )
            if i + 1 == len(turns) or turns[i + 1].session_id != turn.session_id:
                curator.run_pending()  # at the session's end, with the clock at its last message
        elapsed = time.perf_counter() - started
        now[0] = turns[-1].timestamp + 1
        everything = store.memories.find([SCOPE], MemoryFilter(order="oldest"))
        current = [m for m in everything if m.is_current(now[0])]
        facts = _facts(truth["final_profile"], current)
        changes = [_change(c, everything, current) for c in truth["changes"]]
        counts = store.health.counts()
        store.close()
    return {
        "turns": len(turns),
        "seconds": round(elapsed, 1),
        "memories": len(everything),
        "current": len(current),
        "episodes": counts["episodes"],
        "edges": counts["edges"],
        "facts_present": sum(1 for f in facts.values() if f["coverage"] >= 0.5),
        "facts_total": len(facts),
        "mean_fact_coverage": round(statistics.fmean(f["coverage"] for f in facts.values()), 2),
        "facts": facts,
        "changes_superseded": sum(1 for c in changes if c["old_superseded"]),
        "changes_total": len(changes),
        "changes_new_current": sum(1 for c in changes if c["new_current"]),
        "changes": changes,
    }


def _facts(profile: dict[str, Any], current: list[Memory]) -> dict[str, dict[str, Any]]:
    out = {}
    for name, fact in profile.items():
        parts = value_parts(fact["value"])
        found = [p for p in parts if any(matches(p, m) for m in current)]
        out[name] = {
            "coverage": round(len(found) / len(parts), 2) if parts else 0.0,
            "found": found,
            "missing": [p for p in parts if p not in found],
        }
    return out


def _change(
    change: dict[str, Any], everything: list[Memory], current: list[Memory]
) -> dict[str, Any]:
    """Did a memory stating the old value get superseded along a chain that reaches the new value?"""
    by_id = {m.id: m for m in everything}
    old_part, new_part = _whole(change["old_value"]), _whole(change["new_value"])
    old = [m for m in everything if matches(old_part, m)]
    chains = [(m, _successors(m, by_id)) for m in old if m.superseded_by is not None]
    to_new = [m for m, chain in chains if any(matches(new_part, s) for s in chain)]
    subjects = {m.subject for m, _ in chains if m.subject}
    stale = [m for m in current if m.subject in subjects and matches(old_part, m)]
    return {
        "fact": change["fact"],
        "old": change["old_value"],
        "new": change["new_value"],
        "old_memories": len(old),
        "old_superseded": bool(to_new),
        "old_superseded_any": bool(chains),
        "stale_same_subject": len(stale),
        "new_current": any(matches(new_part, m) for m in current),
    }


def _whole(value: Any) -> str:
    return re.sub(r"\([^)]*\)", "", str(value))


def _successors(memory: Memory, by_id: dict[int, Memory]) -> list[Memory]:
    chain, seen = [], {memory.id}
    while (
        memory.superseded_by is not None
        and memory.superseded_by in by_id
        and memory.superseded_by not in seen
    ):
        memory = by_id[memory.superseded_by]
        seen.add(memory.id)
        chain.append(memory)
    return chain


# -- report -----------------------------------------------------------------------------------------------------


def render(results: dict[str, Any], command: str) -> str:
    cap, thr, per = results["capture"], results.get("throughput"), results.get("persona")
    lines = [
        "## Capture and curation (write path)",
        "",
        f"Command: `{command}` on {results['machine']}.",
        "",
        "| capture (redact + 1 INSERT, calling thread) | turns | p50 ms | p99 ms | max ms |",
        "|---|---|---|---|---|",
    ]
    for mode, label in (("idle", "curator idle"), ("worker", "curator worker running beside it")):
        if mode in cap:
            c = cap[mode]
            lines.append(
                f"| {label} | {c['turns']} | {c['p50_ms']} | {c['p99_ms']} | {c['max_ms']} |"
            )
    if thr:
        lines += [
            "",
            f"Curator throughput (local all-MiniLM-L6-v2, persona turns averaging "
            f"{thr['mean_chars_per_turn']} chars): **{thr['turns_per_s']} turns/s** "
            f"({thr['turns']} turns in {thr['seconds']} s; {thr['episodes']} episodes, "
            f"{thr['memories']} memories). Target >= 30 turns/s.",
        ]
    if per:
        lines += [
            "",
            f"Persona replay ({per['turns']} turns in time order, clock from message timestamps, "
            f"heuristic extraction, no LLM; {per['seconds']} s): {per['memories']} memories, "
            f"{per['current']} current, {per['episodes']} episodes, {per['edges']} edges.",
            "",
            f"- `final_profile`: **{per['facts_present']} of {per['facts_total']}** facts held by current "
            f"memories (>= half of a fact's parts matched by key terms); mean part coverage "
            f"{per['mean_fact_coverage']}.",
            f"- `changes`: a memory stating the old value was superseded by a chain of `updates` reaching "
            f"the new value in **{per['changes_superseded']} of {per['changes_total']}**; the new value is "
            f"held by a current memory in {per['changes_new_current']} of {per['changes_total']}. "
            "(Matching is by key terms, so `old memories` counts every mention, e.g. of Austin.)",
            "",
            "| fact | coverage | missing parts |",
            "|---|---|---|",
        ]
        for name, fact in per["facts"].items():
            lines.append(f"| {name} | {fact['coverage']} | {'; '.join(fact['missing']) or '-'} |")
        lines += [
            "",
            "| change | old -> new | old mentions | superseded -> new | any superseded | "
            "stale, same subject | new current |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in per["changes"]:
            lines.append(
                f"| {c['fact']} | {c['old']} -> {c['new']} | {c['old_memories']} | "
                f"{'yes' if c['old_superseded'] else 'no'} | {'yes' if c['old_superseded_any'] else 'no'} | "
                f"{c['stale_same_subject']} | {'yes' if c['new_current'] else 'no'} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--throughput-turns", type=int, default=400)
    parser.add_argument("--persona", type=Path, default=DEFAULT_PERSONA)
    parser.add_argument("--skip-persona", action="store_true")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    truth = json.loads((args.persona / "ground_truth.json").read_text())
    turns = load_turns(args.persona)
    embedder = LocalEmbedder()
    results: dict[str, Any] = {
        "machine": f"{os.cpu_count()} CPU cores, Python {sys.version.split()[0]}"
    }
    results["capture"] = bench_capture(turns, args.turns, embedder)
    print(json.dumps({"capture": results["capture"]}), flush=True)
    if args.throughput_turns:
        results["throughput"] = bench_throughput(turns, args.throughput_turns, embedder)
        print(json.dumps({"throughput": results["throughput"]}), flush=True)
    if not args.skip_persona:
        results["persona"] = replay(turns, embedder, truth)
        print(json.dumps({"persona": results["persona"]}, indent=1), flush=True)
    if args.write_results:
        command = "PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_capture.py --write-results"
        write_section("capture", render(results, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
