"""A scriptable Gemini REST API on 127.0.0.1 for tests of anything built on google-genai.

It answers the three calls google-genai makes for the Gemini Developer API:

- ``POST /{version}/models/{model}:embedContent``        -> ``{"embedding": {"values": [...]}}``
- ``POST /{version}/models/{model}:batchEmbedContents``  -> ``{"embeddings": [{"values": [...]}, ...]}``
- ``POST /{version}/models/{model}:generateContent``     -> one candidate whose text part is the reply

Usage::

    with GeminiStub(api_key="good") as stub:
        stub.replies.append('{"memories": []}')         # next generateContent text (FIFO)
        stub.fail_next(2, status=429)                    # the next 2 requests get 429, then normal service
        stub.fail_always(500)                            # every request gets 500 until stub.recover()
        client = genai.Client(api_key="good", http_options=types.HttpOptions(base_url=stub.url))
        ...
        assert stub.count(":batchEmbedContents") == 1
        stub.requests[-1].body                           # the decoded JSON of the last request

A request whose ``x-goog-api-key`` header (or ``?key=``) differs from ``api_key`` gets ``bad_key_status``
(403 PERMISSION_DENIED by default, like a revoked key). Vectors are deterministic per text (seeded by
its hash) unless ``embed_fn`` is given; text replies come from ``replies`` (FIFO), then ``reply_fn``,
then ``default_reply``. Every request, served or failed, is recorded in ``requests``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
from fakes import LoopbackServer

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


@dataclass(frozen=True)
class StubRequest:
    """One request as the stub saw it."""

    method: str
    path: str
    model: str
    action: str
    api_key: str
    body: dict[str, Any]


@dataclass
class _Failure:
    status: int
    remaining: int | None  # None: forever
    message: str = "scripted failure"


def stub_vector(text: str, dim: int) -> list[float]:
    """The stub's default embedding: a unit vector seeded by the text, identical across runs."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dim)
    return [float(x) for x in vec / np.linalg.norm(vec)]


@dataclass
class GeminiStub:
    """The server plus its script; start with ``with`` or ``start()``/``stop()``."""

    api_key: str = "test-key"
    dim: int = 768
    bad_key_status: int = 403
    embed_fn: Callable[[str], list[float]] | None = None
    reply_fn: Callable[[dict[str, Any]], str] | None = None
    default_reply: str = "ok"
    delay_seconds: float = 0.0  # sleep before answering (to provoke client timeouts)
    replies: deque[str] = field(default_factory=deque)
    requests: list[StubRequest] = field(default_factory=list)
    _failures: deque[_Failure] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: LoopbackServer | None = None

    # ----- scripting -----------------------------------------------------------------------------

    def fail_next(self, times: int, status: int = 429, message: str = "scripted failure") -> None:
        """The next ``times`` requests (after any already scripted) fail with ``status``."""
        with self._lock:
            self._failures.append(_Failure(status, times, message))

    def fail_always(self, status: int = 500, message: str = "scripted failure") -> None:
        """Every request fails with ``status`` until ``recover()``."""
        with self._lock:
            self._failures.append(_Failure(status, None, message))

    def recover(self) -> None:
        with self._lock:
            self._failures.clear()

    def count(self, action: str = "") -> int:
        """How many requests were received whose action (e.g. ``":generateContent"``) contains ``action``."""
        with self._lock:
            return sum(1 for r in self.requests if action.lstrip(":") in r.action)

    # ----- lifecycle -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stub is not running")
        return f"http://127.0.0.1:{self._server.port}"

    def start(self) -> GeminiStub:
        self._server = LoopbackServer(_make_handler(self), "gemini-stub")
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        self._server = None

    def __enter__(self) -> GeminiStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- answering -----------------------------------------------------------------------------

    def _answer(self, req: StubRequest) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(req)
            failure = self._take_failure()
        if self.delay_seconds:
            threading.Event().wait(self.delay_seconds)
        if req.api_key != self.api_key:
            return _error(self.bad_key_status, "API key not valid. Please pass a valid API key.")
        if failure is not None:
            return _error(failure.status, failure.message)
        if req.action == "batchEmbedContents":
            texts = [_text_of(r.get("content", {})) for r in req.body.get("requests", [])]
            return 200, {
                "embeddings": [
                    {"values": self._vector(t, r)}
                    for t, r in zip(texts, req.body.get("requests", []), strict=True)
                ]
            }
        if req.action == "embedContent":
            return 200, {
                "embedding": {
                    "values": self._vector(_text_of(req.body.get("content", {})), req.body)
                }
            }
        if req.action == "generateContent":
            return 200, _generate_response(self._reply(req.body))
        return _error(404, f"unknown action {req.action!r}")

    def _take_failure(self) -> _Failure | None:
        while self._failures:
            head = self._failures[0]
            if head.remaining is None:
                return head
            if head.remaining > 0:
                head.remaining -= 1
                if head.remaining == 0:
                    self._failures.popleft()
                return head
            self._failures.popleft()
        return None

    def _vector(self, text: str, request: dict[str, Any]) -> list[float]:
        if self.embed_fn is not None:
            return self.embed_fn(text)
        dim = (
            request.get("outputDimensionality")
            or request.get("embedContentConfig", {}).get("outputDimensionality")
            or self.dim
        )
        return stub_vector(text, int(dim))

    def _reply(self, body: dict[str, Any]) -> str:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
        if self.reply_fn is not None:
            return self.reply_fn(body)
        return self.default_reply


def _text_of(content: dict[str, Any]) -> str:
    return "".join(str(p.get("text", "")) for p in content.get("parts", []))


def _generate_response(text: str) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "stub",
    }


def _error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {
        "error": {
            "code": status,
            "message": message,
            "status": _STATUS_NAMES.get(status, "UNKNOWN"),
        }
    }


def _make_handler(stub: GeminiStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else {}
            resource = parts.path.rsplit("/models/", 1)[-1]
            model, _, action = resource.partition(":")
            key = self.headers.get("x-goog-api-key") or parse_qs(parts.query).get("key", [""])[0]
            status, payload = stub._answer(
                StubRequest("POST", parts.path, model, action, key, body)
            )
            data = json.dumps(payload).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json; charset=UTF-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (a timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
