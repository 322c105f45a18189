"""`bowerbird mcp`: the memory store as a stdio MCP server (official `mcp` SDK), for other agents and editors."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import __version__, scopes
from .config import Config
from .errors import BowerbirdError
from .serialize import iso
from .tools import ToolContext, handle_tool_call
from .types import type_names

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from .engine import Bowerbird

log = logging.getLogger(__name__)

SEARCH_MODEL_WAIT_SECONDS = 20.0
INSTRUCTIONS = (
    "Long-term memory shared with a Hermes agent: facts, preferences, decisions, todos and past conversations "
    "about the user. Search before asking the user something they may have said before; store durable facts; "
    "update a memory by id when it changed; forget one when asked."
)


def build_server(
    engine: Bowerbird,
    *,
    user: str | None = None,
    platform: str | None = None,
    profile: str | None = None,
    session_id: str | None = None,
) -> MCPServer:
    """An MCPServer whose tools call the engine with the same scope rules as the agent's own tools."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError as exc:
        raise BowerbirdError(
            "the MCP server needs the mcp package, version 2 or newer: "
            "pip install 'hermes-bowerbird[mcp]'"
        ) from exc

    ctx = ToolContext(
        engine=engine,
        write_scope=scopes.write_scope(user, profile, platform),
        visible=scopes.visible_scopes(user, profile, platform),
        session_id=session_id or f"mcp:{os.getpid()}:{int(time.time())}",
        writable=True,
    )
    server: MCPServer = MCPServer(
        name="bowerbird", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    def call(tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        result = json.loads(
            handle_tool_call(ctx, tool, {k: v for k, v in args.items() if v is not None})
        )
        if isinstance(result, dict) and "error" in result:
            raise ToolError(str(result["error"]))
        return dict(result)

    @server.tool(
        description="Search long-term memory (facts, preferences, decisions, todos, past "
        "conversations). `types` filters by memory type; `since`/`until` take ISO dates."
    )
    def memory_search(
        query: str,
        limit: int = 8,
        types: list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> dict[str, Any]:
        engine.admin.wait_model(SEARCH_MODEL_WAIT_SECONDS)
        return call(
            "bowerbird_recall",
            {"query": query, "limit": limit, "types": types, "since": since, "until": until},
        )

    @server.tool(
        description="Store one durable, self-contained memory. `type` is one of "
        f"{', '.join(type_names())}."
    )
    def memory_store(
        content: str,
        type: str | None = None,
        importance: float | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        return call(
            "bowerbird_remember",
            {"content": content, "type": type, "importance": importance, "tags": tags},
        )

    @server.tool(
        description="Correct memory `id`: the new content supersedes the old (kept as history)."
    )
    def memory_update(id: int, content: str) -> dict[str, Any]:
        return call("bowerbird_update", {"id": id, "content": content})

    @server.tool(
        description="Link two memories: relation is updates, caused_by, result_of, related_to, part_of "
        "or contradicts."
    )
    def memory_relate(source_id: int, target_id: int, relation: str) -> dict[str, Any]:
        return call(
            "bowerbird_relate",
            {"source_id": source_id, "target_id": target_id, "relation": relation},
        )

    @server.tool(description="Forget memory `id` (soft delete; the audit trail stays).")
    def memory_forget(id: int, reason: str = "") -> dict[str, Any]:
        return call("bowerbird_forget", {"id": id, "reason": reason})

    @server.tool(description="Memory counts by type, journal backlog and embedding state.")
    def memory_status() -> dict[str, Any]:
        return status_view(engine, ctx.visible)

    @server.tool(
        description="The current bulletin: a short briefing on who the user is and what is going on."
    )
    def memory_bulletin(force: bool = False) -> dict[str, Any]:
        bulletin = engine.bulletin(ctx.write_scope, visible=ctx.visible, force=force)
        if bulletin is None:
            return {"bulletin": None}
        return {
            "bulletin": bulletin.text,
            "generator": bulletin.generator,
            "created_at": iso(bulletin.created_at),
        }

    return server


def status_view(engine: Bowerbird, visible: tuple[str, ...]) -> dict[str, Any]:
    info = engine.status()
    return {
        "db_path": info.get("db_path"),
        "scopes": list(visible),
        "memories": engine.inspect.counts(visible),
        "journal_backlog": info.get("journal_backlog"),
        "embedding": info.get("embedding"),
        "llm": info.get("llm"),
    }


def serve(
    config: Config,
    *,
    user: str | None = None,
    platform: str | None = None,
    profile: str | None = None,
) -> None:
    """Run until stdin closes. No curator or maintenance threads: a running agent owns those; only the model loads.
    A `user` is a gateway user's raw id on `platform` (None: the id's key without a platform)."""
    from .engine import Bowerbird

    engine = Bowerbird(config, background=False)
    try:
        engine.admin.load_model()
        server = build_server(engine, user=user, platform=platform, profile=profile)
        log.info("bowerbird MCP server on stdio for %s", config.db_path)
        server.run("stdio")
    finally:
        engine.admin.stop_model(timeout=5.0)
        engine.shutdown(timeout=5.0)
