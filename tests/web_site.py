"""Shared by the inspector tests: a small memory home, and the inspector served on a free 127.0.0.1 port."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from hermes_bowerbird.config import build_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import RememberOptions, TurnCapture
from hermes_bowerbird.types import Embedder, MemoryType
from hermes_bowerbird.web import Inspector, create_app
from hermes_bowerbird.web.server import bind

SCOPE = "profile:default"
OTHER_USER = "user:bob"
TOKEN = "test-token-3f9a"
# Memory is untrusted: markup, an event handler and a template expression that must all stay inert text.
HOSTILE = "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script> {{ 7*7 }} note"


def open_engine(tmp_path: Path, embedder: Embedder | None) -> Bowerbird:
    settings: dict[str, object] = {"llm_backend": "none", "maintenance_enabled": False}
    if embedder is None:
        settings["embedding_backend"] = "none"
    config = build_config(tmp_path / "hermes", settings)
    return Bowerbird(config, embedder=embedder, background=False)


def seed(engine: Bowerbird) -> dict[str, int]:
    """A few memories of different types, one from a captured turn, one hostile, one of another user."""
    ids = {
        "tea": engine.remember(
            "I prefer green tea over coffee in the morning",
            scope=SCOPE,
            options=RememberOptions(type=MemoryType.PREFERENCE),
        ).id,
        "db": engine.remember(
            "Quillstack stores its data in SQLite with WAL mode",
            scope=SCOPE,
            options=RememberOptions(type=MemoryType.FACT),
        ).id,
        "ship": engine.remember(
            "We decided to ship the Quillstack beta on Friday",
            scope=SCOPE,
            options=RememberOptions(type=MemoryType.DECISION),
        ).id,
        "hostile": engine.remember(
            HOSTILE, scope=SCOPE, options=RememberOptions(type=MemoryType.FACT)
        ).id,
        "bob": engine.remember(
            "Bob keeps the spare bike key under the blue flower pot",
            scope=OTHER_USER,
            options=RememberOptions(type=MemoryType.FACT),
        ).id,
    }
    engine.capture_turn(
        TurnCapture(
            "My sister Maya lives in Lisbon and works as an architect.",
            "Good to know!",
            scope=SCOPE,
            session_id="session-1",
        )
    )
    engine.curate_now()
    maya = [m for m in engine.inspect.list_memories([SCOPE]) if "Maya" in m.content]
    ids["maya"] = maya[0].id
    return ids


@contextmanager
def running(inspector: Inspector) -> Iterator[str]:
    """Serve the inspector on a free port in a thread; yields its base URL (http://127.0.0.1:PORT)."""
    sock = bind(0)
    config = uvicorn.Config(
        create_app(inspector), log_level="warning", access_log=False, lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="inspector-test", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
