"""The installed hermes-agent's MemoryManager drives bowerbird through delegation, turn start, queued prefetch
and compression (no network; the host is imported in a fresh process with its own HERMES_HOME)."""

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


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pytest.importorskip("agent.memory_manager")
    home = tmp_path_factory.mktemp("hermes_home")
    (home / "config.yaml").write_text("memory:\n  provider: bowerbird\n")
    install(home)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        HERMES_HOME=str(home),
        HF_HUB_OFFLINE="1",
        BOWERBIRD_LLM_BACKEND="none",
        BOWERBIRD_MAINTENANCE_ENABLED="false",
    )
    proc = subprocess.run(
        [sys.executable, str(HERE / "host_contract_scenario.py")],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    return dict(json.loads(lines[-1][len("RESULT ") :]))


def test_the_host_loaded_bowerbird(run: dict[str, Any]) -> None:
    assert run["provider_class"] == "BowerbirdProvider"


def test_a_delegation_becomes_an_episode_of_the_parent_session(run: dict[str, Any]) -> None:
    assert any(
        session == "parent-1" and "6543" in content for session, _, content in run["episodes"]
    )


def test_the_subagents_result_is_not_injected_while_the_context_holds_it(
    run: dict[str, Any],
) -> None:
    assert "pgbouncer" not in run["prefetch_in_context"]


def test_the_subagents_result_is_recalled_in_the_parent_session_after_compression(
    run: dict[str, Any],
) -> None:
    assert "pgbouncer" in run["prefetch"]  # the subagent's words, not the compressed turns' ones


def test_the_subagents_result_is_found_by_the_recall_tool(run: dict[str, Any]) -> None:
    assert any("6543" in hit["content"] for hit in run["tool"]["results"])


def test_a_queued_prefetch_reaches_the_next_turn(run: dict[str, Any]) -> None:
    assert "Frankfurt" in run["queued_prefetch"]


def test_compression_context_comes_back_through_the_host(run: dict[str, Any]) -> None:
    assert "6543" in run["pre_compress"]


def test_recall_status_counts_the_memories(run: dict[str, Any]) -> None:
    assert run["recall_status"]["memories"] >= 1


def test_recall_status_turn_follows_on_turn_start(run: dict[str, Any]) -> None:
    assert run["recall_status"]["turn"] == 2
