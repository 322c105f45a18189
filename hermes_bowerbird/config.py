"""The only reader of configuration: $HERMES_HOME/bowerbird/config.yaml plus BOWERBIRD_* overrides."""

from __future__ import annotations

import logging
import math
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError
from .types import type_names

log = logging.getLogger(__name__)

ENV_PREFIX = "BOWERBIRD_"
_TRUE = {"1", "true", "yes", "on", "y", "t"}
_FALSE = {"0", "false", "no", "off", "n", "f", ""}
# auto: local int8 ONNX, else local torch, else Gemini when a key is set; local: ONNX, else torch;
# onnx / torch: only that local runtime; gemini: only Gemini; none: keywords and graph only
EMBEDDING_BACKENDS = ("auto", "local", "onnx", "torch", "gemini", "none")
# auto: the host's model inside Hermes, else Gemini when a key is set; host / gemini: only that one; none: no model
LLM_BACKENDS = ("auto", "host", "gemini", "none")
# process: one curation worker process per memory home (the agent's threads never wait on curation's work);
# thread: curation on a thread of the process that captured the turn (embedded use, tests; the fallback)
CURATION_MODES = ("process", "thread")
# settings that name one of a fixed set of choices, written exactly as listed
CHOICES = {
    "embedding_backend": EMBEDDING_BACKENDS,
    "llm_backend": LLM_BACKENDS,
    "curation_mode": CURATION_MODES,
}


@dataclass(frozen=True)
class RetrievalWeights:
    """Fusion and rescoring weights; defaults chosen by benchmarks/bench_recall.py on the dev split."""

    # small k lets each signal's top ranks dominate (LoCoMo dev: k=60 0.50, k=2 0.66 any@5)
    rrf_k: float = 2.0
    # a question in other words than the store's leans on the vector signals: their weights x (1 + meaning_lean x
    # max(0, 1 - evidence / meaning_enough)), evidence = the best keyword coverage of the full-text signals' top items
    # 0 = off; everyday tool top 5 0.912 -> 0.956, LongMemEval R@5 0.946 -> 0.959
    meaning_lean: float = 2.0
    meaning_enough: float = 0.5  # the keyword evidence at which the lean stops
    fts_memory: float = 0.7
    fts_episode: float = 1.0
    vector_memory: float = 0.5
    vector_episode: float = 0.8
    # the questions stored with memories, matched to the query (retrieval/signals.py "question")
    question: float = 0.6
    # a stored question less similar to the query than this finds nothing; measured on the dev sets with the same
    # vectors: 0 costs LoCoMo any@5 0.707 -> 0.705, session hit@5 0.880 -> 0.875 and LongMemEval R@1 0.872 -> 0.868;
    # 0.6 costs nothing there and keeps everyday's 0.779 injected
    question_floor: float = 0.6
    graph: float = 0.3
    # memories filling a profile slot a question about the user names ("where do I live")
    subject: float = 1.0
    # share of the previous turn's score an episode inherits (same session)
    neighbour_prev: float = 0.4
    neighbour_next: float = 0.2  # share of the next turn's score an episode inherits
    session: float = 0.6  # lift for episodes of the best-matching sessions (0 = off)
    importance: float = 0.3  # how far effective importance moves a fused score (0 = not at all)
    episode_importance: float = 0.5  # the effective importance episodes are rescored with
    # share the assistant's turns keep in questions about the user
    assistant_about_user: float = 0.5
    superseded_penalty: float = 0.3  # multiplier for superseded or expired memories
    type_boost: float = 0.3  # bonus share for memories of a type the query hints at
    time_boost: float = 0.5  # bonus share for items inside a time window named in the query
    recency: float = 0.3  # bonus share for new items when the query says "recently"
    # effective importance halves after this long without access
    decay_half_life_days: float = 180.0
    access_boost: float = 0.1  # bonus per doubling of the access count
    # second-stage rerank of the best candidates by the items themselves (retrieval/rerank.py)
    rerank_cosine: float = 1.0  # exp(w x cosine to the query)
    # exp(w x idf-weighted share of the query's keywords the item holds)
    rerank_coverage: float = 0.8
    # (1 + min(chars, substance_chars)) ^ w: very short items rarely answer
    rerank_substance: float = 1.0
    rerank_memory: float = 0.2  # exp(w) for curated memories over raw episodes
    # the keyword coverage a memory filling the profile slot the question names counts as
    slot_coverage: float = 1.0
    substance_chars: float = 250.0  # the length past which an item is no more substantial
    mmr_lambda: float = 0.7
    # prefetch gate (retrieval/gate.py): logistic of the cosine's z-score over the store and keyword coverage
    gate_z: float = 1.0  # weight of the z-score, in units of the chance maximum (sqrt(2 ln size))
    gate_chance: float = 0.75  # the z (in chance maxima) at which the cosine part is neutral
    gate_cosine: float = 10.0  # weight of the plain cosine, read against gate_cosine_center
    gate_cosine_center: float = 0.45  # the cosine at which the plain-cosine part is neutral
    gate_coverage: float = 1.0  # weight of the idf-weighted keyword coverage
    gate_keywords_bias: float = -0.5  # without a vector: logistic(gate_coverage x coverage + this)
    # the best of a memory's stored questions matched to the query: + gate_question x max(0, cosine - center)
    gate_question: float = 6.0
    gate_question_center: float = 0.55
    # the gate's share of a query whose roles were given their names ("my husband" -> "my husband Tomasz"):
    # 1 reads the query with names, 0 without (retrieval.retriever.Retriever._gate_vector)
    gate_role_names: float = 0.0
    # a hit this similar (cosine, or word overlap) to a better one is dropped
    duplicate_similarity: float = 0.9


@dataclass(frozen=True)
class Config:
    """Every setting of bowerbird, with defaults that work when no file exists."""

    hermes_home: Path
    db_path: Path
    # a PostgreSQL server (postgresql://user:password@host:port/database) to keep memory in instead of the SQLite
    # file at db_path, shared by every host that names it; the file's folder still holds this home's lock files
    database_url: str = field(default="", repr=False)
    # embeddings
    embedding_backend: str = "auto"  # one of EMBEDDING_BACKENDS
    embedding_model: str = ""  # name or path; empty picks the shipped MiniLM
    # threads for the local model; 0 = torch: one per core, ONNX and the curation worker process: up to 2
    # (curation/worker.py)
    embedding_threads: int = 0
    # where built ONNX models are cached, shared by every memory home of the user; empty = the user's cache folder
    # ($XDG_CACHE_HOME or ~/.cache)/hermes-bowerbird/models
    embedding_models_dir: str = ""
    gemini_api_key: str = field(default="", repr=False)
    gemini_embedding_model: str = "gemini-embedding-001"
    gemini_base_url: str = ""
    ann_threshold: int = 200_000
    # language model
    llm_backend: str = "auto"  # one of LLM_BACKENDS
    gemini_model: str = "gemini-2.5-flash"
    llm_daily_budget: int = 200
    llm_batch_turns: int = 8
    # write path
    # one of CURATION_MODES; thread where a worker process cannot start
    curation_mode: str = "process"
    dedup_threshold: float = 0.92
    related_threshold: float = 0.75
    shutdown_drain_seconds: float = 10.0
    # how long a curation worker's claim on the journal rows it is curating lasts (a worker that dies on another
    # host leaves its rows to the others after this; one that dies on this host is noticed at once)
    curation_lease_seconds: float = 60.0
    # read path
    # an optional cross-encoder (name or path of a sentence-transformers CrossEncoder; empty = none) that rereads the
    # best `reranker_candidates` of a search beside the query, when it fits the time left (retrieval/cross_encoder.py).
    # A candidate's score is multiplied by exp(reranker_weight x (p - p_best)), p its cross-encoder relevance in
    # (0, 1); the gate adds reranker_gate_weight x (p - 0.5) to its logit (gate.relevance)
    reranker_model: str = ""
    reranker_candidates: int = 20
    reranker_weight: float = 2.0
    reranker_gate_weight: float = 0.0
    prefetch_budget_tokens: int = 600
    prefetch_timeout_seconds: float = 3.0
    # the gate's operating point: items of lower relevance are not injected unasked
    prefetch_gate: float = 0.5
    recall_limit: int = 8
    weights: RetrievalWeights = field(default_factory=RetrievalWeights)
    # maintenance
    maintenance_enabled: bool = True
    prune_threshold: float = 0.1
    # comma-separated memory types that never decay
    decay_exempt_types: str = "identity,decision,procedure"
    prune_grace_days: float = 30.0
    purge_after_days: float = 90.0
    association_threshold: float = 0.85
    update_candidate_threshold: float = 0.95
    consolidation_threshold: float = 0.90
    consolidation_min_cluster: int = 3
    bulletin_interval_seconds: float = 3600.0
    bulletin_max_words: int = 500
    episode_retention_days: float = 0.0  # 0 keeps episodes forever
    bulletin_llm_max_words: int = 300  # synthesised bulletin length (hard cap 1,500)
    maintenance_job_seconds: float = 30.0  # time budget of one maintenance job run
    # markdown
    import_markdown: bool = True

    @property
    def store_target(self) -> Path | str:
        """What the store opens: the PostgreSQL server when `database_url` is set, else the SQLite file."""
        return self.database_url or self.db_path

    @property
    def model_cache_dir(self) -> Path:
        """Where the local model's int8 ONNX build is cached (built once per machine and user, on first use)."""
        if self.embedding_models_dir:
            return Path(self.embedding_models_dir).expanduser()
        return user_models_dir(os.environ)

    @property
    def home_models_dir(self) -> Path:
        """Where releases before the shared cache kept this home's own build (moved from there when found)."""
        return self.hermes_home / "bowerbird" / "models"


def user_models_dir(env: Mapping[str, str]) -> Path:
    """The user's cache of built models: $XDG_CACHE_HOME (when absolute, as the XDG spec asks) or ~/.cache, then
    hermes-bowerbird/models."""
    base = env.get("XDG_CACHE_HOME", "")
    if not base or not Path(base).is_absolute():
        home = env.get("HOME")
        base = str(Path(home) / ".cache") if home else str(Path.home() / ".cache")
    return Path(base) / "hermes-bowerbird" / "models"


def load_config(
    hermes_home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """Read config.yaml (if any), then BOWERBIRD_* variables, then explicit overrides."""
    env = os.environ if environ is None else environ
    home = Path(hermes_home or env.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()
    values: dict[str, Any] = {}
    values.update(_read_yaml(home / "bowerbird" / "config.yaml"))
    values.update(_from_env(env))
    if not values.get("gemini_api_key"):
        values["gemini_api_key"] = env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY") or ""
    values.update(overrides or {})
    if not values.get("embedding_models_dir"):
        values["embedding_models_dir"] = str(user_models_dir(env))
    return build_config(home, values)


def build_config(hermes_home: Path, values: Mapping[str, Any]) -> Config:
    """Coerce loose values (strings from env or wizards) into a Config; unknown keys are rejected."""
    known = {f.name: f for f in fields(Config)}
    kwargs: dict[str, Any] = {"hermes_home": hermes_home}
    weight_values: dict[str, Any] = {}
    for key, raw in values.items():
        if key.startswith("weights.") or key.startswith("weights_"):
            weight_values[key[len("weights") + 1 :]] = raw
        elif key == "weights" and isinstance(raw, Mapping):
            weight_values.update(raw)
        elif key in known and key != "hermes_home":
            kwargs[key] = _coerce(key, raw, _field_type(Config, key))
        else:
            raise ConfigError(f"unknown setting {key!r}")
    kwargs["weights"] = _build_weights(weight_values)
    _check_types("decay_exempt_types", kwargs.get("decay_exempt_types", ""))
    for key, choices in CHOICES.items():
        _check_choice(key, kwargs.get(key, choices[0]), choices)
    _check_reranker(kwargs)
    db = kwargs.get("db_path")
    kwargs["db_path"] = Path(db).expanduser() if db else hermes_home / "bowerbird" / "memory.db"
    _check_database_url(kwargs.get("database_url", ""))
    return Config(**kwargs)


def _check_database_url(url: str) -> None:
    """A server address must be a PostgreSQL one; the message never repeats the address (it may hold a password)."""
    if url and not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            "setting 'database_url': expected a postgresql:// address "
            "(leave it empty for the SQLite file at db_path)"
        )


MAX_RERANKER_CANDIDATES = 100


def _check_reranker(values: Mapping[str, Any]) -> None:
    """The reranker's settings: a candidate count the reranker can read within a turn, finite weights of 0 or more."""
    candidates = values.get("reranker_candidates", 20)
    if not 1 <= candidates <= MAX_RERANKER_CANDIDATES:
        raise ConfigError(
            f"setting 'reranker_candidates': {candidates} is not between 1 and {MAX_RERANKER_CANDIDATES}"
        )
    for key in ("reranker_weight", "reranker_gate_weight"):
        weight = values.get(key, 0.0)
        if not math.isfinite(weight) or weight < 0:
            raise ConfigError(f"setting {key!r}: {weight} is not a finite number of 0 or more")


def _check_types(key: str, value: str) -> None:
    known = set(type_names())
    unknown = [name for name in (p.strip() for p in value.split(",")) if name and name not in known]
    if unknown:
        raise ConfigError(f"setting {key!r}: unknown memory type(s) {', '.join(unknown)}")


def _check_choice(key: str, value: str, choices: tuple[str, ...]) -> None:
    """A misspelt choice is refused, naming the allowed values."""
    if value not in choices:
        raise ConfigError(f"setting {key!r}: {value!r} is not one of {', '.join(choices)}")


def _build_weights(values: Mapping[str, Any]) -> RetrievalWeights:
    known = {f.name for f in fields(RetrievalWeights)}
    unknown = set(values) - known
    if unknown:
        raise ConfigError(f"unknown retrieval weight(s): {', '.join(sorted(unknown))}")
    return RetrievalWeights(**{k: _coerce(f"weights.{k}", v, float) for k, v in values.items()})


def _field_type(cls: type, name: str) -> Any:
    hints = typing.get_type_hints(cls)
    return hints[name]


def _coerce(key: str, raw: Any, target: Any) -> Any:
    if isinstance(target, types.UnionType):  # e.g. Path | None
        target = next(t for t in typing.get_args(target) if t is not type(None))
    try:
        if target is bool:
            return _to_bool(raw)
        if target is int:
            return int(str(raw).strip().replace("_", "")) if not isinstance(raw, int) else raw
        if target is float:
            return float(raw)
        if target is Path:
            return Path(str(raw)).expanduser()
        if target is str:
            if isinstance(raw, (list, tuple)):  # a YAML list for a comma-separated setting
                return ",".join(str(item) for item in raw)
            return "" if raw is None else str(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {key!r}: cannot read {raw!r} as {target.__name__}") from exc
    raise ConfigError(f"setting {key!r} cannot be set from configuration")


def _to_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(raw)


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level")
    return _flatten(data)


def _flatten(data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "weights" and isinstance(value, Mapping):
            out.update({f"weights.{k}": v for k, v in value.items()})
        else:
            out[str(key)] = value
    return out


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    known = {f.name for f in fields(Config)} - {"hermes_home", "weights"}
    weights = {f.name for f in fields(RetrievalWeights)}
    out: dict[str, Any] = {}
    for name, value in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key.startswith("weights_") and key[len("weights_") :] in weights:
            out["weights." + key[len("weights_") :]] = value
        elif key in known:
            out[key] = value
        else:
            log.warning("ignoring unknown environment setting %s", name)
    return out


def save_settings(hermes_home: Path, values: Mapping[str, Any]) -> Path:
    """Merge validated settings into $HERMES_HOME/bowerbird/config.yaml (used by `hermes memory setup`)."""
    path = hermes_home / "bowerbird" / "config.yaml"
    current = _read_yaml(path)
    merged = {**current, **{str(k): v for k, v in values.items()}}
    build_config(hermes_home, merged)  # raises ConfigError before anything is written
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(yaml.safe_dump(merged, sort_keys=True), encoding="utf-8")
    tmp.replace(path)
    return path
