"""A scriptable OpenAI-compatible server on 127.0.0.1 for tests: no network, no key, every request recorded.

Usage::

    with OpenAIStub() as stub:                       # port 0: the OS picks a free port
        stub.script(Reply.rate_limited(), Reply.text('{"ok": true}'))
        client = OpenAI(base_url=stub.base_url, api_key="sk-fake")
        ...
        assert stub.chat_requests[-1]["messages"][0]["role"] == "system"

Endpoints: `GET /v1/models` (lists `stub.model`) and `POST /v1/chat/completions`, answered as plain JSON or,
when the request has `"stream": true`, as server-sent events ending in `data: [DONE]`. Replies come from the
scripted queue first (one per chat request, in order), then from `responder(body)` if given, else `default`.
A Reply can carry text, tool calls, an HTTP error status (429 with Retry-After, 500...), a raw body (to send
malformed JSON), and a delay before answering (to trigger client timeouts).

To drive the real Hermes host against it, `write_hermes_config(home, stub)` writes a `config.yaml` whose main
model is a custom endpoint at the stub; set HERMES_HOME to `home` and unset provider *_API_KEY variables first.
The host caches clients per provider: call `agent.auxiliary_client.shutdown_cached_clients()` between stubs.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from fakes import LoopbackServer


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    id: str = "call_1"


@dataclass(frozen=True)
class Reply:
    """One scripted answer to a chat-completions request."""

    text: str | None = "ok"
    tool_calls: tuple[ToolCall, ...] = ()
    status: int = 200
    raw_body: str | None = None  # sent verbatim instead of a completion (status still applies)
    delay: float = 0.0  # seconds to wait before answering
    headers: tuple[tuple[str, str], ...] = ()
    finish_reason: str | None = None

    @classmethod
    def of_text(cls, text: str, **kw: Any) -> Reply:
        return cls(text=text, **kw)

    @classmethod
    def tool_call(cls, name: str, arguments: dict[str, Any], *, text: str | None = None) -> Reply:
        return cls(text=text, tool_calls=(ToolCall(name, arguments),))

    @classmethod
    def malformed_json(cls) -> Reply:
        """An HTTP 200 whose body is not JSON at all."""
        return cls(raw_body='{"id": "chatcmpl-broken", "choices": [')

    @classmethod
    def rate_limited(cls, retry_after: float = 0.0) -> Reply:
        body = json.dumps(
            {
                "error": {
                    "message": "Rate limit reached",
                    "type": "rate_limit_error",
                    "code": "rate_limit_exceeded",
                }
            }
        )
        return cls(status=429, raw_body=body, headers=(("Retry-After", str(retry_after)),))

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls(
            status=status,
            raw_body=json.dumps({"error": {"message": "upstream failure", "type": "server_error"}}),
        )

    @classmethod
    def slow(cls, seconds: float, text: str = "late") -> Reply:
        return cls(text=text, delay=seconds)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    received_at: float = field(default_factory=time.time)


class OpenAIStub:
    """The server; start with `start()` or a `with` block, then point a client at `base_url`."""

    def __init__(
        self,
        *,
        default: Reply | None = None,
        responder: Callable[[dict[str, Any]], Reply] | None = None,
        model: str = "fake-model",
    ) -> None:
        self.default = default or Reply()
        self.responder = responder
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: LoopbackServer | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> OpenAIStub:
        self._server = LoopbackServer(_handler_for(self), "openai-stub")
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "the stub is not running"
        return self._server.port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and inspection --------------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        """Queue replies for the next chat requests, in order."""
        with self._lock:
            self._queue.extend(replies)

    def pending_replies(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of every chat-completions request received, in order."""
        with self._lock:
            return [r.body or {} for r in self.requests if r.path.endswith("/chat/completions")]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return self.default


def _handler_for(stub: OpenAIStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

        def do_GET(self) -> None:
            stub._record(RecordedRequest("GET", self.path, dict(self.headers), None))
            if self.path.rstrip("/").endswith("/models"):
                self._send_json(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"id": stub.model, "object": "model", "created": 0, "owned_by": "stub"}
                        ],
                    },
                )
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            stub._record(RecordedRequest("POST", self.path, dict(self.headers), body))
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            reply = stub._next_reply(body)
            if reply.delay:
                time.sleep(reply.delay)
            try:
                self._answer(reply, body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                return

        def _answer(self, reply: Reply, body: dict[str, Any]) -> None:
            if reply.raw_body is not None or reply.status != 200:
                self._send_raw(
                    reply.status,
                    (reply.raw_body or "").encode("utf-8"),
                    "application/json",
                    reply.headers,
                )
            elif body.get("stream"):
                self._send_stream(reply, body)
            else:
                self._send_json(
                    200, completion(reply, body.get("model") or stub.model), reply.headers
                )

        def _send_json(
            self, status: int, payload: dict[str, Any], headers: tuple[tuple[str, str], ...] = ()
        ) -> None:
            self._send_raw(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

        def _send_raw(
            self,
            status: int,
            data: bytes,
            content_type: str,
            headers: tuple[tuple[str, str], ...] = (),
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, reply: Reply, body: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in stream_chunks(
                reply,
                body.get("model") or stub.model,
                include_usage=bool((body.get("stream_options") or {}).get("include_usage")),
            ):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def _usage(reply: Reply) -> dict[str, int]:
    completion_tokens = len((reply.text or "").split()) + 1
    return {
        "prompt_tokens": 10,
        "completion_tokens": completion_tokens,
        "total_tokens": 10 + completion_tokens,
    }


def _tool_call_payload(call: ToolCall, index: int | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }
    if index is not None:
        payload["index"] = index
    return payload


def completion(reply: Reply, model: str) -> dict[str, Any]:
    """A non-streaming chat.completion object for this reply."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [_tool_call_payload(c) for c in reply.tool_calls]
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(reply),
    }


def stream_chunks(
    reply: Reply, model: str, *, include_usage: bool = False
) -> Iterator[dict[str, Any]]:
    """chat.completion.chunk objects: a role delta, text in a few pieces, tool-call deltas, the finish."""
    base = {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    text = reply.text or ""
    step = max(1, len(text) // 3)
    for start in range(0, len(text), step):
        yield chunk({"content": text[start : start + step]})
    for index, call in enumerate(reply.tool_calls):
        yield chunk({"tool_calls": [_tool_call_payload(call, index)]})
    yield chunk({}, reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"))
    if include_usage:
        yield {**base, "choices": [], "usage": _usage(reply)}


def write_hermes_config(home: Path, stub: OpenAIStub, *, extra_yaml: str = "") -> Path:
    """Write `home/config.yaml` pointing the host's main model (and so its auxiliary calls) at the stub."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(
        f"model:\n  default: {stub.model}\n  provider: custom\n  base_url: {stub.base_url}\n  api_key: sk-fake\n"
        "auxiliary:\n  transient_retries: 0\n" + extra_yaml,
        encoding="utf-8",
    )
    return path
