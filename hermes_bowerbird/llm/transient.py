"""Which failures of a remote model call are worth another try: the one rule the LLMs and embedders share."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable

import tenacity

from ..errors import BowerbirdError

RATE_LIMITED = 429
REQUEST_TIMEOUT = 408
AUTH_STATUS = frozenset({401, 403})


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an SDK exception carries (openai: status_code, google-genai: code), if any."""
    for attr in ("status_code", "code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


@functools.cache
def transport_errors() -> tuple[type[BaseException], ...]:
    """Timeouts and connection failures of whichever HTTP client the SDKs use (httpx or its fork)."""
    found: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        found.append(module.TransportError)
    return tuple(found)


def is_transient(exc: BaseException) -> bool:
    """Rate limits (429), request timeouts (408), server errors (5xx), timeouts and connection failures are
    transient; an answered request that was refused (400, 401, 403, 404, ...) and our own errors are not."""
    if isinstance(exc, BowerbirdError):
        return False
    status = status_of(exc)
    if status is not None:
        return status in (REQUEST_TIMEOUT, RATE_LIMITED) or status >= 500
    if isinstance(exc, (TimeoutError, ConnectionError, *transport_errors())):
        return True
    names = [cls.__name__.lower() for cls in type(exc).__mro__]
    return any("timeout" in name or "connect" in name for name in names)


def is_rate_limited(exc: BaseException) -> bool:
    return status_of(exc) == RATE_LIMITED


def is_auth_failure(exc: BaseException) -> bool:
    """The service rejected the credentials (401/403, or Gemini's 400 naming the API key)."""
    status = status_of(exc)
    return status in AUTH_STATUS or (status == 400 and "API key" in str(exc))


def retrying(
    attempts: int, wait_max: float, retry_on: Callable[[BaseException], bool] = is_transient
) -> tenacity.Retrying:
    """Up to `attempts` calls with jittered exponential waits (at most `wait_max` s) while `retry_on` holds."""
    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max(1, attempts)),
        wait=tenacity.wait_random_exponential(multiplier=min(0.5, wait_max), max=wait_max),
        retry=tenacity.retry_if_exception(retry_on),
        reraise=True,
    )
