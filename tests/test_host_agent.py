"""The real hermes-agent drives bowerbird through full turns against a local fake model server (no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hermes_homes import install

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.slow


def _run(phase: str, home: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(HERMES_HOME=str(home), HF_HUB_OFFLINE="1", BOWERBIRD_LLM_BACKEND="none")
    proc = subprocess.run(
        [sys.executable, str(HERE / "host_scenario.py"), phase],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    return json.loads(lines[-1][len("RESULT ") :])


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hermes_home")
    (path / "config.yaml").write_text("memory:\n  provider: bowerbird\n")
    install(path)
    return path


@pytest.fixture(scope="module")
def first(home: Path) -> dict[str, Any]:
    return _run("first", home)


def test_tools_are_offered_to_the_model(first: dict[str, Any]) -> None:
    assert {
        "bowerbird_recall",
        "bowerbird_remember",
        "bowerbird_update",
        "bowerbird_forget",
        "bowerbird_relate",
    } <= set(first["tools"])


def test_system_prompt_carries_the_labelled_block(first: dict[str, Any]) -> None:
    assert "Long-term memory (bowerbird)" in first["system_prompt"]


def test_a_later_turn_of_the_same_session_gets_no_copy_of_what_it_holds(
    first: dict[str, Any],
) -> None:
    """By turn 3 the facts of turn 1 are still in the host's context: prefetch does not inject them again."""
    assert not any("Ansible" in context for context in first["turn3_contexts"])


def test_a_tool_call_to_recall_returns_them(first: dict[str, Any]) -> None:
    assert any("Ansible" in text for text in first["tool_results"])


def test_the_built_in_memory_tool_is_mirrored(first: dict[str, Any]) -> None:
    added, replaced, removed = first["mirror"]
    assert added["current"] == ["Ada prefers green tea."]
    assert replaced["current"] == ["Ada prefers black coffee."] and replaced["past"] == [
        "Ada prefers green tea."
    ]
    assert removed["current"] == []
    assert sorted(removed["past"]) == ["Ada prefers black coffee.", "Ada prefers green tea."]


def test_compression_carries_our_durable_points_to_the_summariser(first: dict[str, Any]) -> None:
    joined = "\n".join(first["compression_requests"])
    assert "<memory-provider-context>" in joined
    context = joined.split("<memory-provider-context>", 1)[1].split(
        "</memory-provider-context>", 1
    )[0]
    assert "Ansible" in context


@pytest.fixture(scope="module")
def second(home: Path, first: dict[str, Any]) -> dict[str, Any]:
    return _run("second", home)


def test_a_fresh_agent_in_a_new_process_still_recalls(second: dict[str, Any]) -> None:
    assert "Ansible" in second["user"].split("<memory-context>", 1)[-1]


def test_the_bulletin_opens_the_session_and_survives_compression(second: dict[str, Any]) -> None:
    for prompt in (second["system_prompt"], second["system_prompt_after_compression"]):
        bulletin = prompt.split("### Bulletin: who the user is and what is going on", 1)
        assert len(bulletin) == 2 and "Ada Lovelace" in bulletin[1]


# ------------------------------------------------------------------ the Ada turn, then a new session right after


@pytest.fixture(scope="module")
def ada(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("hermes_home_ada")
    (path / "config.yaml").write_text("memory:\n  provider: bowerbird\n")
    (path / "memories").mkdir()
    (path / "memories" / "MEMORY.md").write_text("The team keeps its runbooks in the ops wiki.")
    install(path)
    return _run("ada", path)


def test_ada_starts_with_a_bulletin_that_does_not_know_her(ada: dict[str, Any]) -> None:
    assert "runbooks" in ada["first_bulletin"] and "Ada" not in ada["first_bulletin"]


def test_ada_same_session_question_gets_no_copy_of_her_turn(ada: dict[str, Any]) -> None:
    assert not any("Ansible" in context for context in ada["same_session_contexts"])


def test_ada_new_session_is_a_new_session(ada: dict[str, Any]) -> None:
    assert ada["sessions"][0] != ada["sessions"][1]


def test_ada_new_session_gets_the_deploy_tool_injected(ada: dict[str, Any]) -> None:
    assert any("Ansible" in context for context in ada["new_session_contexts"])


def test_ada_new_session_bulletin_names_her(ada: dict[str, Any]) -> None:
    assert "Ada Lovelace" in ada["new_session_bulletin"]


# ------------------------------------------------------------------ asked again in a new session


@pytest.fixture(scope="module")
def asked_again(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("hermes_home_asked_again")
    (path / "config.yaml").write_text("memory:\n  provider: bowerbird\n")
    install(path)
    return _run("asked_again", path)


def test_asked_again_the_deploy_tool_is_injected_once(asked_again: dict[str, Any]) -> None:
    """Two questions about one thing in a new session: Ansible reaches the agent once, as a memory or its turn."""
    injected = ["".join(contexts) for contexts in asked_again["contexts"]]
    assert len(injected) == 2
    assert sum(text.count("Ansible") for text in injected) == 1


def test_asked_again_no_past_question_is_injected(asked_again: dict[str, Any]) -> None:
    joined = "".join("".join(contexts) for contexts in asked_again["contexts"])
    assert "Remind me, how do we deploy things here?" not in joined
    assert "Which tool should I use to deploy the billing service?" not in joined
