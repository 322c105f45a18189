"""The optional cross-encoder reranker: a sentence-transformers CrossEncoder reading the query beside each of the
best few candidates, loaded on its own thread and run only when it fits the time a search has left.

Its time is learned: a warm-up run after loading, then every run, give the seconds per query-item pair (an
exponential average), and a search whose time left cannot hold the estimate for its candidates skips the reranker
without waiting for it. A run that outlasts the time left all the same is left to finish on the reranker's own
thread (it teaches the estimate) while the search goes on without its scores; one run at a time, so a search that
finds the reranker still busy skips it too.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..embeddings.local import looks_like_path
from ..errors import EmbeddingError

log = logging.getLogger(__name__)

THREAD_NAME = "bowerbird-rerank"
# the share of the last estimate a new measurement of the seconds per pair moves it by
LEARNING_RATE = 0.3
# what the warm-up after loading pairs the query with: a sentence of an everyday memory's length
WARM_UP_QUERY = "where does the user live now and what do they do for work?"
WARM_UP_TEXT = "The user moved to Porto last month and works as a nurse at the city hospital there."


class CrossEncoderReranker:
    """Scores (query, text) pairs with a CrossEncoder within a deadline, or says it could not (None).

    `model`: a name or a path of a sentence-transformers CrossEncoder. States: "not started", "loading", "ready",
    "unavailable" (the model would not load: one error in the log, and searches go on without it)."""

    def __init__(
        self,
        model: str,
        *,
        candidates: int,
        threads: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`threads`: torch's threads for the reranker's runs (config `embedding_threads`; 0 keeps torch's one per
        core), set on its own thread, which loads and runs the model. On a busy 2-core machine 2 threads took
        124 ms for 20 short pairs of a tiny model, 1 thread 5.6 ms (the engine gives it one unless configured)."""
        self.model = model
        self.threads = threads
        self.candidates = candidates
        self._clock = clock
        self._lock = threading.Lock()
        self._settled = threading.Event()
        self._encoder: Any = None
        self._state, self._reason = "not started", ""
        self._per_pair: float | None = None
        # held from a run's submission to its end, on whichever thread
        self._busy = threading.Lock()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=THREAD_NAME)
        self._counts = {"runs": 0, "skipped_not_ready": 0, "skipped_no_time": 0, "skipped_slow": 0}

    # ----- loading -----------------------------------------------------------------------------

    def start(self) -> None:
        """Begin loading the model on the reranker's thread (idempotent); returns at once."""
        with self._lock:
            if self._state != "not started":
                return
            self._state, self._reason = "loading", f"loading {self.model}"
        try:
            self._pool.submit(self._load)
        except RuntimeError:  # closed meanwhile
            self._settled.set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until loading ended; True when the reranker can score."""
        self._settled.wait(timeout)
        return self._state == "ready"

    def close(self) -> None:
        """Stop taking work; a run in flight finishes on its own thread."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _load(self) -> None:
        started = self._clock()
        try:
            encoder = _load_encoder(self.model, self.threads)
            self._measure(encoder, [(WARM_UP_QUERY, WARM_UP_TEXT)] * self.candidates)
        except Exception as exc:  # a failing user's model costs the reranker, never the search
            reason = f"reranker_model {self.model!r} cannot be used: {exc}"
            log.error("%s; recall goes on without the reranker", reason)
            with self._lock:
                self._state, self._reason = "unavailable", reason
            self._settled.set()
            return
        with self._lock:
            self._encoder, self._state = encoder, "ready"
            self._reason = (
                f"cross-encoder {self.model} loaded in {self._clock() - started:.1f} s, "
                f"{1000 * (self._per_pair or 0.0):.2f} ms per candidate"
            )
        log.info("%s", self._reason)
        self._settled.set()

    # ----- scoring -----------------------------------------------------------------------------

    def estimate(self, pairs: int) -> float | None:
        """Seconds a run over this many pairs is expected to take (None before any was measured)."""
        per_pair = self._per_pair
        return None if per_pair is None else per_pair * pairs

    def score(self, query: str, texts: Sequence[str], deadline: float) -> list[float] | None:
        """Each text's relevance to the query in (0, 1) (the logistic of the model's logit), or None when the
        reranker is not ready, the run would not fit before `deadline` (a `clock` time), it is busy, or it did not
        finish in time."""
        if not texts:
            return []
        left = deadline - self._clock()
        expected = self.estimate(len(texts))
        if self._state != "ready":
            self._skip("skipped_not_ready")
            return None
        if expected is None or expected > left or not self._busy.acquire(blocking=False):
            self._skip("skipped_no_time")
            return None
        pairs = [(query, text) for text in texts]
        try:
            future = self._pool.submit(self._run, pairs)
        except RuntimeError:  # closed
            self._busy.release()
            self._skip("skipped_not_ready")
            return None
        try:
            logits = future.result(timeout=max(0.0, deadline - self._clock()))
        except concurrent.futures.TimeoutError:
            log.info(
                "the reranker outlasted the time left (%.0f ms); ranked without it", 1000 * left
            )
            self._skip("skipped_slow")
            return None
        with self._lock:
            self._counts["runs"] += 1
        return [_logistic(v) for v in logits]

    def _run(self, pairs: list[tuple[str, str]]) -> list[float]:
        try:
            return self._measure(self._encoder, pairs)
        finally:
            self._busy.release()

    def _measure(self, encoder: Any, pairs: list[tuple[str, str]]) -> list[float]:
        """The model's logits for the pairs, learning the seconds per pair from how long they took."""
        import torch

        started = self._clock()
        logits = encoder.predict(
            pairs,
            batch_size=max(1, len(pairs)),
            activation_fn=torch.nn.Identity(),
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        per_pair = (self._clock() - started) / max(1, len(pairs))
        with self._lock:
            last = self._per_pair
            self._per_pair = per_pair if last is None else last + LEARNING_RATE * (per_pair - last)
        return [float(v) for v in logits.reshape(-1)]

    def _skip(self, why: str) -> None:
        with self._lock:
            self._counts[why] += 1

    def status(self) -> dict[str, object]:
        per_pair = self._per_pair
        with self._lock:
            return {
                "model": self.model,
                "state": self._state,
                "reason": self._reason,
                "candidates": self.candidates,
                "ms_per_candidate": None if per_pair is None else round(1000 * per_pair, 3),
                **self._counts,
            }


def _load_encoder(model: str, threads: int) -> Any:
    """The CrossEncoder at a path, or by name from the local model cache."""
    path = Path(model).expanduser()
    local = path.exists()
    if not local and looks_like_path(model):
        raise EmbeddingError(f"the path {model!r} does not exist")
    import torch
    from sentence_transformers import CrossEncoder

    if threads > 0:
        torch.set_num_threads(threads)

    location = str(path) if local else model
    return CrossEncoder(location, device="cpu", local_files_only=local)


def _logistic(value: float) -> float:
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1.0 + exp)
