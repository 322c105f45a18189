"""Language-model backends: the host's own model, Gemini through google-genai, a daily call budget, selection."""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.util
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import tenacity

from .errors import LLMBudgetExceeded, LLMError
from .types import LLM, Clock

if TYPE_CHECKING:
    from .config import Config
    from .store import Store

log = logging.getLogger(__name__)

HOST_TASK = "bowerbird"
_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_AUTH_STATUS = frozenset({401, 403})
_BUDGET_KEY = "llm.calls."


def _status_of(exc: BaseException) -> int | None:
    """The HTTP status an SDK exception carries (openai: status_code, google-genai: code), if any."""
    for attr in ("status_code", "code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError):
        return True
    return any("timeout" in cls.__name__.lower() for cls in type(exc).__mro__)


def is_retryable(exc: BaseException) -> bool:
    """Rate limits, server errors and timeouts are worth another try; auth and bad requests are not."""
    if isinstance(exc, LLMError):
        return False
    status = _status_of(exc)
    if status is not None:
        return status in _RETRY_STATUS
    return _is_timeout(exc) or any("connect" in cls.__name__.lower() for cls in type(exc).__mro__)


def is_rate_limited(exc: BaseException) -> bool:
    return _status_of(exc) == 429


def _retrying(attempts: int, wait_max: float,
              retry_on: Callable[[BaseException], bool] = is_retryable) -> tenacity.Retrying:
    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max(1, attempts)),
        wait=tenacity.wait_random_exponential(multiplier=min(0.5, wait_max), max=wait_max),
        retry=tenacity.retry_if_exception(retry_on),
        reraise=True,
    )


class HostLLM:
    """The model the user configured in Hermes, reached through `agent.auxiliary_client.call_llm`.

    The host already retries transport errors and 5xx on the same provider, so only rate limits are retried here.
    """

    def __init__(self, *, task: str = HOST_TASK, attempts: int = 3, wait_max: float = 4.0) -> None:
        self.task = task
        self.attempts = attempts
        self.wait_max = wait_max

    @property
    def name(self) -> str:
        return f"host:{self.task}"

    @staticmethod
    def importable() -> bool:
        return importlib.util.find_spec("agent") is not None and \
            importlib.util.find_spec("agent.auxiliary_client") is not None

    @classmethod
    def configured(cls, task: str = HOST_TASK) -> bool:
        """True when Hermes is importable and resolves a client for our auxiliary task."""
        if not cls.importable():
            return False
        try:
            aux = importlib.import_module("agent.auxiliary_client")
            client, _model = aux.get_text_auxiliary_client(task)
        except Exception as exc:  # the host's resolution can fail in many ways; treat all as "not configured"
            log.info("host model is not usable: %s", exc, exc_info=log.isEnabledFor(logging.DEBUG))
            return False
        return client is not None

    def complete(self, prompt: str, *, system: str | None = None, max_tokens: int = 1024,
                 json_mode: bool = False, timeout: float = 30.0) -> str:
        messages = ([{"role": "system", "content": system}] if system else []) + \
            [{"role": "user", "content": prompt}]
        try:
            aux = importlib.import_module("agent.auxiliary_client")
        except ImportError as exc:
            raise LLMError("the Hermes host is not importable") from exc
        try:
            response = _retrying(self.attempts, self.wait_max, is_rate_limited)(
                aux.call_llm, task=self.task, messages=messages, max_tokens=max_tokens, timeout=timeout)
        except Exception as exc:  # SDK and host errors vary; all become LLMError for the caller's fallback
            raise LLMError(f"host model call failed: {type(exc).__name__}: {exc}") from exc
        return response_text(response)


def response_text(response: Any) -> str:
    """The text of an OpenAI-style chat completion (`choices[0].message.content`); LLMError when absent."""
    try:
        message = response.choices[0].message
    except (AttributeError, IndexError, TypeError) as exc:
        raise LLMError("the model's response has no choices[0].message") from exc
    content = getattr(message, "content", None)
    if isinstance(content, list):  # content parts
        content = "".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    if not isinstance(content, str) or not content.strip():
        raise LLMError("the model returned no text")
    return content


class GeminiLLM:
    """Gemini through google-genai, with jittered retries on 429/5xx/timeouts and none on auth errors."""

    def __init__(self, api_key: str, *, model: str = "gemini-2.5-flash", base_url: str = "",
                 attempts: int = 4, wait_max: float = 8.0) -> None:
        if not api_key:
            raise LLMError("Gemini needs an API key")
        from google import genai
        from google.genai import types as gtypes

        options = gtypes.HttpOptions(base_url=base_url) if base_url else None
        self._client = genai.Client(api_key=api_key, http_options=options)
        self._types = gtypes
        self.model = model
        self.attempts = attempts
        self.wait_max = wait_max

    @property
    def name(self) -> str:
        return f"gemini:{self.model}"

    def complete(self, prompt: str, *, system: str | None = None, max_tokens: int = 1024,
                 json_mode: bool = False, timeout: float = 30.0) -> str:
        config = self._types.GenerateContentConfig(
            system_instruction=system, max_output_tokens=max_tokens,
            response_mime_type="application/json" if json_mode else None,
            http_options=self._types.HttpOptions(timeout=int(timeout * 1000)))
        try:
            response = _retrying(self.attempts, self.wait_max)(
                self._client.models.generate_content, model=self.model, contents=prompt, config=config)
        except Exception as exc:  # google-genai, httpx and pydantic errors all end as LLMError
            status = _status_of(exc)
            kind = "authentication failed" if status in _AUTH_STATUS else "call failed"
            raise LLMError(f"Gemini {kind}: {type(exc).__name__}: {exc}") from exc
        text = response.text
        if not text or not text.strip():
            raise LLMError("Gemini returned no text")
        return text


class BudgetedLLM:
    """Wraps an LLM and counts its calls per UTC day in the store's meta table; past the budget it refuses."""

    def __init__(self, inner: LLM, store: Store, daily_budget: int, clock: Clock = time.time) -> None:
        self.inner = inner
        self.store = store
        self.daily_budget = daily_budget
        self.clock = clock
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    def _key(self) -> str:
        day = dt.datetime.fromtimestamp(self.clock(), tz=dt.UTC).date().isoformat()
        return _BUDGET_KEY + day

    def calls_today(self) -> int:
        return int(self.store.meta.get(self._key(), "0") or 0)

    def remaining(self) -> int:
        return max(0, self.daily_budget - self.calls_today())

    def _spend(self) -> None:
        with self._lock, self.store.transaction():
            key = self._key()
            used = int(self.store.meta.get(key, "0") or 0)
            if used >= self.daily_budget:
                raise LLMBudgetExceeded(f"the daily budget of {self.daily_budget} model calls is spent")
            self.store.meta.set(key, str(used + 1))

    def complete(self, prompt: str, *, system: str | None = None, max_tokens: int = 1024,
                 json_mode: bool = False, timeout: float = 30.0) -> str:
        self._spend()
        return self.inner.complete(prompt, system=system, max_tokens=max_tokens, json_mode=json_mode,
                                   timeout=timeout)


def select_llm(config: Config, store: Store | None = None, clock: Clock = time.time, *,
               host_configured: Callable[[], bool] = HostLLM.configured) -> LLM | None:
    """The model the settings ask for (auto: the host's, then Gemini with a key, else none).

    With a store, the model is wrapped in the per-day call budget (`llm_daily_budget`).
    """
    inner = _pick_backend(config, host_configured)
    if inner is None or store is None:
        return inner
    return BudgetedLLM(inner, store, config.llm_daily_budget, clock)


def _pick_backend(config: Config, host_configured: Callable[[], bool]) -> LLM | None:
    backend = config.llm_backend.strip().lower()
    if backend == "none":
        return None
    inside_host = "agent.memory_manager" in sys.modules  # auto picks the host's model only inside Hermes
    if (backend == "host" or (backend == "auto" and inside_host)) and host_configured():
        return HostLLM()
    if backend == "host":
        log.warning("llm_backend is 'host' but Hermes has no usable model; continuing without a language model")
        return None
    if config.gemini_api_key:
        return GeminiLLM(config.gemini_api_key, model=config.gemini_model, base_url=config.gemini_base_url)
    if backend == "gemini":
        log.warning("llm_backend is 'gemini' but no Gemini API key is set; continuing without a language model")
    return None
