"""Small test doubles shared by the test modules (external boundaries only: time, local HTTP servers)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

T0 = 1_700_000_000.0  # a fixed "now" for tests that reason about elapsed time


class FakeClock:
    """A settable clock: pass it wherever a Clock is expected and move `now` by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class LoopbackServer:
    """An HTTP server on 127.0.0.1 (a free port) answering from a named daemon thread until `close()`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], name: str) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
