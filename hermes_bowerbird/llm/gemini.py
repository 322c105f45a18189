"""Gemini as the language model, through google-genai."""

from __future__ import annotations

from ..errors import LLMError
from .transient import is_auth_failure, retrying


class GeminiLLM:
    """Gemini through google-genai, with jittered retries on 429/5xx/timeouts and none on auth errors."""

    def __init__(
        self,
        api_key: str,
        *,
        model: str = "gemini-2.5-flash",
        base_url: str = "",
        attempts: int = 4,
        wait_max: float = 8.0,
    ) -> None:
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

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 1024,
        json_mode: bool = False,
        timeout: float = 30.0,
    ) -> str:
        config = self._types.GenerateContentConfig(
            system_instruction=system,
            max_output_tokens=max_tokens,
            response_mime_type="application/json" if json_mode else None,
            http_options=self._types.HttpOptions(timeout=int(timeout * 1000)),
        )
        try:
            response = retrying(self.attempts, self.wait_max)(
                self._client.models.generate_content,
                model=self.model,
                contents=prompt,
                config=config,
            )
        except Exception as exc:  # google-genai, httpx and pydantic errors all end as LLMError
            kind = "authentication failed" if is_auth_failure(exc) else "call failed"
            raise LLMError(f"Gemini {kind}: {type(exc).__name__}: {exc}") from exc
        text = response.text
        if not text or not text.strip():
            raise LLMError("Gemini returned no text")
        return text
