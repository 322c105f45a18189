"""The agent-facing tools: strict JSON schemas and handlers that turn tool calls into engine calls."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .curation.screen import inert
from .errors import BowerbirdError, InvalidInputError, NotFoundError
from .explain import describe, nothing_stored, read_only_store
from .options import RecallOptions, RememberOptions
from .sanitize import storable
from .serialize import edge_dict, hit_dict, memory_dict
from .timestamps import parse_iso
from .types import MemoryType, Relation, Source, memory_type, type_names

if TYPE_CHECKING:
    from .engine import Bowerbird

log = logging.getLogger(__name__)

_RELATIONS = [r.value for r in Relation]


def tool_schemas() -> list[dict[str, Any]]:
    """The tools offered to the agent; memory types come from the TypeSpec table as it is now."""
    types = list(type_names())
    return [
        {
            "name": "bowerbird_recall",
            "description": "Search long-term memory (facts, preferences, decisions, past conversations). Use when the "
            "user refers to something from earlier sessions that is not in the conversation.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for, in plain words."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 50,
                        "description": "Max results (default 8).",
                    },
                    "types": {
                        "type": "array",
                        "items": {"type": "string", "enum": types},
                        "description": "Only these memory types.",
                    },
                    "since": {
                        "type": "string",
                        "description": "ISO date/time: only memories from then on.",
                    },
                    "until": {
                        "type": "string",
                        "description": "ISO date/time: only memories before then.",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
        {
            "name": "bowerbird_remember",
            "description": "Store a durable memory the user will want kept (a fact, preference, decision, todo...).",
            "parameters": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "One self-contained statement."},
                    "type": {"type": "string", "enum": types},
                    "importance": {"type": "number", "minimum": 0, "maximum": 1},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["content"],
                "additionalProperties": False,
            },
        },
        {
            "name": "bowerbird_relate",
            "description": "Link two memories by id with a typed relation.",
            "parameters": {
                "type": "object",
                "properties": {
                    "source_id": {"type": "integer"},
                    "target_id": {"type": "integer"},
                    "relation": {"type": "string", "enum": _RELATIONS},
                },
                "required": ["source_id", "target_id", "relation"],
                "additionalProperties": False,
            },
        },
        {
            "name": "bowerbird_update",
            "description": "Correct a memory: the new content supersedes the old one (the old is kept as history).",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "content": {"type": "string"}},
                "required": ["id", "content"],
                "additionalProperties": False,
            },
        },
        {
            "name": "bowerbird_forget",
            "description": "Forget a memory by id (soft delete, e.g. when the user asks or it is wrong), or a past "
            "turn by one of its episode ids: both sides of that turn are deleted and what was learnt from it is "
            "forgotten. When the user asks you to forget something, forget the memories and the turns that hold "
            "it.",
            "parameters": {
                "type": "object",
                "properties": {
                    "id": {
                        "type": "integer",
                        "description": "A memory's id, or an episode's number (7 for episode #e7) with kind "
                        "episode.",
                    },
                    "kind": {
                        "type": "string",
                        "enum": ["memory", "episode"],
                        "description": "What the id is (default: memory).",
                    },
                    "reason": {"type": "string"},
                },
                "required": ["id"],
                "additionalProperties": False,
            },
        },
    ]


@dataclass(frozen=True)
class ToolContext:
    """Who is calling: the write scope, the scopes they may read, and whether this agent may write at all (a
    subagent or cron agent may not; whether the store itself can be written is the engine's to say)."""

    engine: Bowerbird
    write_scope: str
    visible: tuple[str, ...]
    session_id: str
    writable: bool


def handle_tool_call(ctx: ToolContext, name: str, args: Mapping[str, Any] | str | None) -> str:
    """Run one tool call and return its JSON result; errors come back as {"error": ...}, never raised."""
    handler = _HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        return _error(f"unknown tool {str(name)[:80]!r}")
    try:
        parsed = _parse_args(args)
        return json.dumps(handler(ctx, parsed), ensure_ascii=False)
    except (InvalidInputError, NotFoundError) as exc:
        return _error(str(exc))
    except (BowerbirdError, sqlite3.Error, OSError) as exc:
        log.warning("tool %s failed: %s", name, describe(exc))
        return _error(describe(exc))
    except Exception as exc:
        log.exception("tool %s failed unexpectedly", name)
        return _error(describe(exc))


def _error(message: str) -> str:
    return json.dumps({"error": message})


def _parse_args(args: Mapping[str, Any] | str | None) -> dict[str, Any]:
    if args is None:
        return {}
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"arguments are not valid JSON: {exc.msg}") from exc
    if not isinstance(args, Mapping):
        raise InvalidInputError("arguments must be a JSON object")
    return dict(args)


def _recall(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    query = _text(args, "query")
    limit = _int(args.get("limit", 8), "limit", 1, 50)
    types = [_memory_type(t) for t in _list(args.get("types"), "types")]
    hits = ctx.engine.recall(
        query,
        scopes=ctx.visible,
        options=RecallOptions(
            limit=limit,
            types=types,
            since=_time(args.get("since"), "since"),
            until=_time(args.get("until"), "until"),
        ),
    )
    # the model reads these: memory is rendered inert as in prefetch
    result: dict[str, Any] = {
        "results": [{**hit_dict(h), "content": inert(h.content)} for h in hits],
        "count": len(hits),
    }
    reason = ctx.engine.inspect.read_only_reason
    if reason is not None:
        result["note"] = (
            f"{read_only_store(ctx.engine.inspect.location, reason)}: recall works, "
            "nothing new can be stored"
        )
    return result


def _remember(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    _require_writable(ctx)
    content = _text(args, "content")
    kind = _memory_type(args["type"]) if args.get("type") else None
    importance = args.get("importance")
    if importance is not None and not isinstance(importance, int | float):
        raise InvalidInputError("importance must be a number between 0 and 1")
    tags = [storable(str(t)) for t in _list(args.get("tags"), "tags")]
    memory = ctx.engine.remember(
        content,
        scope=ctx.write_scope,
        options=RememberOptions(
            type=kind,
            importance=importance,
            tags=tags,
            source=Source.TOOL,
            session_id=ctx.session_id,
            actor="tool",
        ),
    )
    return {"stored": memory_dict(memory)}


def _relate(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    _require_writable(ctx)
    relation = args.get("relation")
    if relation not in _RELATIONS:
        raise InvalidInputError(f"relation must be one of {', '.join(_RELATIONS)}")
    edge = ctx.engine.relate(
        _int(args.get("source_id"), "source_id"),
        _int(args.get("target_id"), "target_id"),
        Relation(relation),
        scopes=_own(ctx),
    )
    return {"edge": edge_dict(edge)}


def _update(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    _require_writable(ctx)
    memory = ctx.engine.update(_int(args.get("id"), "id"), _text(args, "content"), scopes=_own(ctx))
    return {"updated": memory_dict(memory), "supersedes": _int(args.get("id"), "id")}


def _forget(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    _require_writable(ctx)
    reason = storable(str(args.get("reason") or ""))
    given = args.get("id")
    kind = args.get("kind")
    if kind not in (None, "memory", "episode"):
        raise InvalidInputError("kind must be 'memory' or 'episode'")
    # "e7" as the context shows an episode
    if isinstance(given, str) and given.strip().lower().startswith("e"):
        given, kind = given.strip()[1:], kind or "episode"
        if kind != "episode":
            raise InvalidInputError(f"'{args.get('id')}' is an episode id, not a memory's")
    if kind == "episode":
        episodes, memories = ctx.engine.forget_turn(
            _int(given, "id"), scopes=_own(ctx), reason=reason
        )
        return {"forgotten_turn": {"episodes": episodes, "memories": memories}}
    memory = ctx.engine.forget(_int(given, "id"), scopes=_own(ctx), reason=reason)
    return {"forgotten": memory.id}


_HANDLERS: dict[str, Callable[[ToolContext, dict[str, Any]], dict[str, Any]]] = {
    "bowerbird_recall": _recall,
    "bowerbird_remember": _remember,
    "bowerbird_relate": _relate,
    "bowerbird_update": _update,
    "bowerbird_forget": _forget,
}


def _own(ctx: ToolContext) -> tuple[str, ...]:
    """Changes are allowed only inside the caller's own scope (a gateway user cannot edit shared facts); a
    user's own scope includes the key older stores gave them."""
    return tuple(s for s in ctx.visible if s.startswith("user:")) or (ctx.write_scope,)


def _require_writable(ctx: ToolContext) -> None:
    """A write needs a writable store (the reason it is not comes first: it holds for every agent) and an agent
    that may write."""
    reason = ctx.engine.inspect.read_only_reason
    if reason is not None:
        raise InvalidInputError(nothing_stored(ctx.engine.inspect.location, reason))
    if not ctx.writable:
        raise InvalidInputError(
            "nothing new is stored: memory is read-only in this agent (only the primary agent writes)"
        )


def _text(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    text = storable(value) if isinstance(value, str) else ""
    if not text.strip():
        raise InvalidInputError(f"'{key}' must be a non-empty string")
    return text


def _int(value: Any, key: str, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidInputError(f"'{key}' must be an integer")
    try:
        number = int(value)
    except ValueError as exc:
        raise InvalidInputError(f"'{key}' must be an integer") from exc
    if (low is not None and number < low) or (high is not None and number > high):
        raise InvalidInputError(f"'{key}' must be between {low} and {high}")
    if not -(2**63) <= number < 2**63:
        raise InvalidInputError(f"'{key}' is out of range (no record has such an id)")
    return number


def _list(value: Any, key: str) -> Sequence[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInputError(f"'{key}' must be a list")
    return value


def _memory_type(value: Any) -> MemoryType:
    try:
        return memory_type(value)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from exc


def _time(value: Any, key: str) -> float | None:
    if value in (None, ""):
        return None
    try:
        return parse_iso(str(value))
    except ValueError as exc:
        raise InvalidInputError(f"'{key}' must be an ISO date such as 2026-03-01") from exc
