"""The wire format: what the CLI's --json, the agent's tools and the MCP server print, with ISO 8601 UTC times."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .curation.provenance import origin_of
from .timestamps import to_iso

if TYPE_CHECKING:
    from .inspection import MemoryDetail
    from .retrieval import Hit
    from .types import AuditEntry, Bulletin, Edge, Entity, Memory, Provenance


def iso(ts: float | None) -> str | None:
    """A time as ISO 8601 UTC to the second (None stays None)."""
    return None if ts is None else to_iso(ts)


def memory_dict(memory: Memory) -> dict[str, Any]:
    """A memory as the agent's tools show it."""
    return {
        "id": memory.id,
        "type": str(memory.type),
        "content": memory.content,
        "importance": memory.importance,
        "created_at": iso(memory.created_at),
        "valid_until": iso(memory.valid_until),
        "superseded_by": memory.superseded_by,
        "forgotten": memory.forgotten,
        "tags": list(memory.tags),
        "source": str(memory.source),
        "scope": memory.scope,
    }


def memory_json(memory: Memory) -> dict[str, Any]:
    """A memory with everything a person inspecting it may want (the CLI)."""
    return {
        **memory_dict(memory),
        "subject": memory.subject,
        "confidence": memory.confidence,
        "session_id": memory.session_id,
        "access_count": memory.access_count,
        "origin": origin_of(memory.metadata),
        "metadata": dict(memory.metadata),
    }


def edge_dict(edge: Edge) -> dict[str, Any]:
    return {
        "id": edge.id,
        "source_id": edge.src_id,
        "target_id": edge.dst_id,
        "relation": str(edge.relation),
        "weight": edge.weight,
        "created_at": iso(edge.created_at),
    }


def provenance_list(provenance: Sequence[Provenance]) -> list[dict[str, Any]]:
    return [{"session_id": p.session_id, "turn_index": p.turn_index} for p in provenance]


def entity_dict(entity: Entity) -> dict[str, Any]:
    return {
        "id": entity.id,
        "name": entity.name,
        "kind": entity.kind,
        "aliases": list(entity.aliases),
    }


def audit_dict(entry: AuditEntry) -> dict[str, Any]:
    return {
        "action": str(entry.action),
        "reason": entry.reason,
        "actor": entry.actor,
        "created_at": iso(entry.created_at),
        "details": dict(entry.details),
    }


def detail_json(detail: MemoryDetail) -> dict[str, Any]:
    """A memory with its edges, sources, entities and audit trail (`show`)."""
    return {
        "memory": memory_json(detail.memory),
        "edges": [edge_dict(e) for e in detail.edges],
        "provenance": provenance_list(detail.provenance),
        "entities": [entity_dict(e) for e in detail.entities],
        "audit": [audit_dict(a) for a in detail.audit],
        "quarantine": detail.quarantine,
        "questions": [{"text": q.text, "origin": str(q.origin)} for q in detail.questions],
    }


def hit_dict(hit: Hit) -> dict[str, Any]:
    """A search result (tools, `recall --json`); `signals` only when the search was explained."""
    created = to_iso(hit.created_at)
    out: dict[str, Any] = {
        "kind": str(hit.kind),
        "id": hit.id,
        "type": str(hit.type) if hit.type is not None else None,
        "content": hit.content,
        "score": round(hit.score, 6),
        "created_at": created,
        "date": created[:10],
        "provenance": provenance_list(hit.provenance),
        "superseded": hit.superseded,
    }
    if hit.truncated:
        out["truncated"] = True
    if hit.amended_by:
        out["amended_by"] = list(hit.amended_by)
    if hit.signals:
        out["signals"] = {name: round(value, 6) for name, value in hit.signals.items()}
    return out


def bulletin_dict(bulletin: Bulletin) -> dict[str, Any]:
    return {
        "text": bulletin.text,
        "scope": bulletin.scope,
        "generator": bulletin.generator,
        "created_at": iso(bulletin.created_at),
        "hash": bulletin.hash,
    }
