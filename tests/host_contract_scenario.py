"""Drive the real host's MemoryManager through the hooks of the whole contract (delegation, turn start,
queued prefetch, checkpointing compression) with bowerbird loaded the way Hermes loads it.

Run as a script in a fresh process (HERMES_HOME must be set before Hermes is imported):
    python tests/host_contract_scenario.py   -> prints one RESULT line of JSON.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

TASK = "Find out which port the staging database of Quillstack listens on."
RESULT = "The Quillstack staging database listens on port 6543 behind pgbouncer."


def main(home: Path) -> dict[str, Any]:
    from agent.memory_manager import MemoryManager
    from plugins.memory import load_memory_provider

    manager = MemoryManager()
    provider = load_memory_provider("bowerbird")
    assert provider is not None
    manager.add_provider(provider)
    manager.initialize_all(
        session_id="parent-1",
        platform="cli",
        agent_context="primary",
        user_id_alt="alt-1",
        agent_workspace=str(home),
        parent_session_id="",
    )
    manager.build_system_prompt()
    out: dict[str, Any] = {"provider_class": type(provider).__name__}
    manager.on_turn_start(1, "Please delegate the staging port question.")
    manager.on_delegation(task=TASK, result=RESULT, child_session_id="child-7")
    engine = provider.engine
    engine.flush(60)
    engine.embeddings.wait_ready(60)
    engine.vectors.catch_up()
    out["episodes"] = [(e.session_id, e.role, e.content) for e in engine.store.episodes.find()]
    question = "Which port does the staging database listen on?"
    # the tool result is still in the context
    out["prefetch_in_context"] = manager.prefetch_all(question)
    tool = manager.handle_tool_call("bowerbird_recall", {"query": "staging database port"})
    out["tool"] = json.loads(tool)
    manager.on_turn_start(2, "thanks")
    manager.sync_all(
        "We moved staging to Frankfurt last week.",
        "Noted: staging is in Frankfurt.",
        session_id="parent-1",
    )
    manager.flush_pending(10)
    engine.flush(60)
    out["pre_compress"] = manager.on_pre_compress(
        [
            {"role": "user", "content": "We decided to keep the staging database on port 6543."},
            {"role": "assistant", "content": "Okay, port 6543 stays."},
        ]
    )
    engine.flush(60)
    out["prefetch"] = manager.prefetch_all(question)  # compressed away: memory brings it back
    manager.queue_prefetch_all("Where is staging hosted now?")
    manager.flush_pending(10)
    out["queued_prefetch"] = manager.prefetch_all("Where is staging hosted now?")
    out["recall_status"] = provider.recall_status()
    manager.shutdown_all()
    return out


if __name__ == "__main__":
    result = main(Path(os.environ["HERMES_HOME"]))
    print("RESULT " + json.dumps(result, default=str))
