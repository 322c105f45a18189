"""The inspector's pages: memories (listed or searched, with the reasons each hit ranked), one memory, the bulletin
and status. Reads only; the writes are in actions.py."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from .. import render
from ..errors import InvalidInputError, NotFoundError
from ..options import RecallOptions
from ..types import MemoryType, memory_type, type_names
from .app import Inspector, inspector_of, page

LIST_LIMIT = 200
SEARCH_LIMIT = 20
STATES = {
    "current": "current versions",
    "history": "with superseded and expired",
    "everything": "with forgotten ones too",
}
DONE = {
    "edited": "Saved as a new version; the old one is kept below as history.",
    "forgotten": "Forgotten: recall skips it from now on. Restore brings it back.",
    "restored": "Restored: recall finds it again.",
    "importance": "Importance saved.",
}
# What each explain signal means (retrieval/fusion.py, rerank.py, retriever.py name them).
GLOSSARY = {
    "fts_memory": "full-text match (bm25) on the memory",
    "fts_episode": "full-text match (bm25) on a past turn",
    "vector_memory": "meaning: cosine similarity to the query",
    "vector_episode": "meaning: cosine similarity of a past turn",
    "graph_entity": "names an entity the query names",
    "graph_entity_episode": "a past turn naming an entity the query names",
    "graph_edge": "linked to a top hit by an edge",
    "rrf": "fused rank score of the signals above",
    "neighbour": "boost from a linked hit",
    "session": "same-session factor",
    "importance": "importance after decay",
    "assistant_turn": "only the assistant said it (weighed down)",
    "type_hint": "the query asks for this type",
    "time_window": "inside the time the query names",
    "recency": "freshness factor",
    "superseded": "a newer version exists (demoted)",
    "coverage": "share of the query's keywords it contains",
    "rerank": "factor from coverage and meaning",
    "cosine": "cosine similarity used by the rerank",
    "relevance": "own relevance (floor check)",
    "mmr_similarity": "similarity to a higher hit (diversity)",
    "vector_unavailable": "no embedding model: keywords only",
    "final": "final score",
}


def chosen_scope(inspector: Inspector, value: str | None) -> str | None:
    """The scope filter: None for all, else one of the inspector's scopes."""
    if not value:
        return None
    if value not in inspector.scopes():
        raise NotFoundError(f"no scope {value!r} here")
    return value


def chosen_type(value: str | None) -> MemoryType | None:
    if not value:
        return None
    try:
        return memory_type(value)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from exc


def memories(request: Request) -> Response:
    """Every memory by type and scope, newest first; with `q`, the engine's recall with its explanation."""
    inspector = inspector_of(request)
    params = request.query_params
    query = params.get("q", "").strip()
    scope = chosen_scope(inspector, params.get("scope"))
    kind = chosen_type(params.get("type"))
    state = params.get("state") if params.get("state") in STATES else "current"
    episodes = params.get("episodes") == "1"
    scopes = (scope,) if scope else inspector.scopes()
    types = [kind] if kind else []
    engine = inspector.engine
    hits = (
        engine.recall(
            query,
            scopes=scopes,
            options=RecallOptions(
                types=types,
                explain=True,
                include_episodes=episodes,
                limit=SEARCH_LIMIT,
                touch=False,
            ),
        )
        if query
        else []
    )
    listed = (
        []
        if query
        else engine.inspect.list_memories(
            scopes,
            types=types,
            current_only=state == "current",
            include_forgotten=state == "everything",
            limit=LIST_LIMIT,
        )
    )
    counts = {s: n for s, n in engine.inspect.scopes().items() if s in inspector.scopes()}
    return page(
        request,
        "memories.html",
        section="memories",
        q=query,
        scope=scope or "",
        kind=kind.value if kind else "",
        state=state,
        episodes=episodes,
        hits=hits,
        memories=listed,
        scope_counts=counts,
        types=list(type_names()),
        states=STATES,
        glossary=GLOSSARY,
        limit=LIST_LIMIT,
        states_of={m.id: render.memory_state(m, engine.clock()) for m in listed},
    )


def memory(request: Request) -> Response:
    """One memory: content, fields, versions, edges, entities, source turns, history, and the edit forms."""
    inspector = inspector_of(request)
    engine = inspector.engine
    memory_id = int(request.path_params["memory_id"])
    allowed = inspector.scopes()
    detail = engine.inspect.show(memory_id, scopes=allowed)
    return page(
        request,
        "memory.html",
        section="memories",
        detail=detail,
        m=detail.memory,
        state=render.memory_state(detail.memory, engine.clock()),
        versions=engine.inspect.versions(memory_id, scopes=allowed),
        turns=engine.inspect.source_turns(memory_id, scopes=allowed),
        done=DONE.get(request.query_params.get("done", ""), ""),
    )


def bulletin(request: Request) -> Response:
    """The bulletin the next session writing to a scope starts with (built the way the provider builds it)."""
    inspector = inspector_of(request)
    allowed = inspector.scopes()
    default = inspector.profile_scope if inspector.profile_scope in allowed else allowed[0]
    scope = chosen_scope(inspector, request.query_params.get("scope")) or default
    visible = inspector.visible_for(scope)
    current = inspector.engine.bulletin(scope, visible=visible, synthesise=False)
    return page(
        request,
        "bulletin.html",
        section="bulletin",
        scope=scope,
        scopes=allowed,
        visible=visible,
        bulletin=current,
    )


def status(request: Request) -> Response:
    """Journal backlog, embedding backend, counts and when each maintenance job last ran."""
    inspector = inspector_of(request)
    engine = inspector.engine
    info = engine.status()
    return page(
        request,
        "status.html",
        section="status",
        info=info,
        last_runs=engine.admin.last_maintenance(),
        scope_counts={s: n for s, n in engine.inspect.scopes().items() if s in inspector.scopes()},
    )
