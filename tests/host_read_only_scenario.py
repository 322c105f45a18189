"""Drive the real host's MemoryManager over a memory store that cannot be written: prefetch, the remember tool and
a synced turn, with bowerbird loaded the way Hermes loads it.

Run as a script in a fresh process (HERMES_HOME must be set before Hermes is imported):
    python tests/host_read_only_scenario.py   -> prints one RESULT line of JSON.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any


class _Failures(logging.Handler):
    """Every warning or error bowerbird logs (a hook that failed says so; the host would swallow it)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def main(home: Path) -> dict[str, Any]:
    from agent.memory_manager import MemoryManager
    from plugins.memory import load_memory_provider

    manager = MemoryManager()
    provider = load_memory_provider("bowerbird")
    assert provider is not None
    manager.add_provider(provider)
    manager.initialize_all(session_id="s1", platform="cli", agent_context="primary")
    failures = _Failures()
    logging.getLogger("hermes_bowerbird").addHandler(
        failures
    )  # opening read-only is said once, before
    out: dict[str, Any] = {"unavailable": provider.unavailable_reason()}
    out["prefetch"] = manager.prefetch_all("Which database runs on heron?")
    out["remember"] = json.loads(
        manager.handle_tool_call("bowerbird_remember", {"content": "Deploys happen on Fridays."})
    )
    manager.sync_all("I moved the staging database to kestrel.", "Noted: kestrel.", session_id="s1")
    manager.flush_pending(10)
    engine = provider.engine
    out["journal"] = engine.store.journal.counts()
    out["memories"] = sum(engine.inspect.counts().values())
    out["failures"] = failures.messages
    manager.shutdown_all()
    return out


if __name__ == "__main__":
    result = main(Path(os.environ["HERMES_HOME"]))
    print("RESULT " + json.dumps(result, default=str))
