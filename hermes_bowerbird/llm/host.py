"""The host's own model: the one the user configured in Hermes, reached through its auxiliary client."""

from __future__ import annotations

import importlib
import importlib.util
import logging
from typing import Any

from ..errors import LLMError
from .transient import is_rate_limited, retrying

log = logging.getLogger(__name__)

HOST_TASK = "bowerbird"


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
        return (
            importlib.util.find_spec("agent") is not None
            and importlib.util.find_spec("agent.auxiliary_client") is not None
        )

    @classmethod
    def configured(cls, task: str = HOST_TASK) -> bool:
        """True when Hermes is importable and resolves a client for our auxiliary task."""
        if not cls.importable():
            return False
        try:
            aux = importlib.import_module("agent.auxiliary_client")
            client, _model = aux.get_text_auxiliary_client(task)
        except Exception as exc:
            # the host's resolution can fail in many ways; treat all as "not configured"
            log.info("host model is not usable: %s", exc, exc_info=log.isEnabledFor(logging.DEBUG))
            return False
        return client is not None

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 1024,
        json_mode: bool = False,
        timeout: float = 30.0,
    ) -> str:
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": prompt}
        ]
        try:
            aux = importlib.import_module("agent.auxiliary_client")
        except ImportError as exc:
            raise LLMError("the Hermes host is not importable") from exc
        try:
            response = retrying(self.attempts, self.wait_max, is_rate_limited)(
                aux.call_llm,
                task=self.task,
                messages=messages,
                max_tokens=max_tokens,
                timeout=timeout,
            )
        except Exception as exc:
            # SDK and host errors vary; all become LLMError for the caller's fallback
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
        content = "".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    if not isinstance(content, str) or not content.strip():
        raise LLMError("the model returned no text")
    return content
