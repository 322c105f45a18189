"""`bowerbird mcp` as a subprocess, driven by the MCP SDK's own stdio client: list tools, store, search, status."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hermes_homes import KEYWORD_ONLY

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.types import TextContent  # noqa: E402

from hermes_bowerbird.config import load_config  # noqa: E402
from hermes_bowerbird.engine import Bowerbird  # noqa: E402
from hermes_bowerbird.scopes import user_scope  # noqa: E402
from hermes_bowerbird.timestamps import parse_iso  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EXPECTED_TOOLS = {
    "memory_search",
    "memory_store",
    "memory_update",
    "memory_relate",
    "memory_forget",
    "memory_status",
    "memory_bulletin",
}


def server_params(home: Path, *extra: str) -> StdioServerParameters:
    env = {
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "HF_HUB_OFFLINE": "1",
        "BOWERBIRD_EMBEDDING_BACKEND": "none",
        "BOWERBIRD_LLM_BACKEND": "none",
        "GEMINI_API_KEY": "",
        "HOME": str(home),
    }
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "hermes_bowerbird.cli", "--hermes-home", str(home), *extra, "mcp"],
        env=env,
        cwd=str(ROOT),
    )


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(text_of(result)))


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


async def session_run(home: Path, *extra: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with (
        stdio_client(server_params(home, *extra)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        seen["tools"] = {t.name for t in tools.tools}
        seen["store"] = payload(
            await session.call_tool(
                "memory_store",
                {"content": "Quillstack uses SQLite in WAL mode", "type": "decision"},
            )
        )
        second = payload(
            await session.call_tool("memory_store", {"content": "I moved to Berlin last week"})
        )
        seen["relate"] = payload(
            await session.call_tool(
                "memory_relate",
                {
                    "source_id": second["stored"]["id"],
                    "target_id": seen["store"]["stored"]["id"],
                    "relation": "related_to",
                },
            )
        )
        seen["search"] = payload(
            await session.call_tool("memory_search", {"query": "which database Quillstack"})
        )
        seen["update"] = payload(
            await session.call_tool(
                "memory_update", {"id": second["stored"]["id"], "content": "I live in Berlin"}
            )
        )
        seen["status"] = payload(await session.call_tool("memory_status", {}))
        seen["bulletin"] = payload(await session.call_tool("memory_bulletin", {"force": True}))
        seen["forget"] = payload(
            await session.call_tool("memory_forget", {"id": seen["store"]["stored"]["id"]})
        )
        missing = await session.call_tool("memory_forget", {"id": 999})
        seen["missing"] = (missing.is_error, text_of(missing))
    return seen


def test_mcp_server_lists_tools_stores_searches_and_reports_status(tmp_path: Path) -> None:
    seen = anyio.run(session_run, tmp_path)
    assert seen["tools"] == EXPECTED_TOOLS
    stored = seen["store"]["stored"]
    assert stored["type"] == "decision"
    assert stored["scope"] == "profile:default"
    assert seen["relate"]["edge"]["relation"] == "related_to"
    results = seen["search"]["results"]
    assert results
    assert results[0]["content"] == "Quillstack uses SQLite in WAL mode"
    assert seen["update"]["supersedes"] == seen["relate"]["edge"]["source_id"]
    status = seen["status"]
    assert sum(status["memories"].values()) == 3
    assert status["scopes"] == ["profile:default"]
    assert seen["bulletin"]["bulletin"]
    assert parse_iso(seen["bulletin"]["created_at"]) > 0
    assert parse_iso(seen["relate"]["edge"]["created_at"]) > 0
    assert parse_iso(stored["created_at"]) > 0
    assert seen["forget"] == {"forgotten": stored["id"]}
    is_error, message = seen["missing"]
    assert is_error
    assert "no memory with id 999" in message


async def scoped_search(home: Path, user: str, query: str) -> list[dict[str, Any]]:
    async with (
        stdio_client(server_params(home, "--user", user)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        if user == "alice":
            await session.call_tool(
                "memory_store", {"content": "Alice's side project is called Bluebird"}
            )
        return list(payload(await session.call_tool("memory_search", {"query": query}))["results"])


def test_mcp_server_keeps_gateway_users_apart(tmp_path: Path) -> None:
    assert anyio.run(scoped_search, tmp_path, "alice", "Bluebird side project")
    assert anyio.run(scoped_search, tmp_path, "bob", "Bluebird side project") == []


async def search_as(home: Path, user: str, query: str) -> list[str]:
    async with (
        stdio_client(server_params(home, "--user", user)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        found = payload(await session.call_tool("memory_search", {"query": query}))
        return [str(r["content"]) for r in found["results"]]


@pytest.mark.parametrize("user", ["telegram:alice", "alice"])
def test_mcp_server_reaches_a_gateway_users_scope(tmp_path: Path, user: str) -> None:
    engine = Bowerbird(load_config(tmp_path, environ=KEYWORD_ONLY), background=False)
    engine.remember("Alice's bike is a green Brompton.", scope=user_scope("alice", "telegram"))
    engine.remember("Alicia's bike is a red Brompton.", scope=user_scope("alicia", "telegram"))
    engine.shutdown()
    found = anyio.run(search_as, tmp_path, user, "Brompton bike")
    assert found == ["Alice's bike is a green Brompton."]
