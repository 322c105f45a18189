"""The local model as an int8 ONNX graph: built once per machine and user from its weights (builds.py), run by
onnxruntime with the model's own tokenizer, pooling (token mean, or the first token) and prompts.

sentence-transformers' own `backend="onnx"` needs optimum-onnx, whose only release pins transformers below 5
while sentence-transformers 6 needs 5 or later; so the graph is exported here with torch's ONNX exporter, its
attention, layer norms and activations fused by onnxruntime's transformer optimizer, and quantised with
onnxruntime's dynamic quantiser. Measured on LongMemEval chat texts (cosine to the torch vectors, 200 texts):
quantising every MatMul per tensor gives a mean of 0.958 (worst 0.80); per output channel 0.993 (worst 0.97);
per channel with the feed-forward down-projections kept in float32 0.996 (worst 0.987); and with the first layer
kept in float32 as well 0.997 (worst 0.990), the choice here. Embedding tables stay float32. Exporting attention
as plain matrix products (not PyTorch's fused kernel, which the optimizer cannot read) lets it fuse each layer's
attention into one operator: same agreement (mean 0.997, worst 0.989), and a query embeds in 5.3 ms instead of
6.3 (p50, 400 questions, both builds interleaved in one run).

The float32 products are 45% of the model's multiply-adds, and cost time: on one thread a stored text of 500
characters embeds in 10.6 ms; with only the first three layers' down-projections in float32, in 8.4 ms (mean
agreement 0.9973 against 0.9979 on 200 such texts, 0.9970 against 0.9976 on 250 questions), everything int8 in
7.1 ms (0.9953, 0.9949). The recall benchmark with the 8.4 ms build against this one, both int8: LoCoMo turn
recall_any@5 0.700 against 0.707, session hit@5 0.880 against 0.883, LongMemEval the same, the everyday set's
silence on unanswerable questions 0.853 against 0.824. Int8 already moves a few questions near the prefetch
gate against torch, so the build keeps the agreement, and curation finds its time elsewhere.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EmbeddingError
from .builds import BuildCache, BuildSource, Recipe, read_stamp, write_stamp
from .local import (
    LOADED_MODELS,
    LoadedModels,
    LocalRuntime,
    Prompts,
    default_threads,
    read_prompts,
    resolve_local_model,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

RUNTIME = "onnx-int8"
# bump when the export or quantisation recipe changes: old builds are then ignored
BUILD_VERSION = 3
MODEL_FILE = "model_int8.onnx"
RECIPE = Recipe(MODEL_FILE, "int8", BUILD_VERSION)
DEFAULT_MAX_TOKENS = 256
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
QUANTISED_OPS = ("MatMul", "Attention")
BUILD_TIMEOUT_S = 900.0


def onnx_available() -> bool:
    """Whether onnxruntime (to run) and onnx (to quantise) are importable."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def build_cache(models_dir: Path, legacy: Sequence[Path] = ()) -> BuildCache:
    """The int8 builds under `models_dir` (the per-user cache), adopting builds found in `legacy` folders."""
    return BuildCache(models_dir, RECIPE, legacy)


def build_dir(models_dir: Path, label: str, location: str) -> Path:
    """Where the int8 build of the model at `location` lives under `models_dir` (one folder per model's files)."""
    cache = build_cache(models_dir)
    return cache.folder(cache.source(label, location))


def is_built(models_dir: Path, label: str, location: str) -> bool:
    """Whether a complete int8 build of the model at `location` is cached in `models_dir`."""
    cache = build_cache(models_dir)
    return cache.built(cache.source(label, location)) is not None


def ensure_built(
    models_dir: Path,
    label: str,
    location: str,
    *,
    legacy: Sequence[Path] = (),
    damaged: str | None = None,
) -> Path:
    """The cached int8 model file, building it first when absent (or when the build `damaged` would not load);
    one builder at a time across processes, the others wait for its build."""
    cache = build_cache(models_dir, legacy)
    try:
        source = cache.source(label, location)
    except OSError as exc:
        raise EmbeddingError(
            f"cannot read the model files of {label} at {location}: {exc}"
        ) from exc
    try:
        return cache.ensure(source, _build_in_subprocess, damaged=damaged)
    except EmbeddingError:
        raise
    except Exception as exc:  # the disk, the lock and the exporter raise many unrelated types
        raise EmbeddingError(
            f"cannot build the ONNX model of {label} in {models_dir}: {exc}"
        ) from exc


def _build_in_subprocess(target: Path, source: BuildSource) -> None:
    """Build in a child process: torch and the exporter never load into the host, nor hold its GIL for ~30 s."""
    command = [
        sys.executable,
        "-m",
        "hermes_bowerbird.embeddings.onnx_runtime",
        str(target),
        source.label,
        source.location,
        source.digest,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EmbeddingError(f"building the ONNX model of {source.label} failed: {exc}") from exc
    if done.returncode != 0 or read_stamp(target) is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise EmbeddingError(
            f"building the ONNX model of {source.label} failed (exit {done.returncode}): "
            f"{' / '.join(tail)}"
        )


def _build(target: Path, source: BuildSource) -> None:
    """Export float32 ONNX from the local weights, quantise it to int8, then move the folder into place."""
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        float_path = work / "model_float32.onnx"
        fused_path = work / "model_fused.onnx"
        heads, hidden = _export(source.location, float_path)
        _quantise(_fuse(float_path, fused_path, heads, hidden), work / MODEL_FILE)
        float_path.unlink()
        fused_path.unlink(missing_ok=True)
        write_stamp(work, source, RECIPE)
        if target.exists():  # an unfinished or damaged build
            shutil.rmtree(target)
        work.rename(target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    log.info(
        "built the int8 ONNX model of %s in %.1f s", source.label, time.perf_counter() - started
    )


def _export(location: str, out: Path) -> tuple[int, int]:
    """Export the transformer to float32 ONNX at `out`; its attention heads and hidden size, for fusing."""
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbeddingError(
            f"building the ONNX model needs torch and sentence-transformers ({exc})"
        ) from exc
    # eager attention exports as the matrix products the optimizer fuses; the default (SDPA) does not fuse
    model = SentenceTransformer(
        location, device="cpu", model_kwargs={"attn_implementation": "eager"}
    )
    transformer: Any = model[0].auto_model
    transformer.eval()
    tokens = model.tokenizer(
        ["a short text", "a somewhat longer second text"], padding=True, return_tensors="pt"
    )
    names = [n for n in INPUTS if n in tokens]

    class _Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *args: Any) -> Any:
            return self.inner(**dict(zip(names, args, strict=True))).last_hidden_state

    axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]}
    with torch.no_grad(), warnings.catch_warnings():
        # tracer notes about shape-dependent branches the export does not take
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Hidden(),
            tuple(tokens[n] for n in names),
            str(out),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    config = transformer.config
    return int(config.num_attention_heads), int(config.hidden_size)


def _fuse(source: Path, out: Path, heads: int, hidden: int) -> Path:
    """`source` with each layer's attention, skip layer norms and activations fused, saved at `out`; `source`
    itself when the optimizer cannot fuse this model's attention (the graph then runs unfused, only slower)."""
    from onnxruntime.transformers import optimizer

    try:
        fused = optimizer.optimize_model(
            str(source), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=1
        )
    except Exception as exc:  # the optimizer raises many unrelated error types
        log.warning("cannot fuse the ONNX graph (%s); it stays unfused", exc)
        return source
    if not fused.get_fused_operator_statistics().get("Attention"):
        log.warning("the optimizer found no attention to fuse; the ONNX graph stays unfused")
        return source
    fused.save_model_to_file(str(out))
    return out


def _quantise(source: Path, out: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(source), load_external_data=False).graph
    quantize_dynamic(
        str(source),
        str(out),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=list(QUANTISED_OPS),
        nodes_to_exclude=_float_nodes(graph.node),
        # fused operators live outside ONNX's own domain, where shape inference cannot type their outputs
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def _float_nodes(nodes: Any) -> list[str]:
    """The nodes that stay float32 (where int8 cost the most cosine): the first layer (its matrix products and,
    in a fused graph, the first attention operator, nodes being in execution order) and every feed-forward
    down-projection."""
    first_attention = next((n.name for n in nodes if n.op_type == "Attention"), None)
    return [
        n.name
        for n in nodes
        if n.op_type in QUANTISED_OPS
        and (
            n.name == first_attention
            or "/layer.0/" in n.name
            or (n.name.endswith("/output/dense/MatMul") and "/attention/" not in n.name)
        )
    ]


def _max_tokens(location: str) -> int:
    """The model's sequence length as sentence-transformers reads it (its module config, or the tokenizer's
    `model_max_length` where newer releases save it), never past the model's position embeddings."""
    folder = Path(location)
    saved = _json_number(folder / "sentence_bert_config.json", "max_seq_length") or _json_number(
        folder / "tokenizer_config.json", "model_max_length"
    )
    positions = _json_number(folder / "config.json", "max_position_embeddings")
    return min(saved or DEFAULT_MAX_TOKENS, positions or DEFAULT_MAX_TOKENS)


def _json_number(path: Path, key: str) -> int | None:
    """A positive whole number under `key` in a JSON file (None when absent, unreadable or absurdly large: the
    tokenizer's "no limit" is 1e30)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e6:
        return None
    return int(value)


# the sentence-transformers modules this runtime reproduces: the transformer, its pooling, and normalising
RUN_MODULES = frozenset({"Transformer", "Pooling", "Normalize"})
# pooling as sentence-transformers 6 writes it ("pooling_mode": "mean"), and as earlier releases did
POOLING_MODES = {"mean": "mean", "cls": "cls"}
POOLING_FLAGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}


@dataclass(frozen=True)
class Layout:
    """How the model turns token states into a text's vector, as far as this runtime reproduces it."""

    pooling: str  # "mean" or "cls"
    prompts: Prompts
    max_tokens: int


def read_layout(location: str) -> Layout:
    """The model's pooling and prompts; EmbeddingError for what the ONNX runtime cannot reproduce (torch can).

    A plain transformers folder (no modules.json) is pooled by token mean, as sentence-transformers does."""
    root = Path(location)
    modules = _read_json(root / "modules.json", [])
    kinds = {str(m.get("type", "")).rsplit(".", 1)[-1]: m for m in modules if isinstance(m, dict)}
    extra = sorted(set(kinds) - RUN_MODULES)
    if extra:
        raise EmbeddingError(
            f"the ONNX runtime runs a transformer with pooling only; {location} also has "
            f"{', '.join(extra)}"
        )
    if str(kinds.get("Transformer", {}).get("path", "")) not in ("", "."):
        raise EmbeddingError(f"the ONNX runtime needs the transformer at the top of {location}")
    prompts = read_prompts(location)
    pooling = "mean"
    if modules:
        folder = str(kinds.get("Pooling", {}).get("path", "1_Pooling"))
        config = _read_json(root / folder / "config.json", None)
        if not isinstance(config, dict):
            raise EmbeddingError(f"no pooling configuration at {location}")
        pooling = _pooling_mode(config, location)
        if config.get("include_prompt") is False and prompts != Prompts():
            raise EmbeddingError(
                f"the ONNX runtime pools over the prompt too; {location} leaves its prompt out"
            )
    return Layout(pooling, prompts, _max_tokens(location))


def _pooling_mode(config: dict[str, Any], location: str) -> str:
    mode = config.get("pooling_mode")
    if isinstance(mode, str):
        modes = [POOLING_MODES.get(mode, f"{mode}?")]
    else:
        modes = [
            POOLING_FLAGS.get(key, f"{key}?")
            for key, on in config.items()
            if key.startswith("pooling_mode_") and on
        ]
    if len(modes) != 1 or modes[0] not in POOLING_MODES.values():
        raise EmbeddingError(
            f"the ONNX runtime pools by token mean or the first token only; {location} pools "
            f"by {', '.join(modes) or 'nothing'}"
        )
    return modes[0]


def _read_json(path: Path, missing: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return missing
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot read {path}: {exc}") from exc


class OnnxModel:
    """An onnxruntime session over the int8 model and the model's fast tokenizer; safe to share across threads.

    No lock: onnxruntime runs concurrent calls, so a short query is never queued behind a batch being curated.
    """

    def __init__(
        self, model_file: Path, location: str, layout: Layout, *, threads: int = 0
    ) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(f"onnxruntime is not installed ({exc})") from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads if threads > 0 else default_threads(os.cpu_count())
        options.inter_op_num_threads = 1
        # idle threads sleep, not spin
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(
                str(model_file), options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = Tokenizer.from_file(str(Path(location) / "tokenizer.json"))
        except Exception as exc:  # onnxruntime raises its own unexported error types
            raise EmbeddingError(f"cannot load the ONNX model {model_file}: {exc}") from exc
        self._tokenizer.enable_truncation(layout.max_tokens)
        self._tokenizer.no_padding()
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.layout = layout
        self.dimension = int(self._session.get_outputs()[0].shape[-1])

    def encode(self, texts: Sequence[str]) -> FloatArray:
        """Unit pooled vectors of one padded batch."""
        encodings = self._tokenizer.encode_batch(list(texts))
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        if self.layout.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            summed = np.einsum("bth,bt->bh", hidden, mask.astype(np.float32))
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), np.float32)


def load_onnx_model(
    models_dir: Path,
    label: str,
    location: str,
    *,
    threads: int = 0,
    legacy: Sequence[Path] = (),
    models: LoadedModels = LOADED_MODELS,
) -> OnnxModel:
    """The shared int8 model of `location`, built into `models_dir` on first use when no build is cached there
    (or moved there from a `legacy` folder)."""
    return models.get(
        RUNTIME, location, lambda: _load(models_dir, label, location, threads, legacy)
    )


def _load(
    models_dir: Path, label: str, location: str, threads: int, legacy: Sequence[Path]
) -> OnnxModel:
    """Build when needed, then open; a cached build that will not open (a damaged file) is built again, once."""
    if not onnx_available():
        raise EmbeddingError("onnxruntime and onnx are not installed")
    layout = read_layout(location)
    model_file = ensure_built(models_dir, label, location, legacy=legacy)
    try:
        return OnnxModel(model_file, location, layout, threads=threads)
    except EmbeddingError as exc:
        stamp = read_stamp(model_file.parent) or {}
        log.warning("the ONNX build of %s cannot be loaded (%s); building it again", label, exc)
        model_file = ensure_built(models_dir, label, location, damaged=str(stamp.get("build_id")))
    return OnnxModel(model_file, location, layout, threads=threads)


class OnnxEmbedder(LocalRuntime):
    """The same local model as an int8 ONNX graph under onnxruntime: vectors agree with torch's (cosine >= 0.99).

    Its vectors are stored under the same model name as torch's, so either runtime reads the other's vectors.
    """

    runtime = RUNTIME

    def __init__(
        self,
        models_dir: Path,
        model: str = "",
        *,
        batch_size: int = 16,
        threads: int = 0,
        legacy: Sequence[Path] = (),
        models: LoadedModels = LOADED_MODELS,
    ) -> None:
        self._source = resolve_local_model(model)
        if not self._source.offline:
            raise EmbeddingError(
                f"the ONNX runtime builds from local weights only; {self._source.location!r} "
                "is not a local model"
            )
        self._model = load_onnx_model(
            models_dir,
            self._source.label,
            self._source.location,
            threads=threads,
            legacy=legacy,
            models=models,
        )
        self.prompts = self._model.layout.prompts
        self._batch_size = batch_size

    @property
    def dimension(self) -> int:
        return self._model.dimension

    def _encode(self, texts: list[str], prompt: str) -> FloatArray:
        return self._model.encode([prompt + t for t in texts] if prompt else texts)


def main(argv: Sequence[str]) -> int:
    """`python -m hermes_bowerbird.embeddings.onnx_runtime TARGET LABEL LOCATION DIGEST`: the build, run in a child
    process."""
    if len(argv) != 4:
        print(
            "usage: python -m hermes_bowerbird.embeddings.onnx_runtime TARGET LABEL LOCATION DIGEST",
            file=sys.stderr,
        )
        return 2
    logging.basicConfig(level=logging.INFO)
    try:
        _build(Path(argv[0]), BuildSource(argv[1], argv[2], argv[3]))
    except EmbeddingError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
