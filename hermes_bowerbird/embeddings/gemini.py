"""Gemini embeddings through google-genai: batched, retried on transient errors with jittered backoff."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EmbeddingError
from ..llm.transient import is_auth_failure, is_transient, transport_errors
from .index import normalize_rows

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..config import Config

    FloatArray = npt.NDArray[np.float32]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GeminiEmbeddingSettings:
    """What a Gemini embedder needs: the key and model, the vector size, and how long and often to try."""

    api_key: str
    model: str = "gemini-embedding-001"
    dimension: int = 768
    base_url: str = ""
    timeout: float = 30.0  # seconds per request
    attempts: int = 5
    backoff_initial: float = 1.0  # seconds before the first retry (doubling, jittered)
    backoff_max: float = 30.0

    @classmethod
    def from_config(cls, config: Config, **overrides: Any) -> GeminiEmbeddingSettings:
        """The settings the configuration gives (key, model, base URL), with `overrides` applied."""
        settings = cls(
            config.gemini_api_key, config.gemini_embedding_model, base_url=config.gemini_base_url
        )
        return dataclasses.replace(settings, **overrides)


class GeminiEmbedder:
    """Gemini embeddings through google-genai: batched, retried with jittered backoff on 429/5xx/timeouts."""

    BATCH_LIMIT = 100  # batchEmbedContents accepts at most 100 requests

    def __init__(self, settings: GeminiEmbeddingSettings) -> None:
        if not settings.api_key:
            raise EmbeddingError("Gemini embeddings need an API key (set GEMINI_API_KEY)")
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            base_url=settings.base_url or None,
            timeout=int(settings.timeout * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self._client = genai.Client(api_key=settings.api_key, http_options=options)
        self._config = types.EmbedContentConfig(output_dimensionality=settings.dimension)
        self._model = settings.model
        self._dimension = settings.dimension
        self._attempts = max(1, settings.attempts)
        self._backoff = (settings.backoff_initial, settings.backoff_max)

    @property
    def model_name(self) -> str:
        return self._model if self._dimension == 3072 else f"{self._model}/{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def is_local(self) -> bool:
        return False

    def embed(self, text: str) -> FloatArray:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        if not texts:
            return np.empty((0, self._dimension), np.float32)
        parts = [
            self._embed_chunk(list(texts[i : i + self.BATCH_LIMIT]))
            for i in range(0, len(texts), self.BATCH_LIMIT)
        ]
        return np.concatenate(parts)

    def _embed_chunk(self, texts: list[str]) -> FloatArray:
        import tenacity

        initial, maximum = self._backoff
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self._attempts),
            wait=tenacity.wait_exponential_jitter(initial=initial, max=maximum, jitter=initial),
            retry=tenacity.retry_if_exception(is_transient),
            before_sleep=lambda state: log.warning(
                "Gemini embedding attempt %d failed (%s); retrying",
                state.attempt_number,
                _outcome_text(state),
            ),
            reraise=True,
        )
        from google.genai import errors as genai_errors

        failures: tuple[type[BaseException], ...] = (genai_errors.APIError, *transport_errors())
        try:
            response = retrying(
                self._client.models.embed_content,
                model=self._model,
                contents=texts,
                config=self._config,
            )
        except failures as exc:
            raise self._translate(exc) from exc
        return self._vectors(response, len(texts))

    def _translate(self, exc: BaseException) -> EmbeddingError:
        if is_auth_failure(exc):
            return EmbeddingError(f"Gemini rejected the API key ({exc}); check GEMINI_API_KEY")
        if is_transient(exc):
            return EmbeddingError(f"Gemini embedding failed after {self._attempts} attempts: {exc}")
        return EmbeddingError(f"Gemini embedding request failed: {exc}")

    def _vectors(self, response: Any, expected: int) -> FloatArray:
        embeddings = response.embeddings or []
        if len(embeddings) != expected:
            raise EmbeddingError(
                f"Gemini returned {len(embeddings)} embeddings for {expected} texts"
            )
        matrix = np.asarray([e.values or [] for e in embeddings], dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] != self._dimension:
            raise EmbeddingError(
                f"Gemini returned vectors of shape {matrix.shape}, expected dimension "
                f"{self._dimension}"
            )
        return normalize_rows(matrix)


def _outcome_text(state: Any) -> str:
    outcome = state.outcome
    return str(outcome.exception()) if outcome is not None and outcome.failed else "no result"
