"""Drive the real Hermes AIAgent with bowerbird as its memory provider against a local fake model server.

Run as a script in a fresh process (HERMES_HOME must be set before Hermes is imported):
    python tests/host_scenario.py first|second|ada|asked_again -> one JSON object with what the fake server saw.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from openai_stub import OpenAIStub, Reply


def _agent(stub: OpenAIStub, home: Path) -> Any:
    import hermes_state
    import run_agent

    return run_agent.AIAgent(
        base_url=stub.base_url,
        api_key="sk-fake",
        model="fake-model",
        provider="custom",
        quiet_mode=True,
        platform="cli",
        enabled_toolsets=["memory"],
        skip_context_files=True,
        session_db=hermes_state.SessionDB(home / "state.db"),
    )


def _settle(agent: Any) -> None:
    """Wait for the host's sync worker, then for bowerbird's curator."""
    manager = agent._memory_manager
    manager.flush_pending(10)
    provider = manager.get_provider("bowerbird")
    assert provider is not None and provider.engine is not None
    provider.engine.flush(30)
    provider.engine.embeddings.wait_ready(60)
    provider.engine.vectors.catch_up()


def _user_text(request: dict[str, Any]) -> str:
    users = [m for m in request["messages"] if m.get("role") == "user"]
    content = users[-1]["content"] if users else ""
    return content if isinstance(content, str) else json.dumps(content)


def _tool_texts(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in request["messages"] if m.get("role") == "tool"]


def _mirrored(agent: Any) -> dict[str, list[str]]:
    """Bowerbird's view of what the built-in memory tool wrote: current and superseded/forgotten entries."""
    from hermes_bowerbird.types import MemoryFilter

    store = agent._memory_manager.get_provider("bowerbird").engine.store
    mirrored = [
        m
        for m in store.memories.find(None, MemoryFilter(include_forgotten=True))
        if str(m.source) == "mirror"
    ]
    return {
        "current": [m.content for m in mirrored if m.is_current(time.time())],
        "past": [m.content for m in mirrored if not m.is_current(time.time())],
    }


def first(home: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with OpenAIStub(default=Reply.of_text("Noted.")) as stub:
        agent = _agent(stub, home)
        out["tools"] = sorted(t["function"]["name"] for t in (agent.tools or []))
        history: list[dict[str, Any]] = []
        r = agent.run_conversation(
            "Hi! I'm Ada Lovelace. I deploy with Ansible, and never on Fridays.",
            conversation_history=history,
        )
        history = r["messages"]
        out["system_prompt"] = stub.chat_requests[0]["messages"][0]["content"]
        _settle(agent)
        r = agent.run_conversation(
            "Unrelated: what is a good name for a cat?", conversation_history=history
        )
        history = r["messages"]
        _settle(agent)
        before = len(stub.chat_requests)
        r = agent.run_conversation(
            "Which tool do I use to deploy, and which day should I avoid?",
            conversation_history=history,
        )
        history = r["messages"]
        out["turn3_user"] = _user_text(stub.chat_requests[before])
        out["turn3_contexts"] = [
            c.split("</memory-context>", 1)[0]
            for m in stub.chat_requests[before]["messages"]
            if m.get("role") == "user" and isinstance(m.get("content"), str)
            for c in m["content"].split("<memory-context>")[1:]
        ]
        stub.script(
            Reply.tool_call("bowerbird_recall", {"query": "deploy tool"}),
            Reply.of_text("It is Ansible."),
        )
        before = len(stub.chat_requests)
        r = agent.run_conversation(
            "Look it up in your memory tool please.", conversation_history=history
        )
        history = r["messages"]
        out["tool_results"] = [t for req in stub.chat_requests[before:] for t in _tool_texts(req)]
        out["mirror"] = []
        for args in (
            {"action": "add", "target": "user", "content": "Ada prefers green tea."},
            {
                "action": "replace",
                "target": "user",
                "old_text": "green tea",
                "content": "Ada prefers black coffee.",
            },
            {"action": "remove", "target": "user", "old_text": "black coffee"},
        ):
            stub.script(Reply.tool_call("memory", args), Reply.of_text("Done."))
            r = agent.run_conversation(
                f"Please update your notes ({args['action']}).", conversation_history=history
            )
            history = r["messages"]
            _settle(agent)
            out["mirror"].append(_mirrored(agent))
        before = len(stub.chat_requests)
        agent._compress_context(history, None, force=True)
        out["compression_requests"] = [
            json.dumps(req["messages"]) for req in stub.chat_requests[before:]
        ]
        agent._memory_manager.flush_pending(10)
        agent.shutdown_memory_provider() if hasattr(
            agent, "shutdown_memory_provider"
        ) else agent._memory_manager.shutdown_all()
    return out


def second(home: Path) -> dict[str, Any]:
    with OpenAIStub(default=Reply.of_text("Sure.")) as stub:
        agent = _agent(stub, home)
        provider = agent._memory_manager.get_provider("bowerbird")
        provider.engine.embeddings.wait_ready(60)
        r = agent.run_conversation("Remind me how I deploy things?", conversation_history=[])
        first_request = stub.chat_requests[0]
        out = {
            "user": _user_text(first_request),
            "system_prompt": first_request["messages"][0]["content"],
        }
        compressed = agent._compress_context(r["messages"], None, force=True)
        before = len(stub.chat_requests)
        agent.run_conversation("And which day do I avoid?", conversation_history=compressed[0])
        out["system_prompt_after_compression"] = stub.chat_requests[before]["messages"][0][
            "content"
        ]
        agent._memory_manager.shutdown_all()
    return out


ADA = "Hi, I'm Ada Lovelace. I always deploy with Ansible, and we never deploy on Fridays."
ASK = "Which tool should I use for deploying?"


def _contexts(request: dict[str, Any]) -> list[str]:
    """The <memory-context> blocks of the last user message of a request."""
    return [
        c.split("</memory-context>", 1)[0]
        for c in _user_text(request).split("<memory-context>")[1:]
    ]


def _bulletin(request: dict[str, Any]) -> str:
    prompt = str(request["messages"][0]["content"])
    return (
        prompt.split("### Bulletin: who the user is and what is going on", 1)[-1]
        if "### Bulletin" in prompt
        else ""
    )


def ada(home: Path) -> dict[str, Any]:
    """A session whose memory already holds a note, the Ada turn, a question in the same session, then a new
    session opened right after that asks it again."""
    out: dict[str, Any] = {}
    with OpenAIStub(default=Reply.of_text("Noted.")) as stub:
        agent = _agent(stub, home)
        r = agent.run_conversation(ADA, conversation_history=[])
        out["first_bulletin"] = _bulletin(stub.chat_requests[0])
        _settle(agent)
        before = len(stub.chat_requests)
        agent.run_conversation(ASK, conversation_history=r["messages"])
        out["same_session_contexts"] = _contexts(stub.chat_requests[before])
        agent._memory_manager.on_session_end(r["messages"])
        agent._memory_manager.shutdown_all()
        later = _agent(stub, home)
        before = len(stub.chat_requests)
        later.run_conversation(ASK, conversation_history=[])
        out["new_session_contexts"] = _contexts(stub.chat_requests[before])
        out["new_session_bulletin"] = _bulletin(stub.chat_requests[before])
        out["sessions"] = [agent.session_id, later.session_id]
        later._memory_manager.shutdown_all()
    return out


ASKED_BEFORE = (
    "Remind me, how do we deploy things here?",
    "Which tool should I use to deploy the billing service?",
)
ASKED_AGAIN = ("How do we deploy?", "Which deployment tool do we rely on again?")


def asked_again(home: Path) -> dict[str, Any]:
    """The Ada turn and two questions about deploying in one session, then two more in a new session: what each
    prefetch of the new session injected."""
    out: dict[str, Any] = {}
    with OpenAIStub(default=Reply.of_text("Sure.")) as stub:
        agent = _agent(stub, home)
        history: list[dict[str, Any]] = []
        for text in (ADA, *ASKED_BEFORE):
            history = agent.run_conversation(text, conversation_history=history)["messages"]
            _settle(agent)
        agent._memory_manager.on_session_end(history)
        agent._memory_manager.shutdown_all()
        later = _agent(stub, home)
        history = []
        out["contexts"] = []
        for text in ASKED_AGAIN:
            before = len(stub.chat_requests)
            history = later.run_conversation(text, conversation_history=history)["messages"]
            out["contexts"].append(_contexts(stub.chat_requests[before]))
        out["sessions"] = [agent.session_id, later.session_id]
        later._memory_manager.shutdown_all()
    return out


if __name__ == "__main__":
    started = time.time()
    result = {"first": first, "second": second, "ada": ada, "asked_again": asked_again}[
        sys.argv[1]
    ](Path(os.environ["HERMES_HOME"]))
    result["seconds"] = round(time.time() - started, 2)
    print("RESULT " + json.dumps(result))
