"""Plain-text views for people: tables, memory details, recall hits and status (the CLI and the demo print these)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .curation.provenance import origin_of
from .types import Entity, Memory

if TYPE_CHECKING:
    from .inspection import MemoryDetail
    from .retrieval import Hit

_MIN_LAST_COLUMN = 20


def when(ts: float | None) -> str:
    """A compact UTC timestamp, or '-'."""
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M")


def shorten(text: str, width: int) -> str:
    """One line of at most `width` characters (newlines folded, an ellipsis when cut)."""
    flat = " ".join(text.split())
    if width <= 1 or len(flat) <= width:
        return flat
    return flat[: width - 1] + "…"


def table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], *, width: int | None = None
) -> str:
    """Left-aligned columns sized to their content; the last column is cut to fit the terminal."""
    if not rows:
        return ""
    width = width or shutil.get_terminal_size((120, 24)).columns
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    sizes = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    fixed = sum(sizes[:-1]) + 2 * (len(sizes) - 1)
    sizes[-1] = max(_MIN_LAST_COLUMN, min(sizes[-1], width - fixed))
    lines = []
    for n, row in enumerate(cells):
        parts = [c.ljust(sizes[i]) for i, c in enumerate(row[:-1])] + [shorten(row[-1], sizes[-1])]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * s for s in sizes))
    return "\n".join(lines)


def memory_state(memory: Memory, now: float) -> str:
    if memory.forgotten:
        return "forgotten"
    if memory.superseded_by is not None:
        return f"superseded by #{memory.superseded_by}"
    if memory.valid_until is not None and memory.valid_until <= now:
        return "expired"
    return "current"


def memories_table(memories: Sequence[Memory]) -> str:
    rows = [
        (f"#{m.id}", str(m.type), f"{m.importance:.2f}", when(m.created_at)[:10], m.content)
        for m in memories
    ]
    return table(("id", "type", "imp", "created", "content"), rows)


def quarantine_table(held: Sequence[tuple[Memory, str]]) -> str:
    rows = [
        (f"#{m.id}", str(m.type), when(m.created_at)[:10], reason, m.content) for m, reason in held
    ]
    return table(("id", "type", "created", "why held", "content"), rows)


def hit_lines(hits: Sequence[Hit], *, explain: bool) -> str:
    """Numbered recall results; with `explain`, the signals that found each one and the rescoring steps."""
    lines = []
    for rank, hit in enumerate(hits, start=1):
        flag = " (superseded)" if hit.superseded else ""
        if hit.amended_by:
            flag += " (amended by " + ", ".join(f"#{i}" for i in hit.amended_by) + ")"
        lines.append(f"{rank:>2}. [{hit.label}] {shorten(hit.content, 200)}{flag}")
        lines.append(f"    score {hit.score:.4f} · {when(hit.created_at)}" + _provenance(hit))
        if explain and hit.signals:
            reasons = ", ".join(f"{name} {value:.3f}" for name, value in hit.signals.items())
            lines.append(f"    why: {reasons}")
    return "\n".join(lines)


def _provenance(hit: Hit) -> str:
    if not hit.provenance:
        return ""
    first = hit.provenance[0]
    more = f" (+{len(hit.provenance) - 1})" if len(hit.provenance) > 1 else ""
    return f" · from {first.session_id} turn {first.turn_index}{more}"


def detail_text(detail: MemoryDetail, now: float) -> str:
    """Everything about one memory: fields, edges, provenance, entities and its audit history."""
    m = detail.memory
    lines = [f"memory #{m.id} ({m.type}, {memory_state(m, now)})", "", m.content, ""]
    fields: list[tuple[str, object]] = [
        ("scope", m.scope),
        ("importance", f"{m.importance:.2f}"),
        ("confidence", f"{m.confidence:.2f}"),
        ("source", m.source),
        ("origin", origin_of(m.metadata)),
        ("subject", m.subject or "-"),
        ("created", when(m.created_at)),
        ("updated", when(m.updated_at)),
        ("valid until", when(m.valid_until)),
        ("accessed", f"{m.access_count} times, last {when(m.accessed_at)}"),
        ("tags", ", ".join(m.tags) or "-"),
        ("session", m.session_id or "-"),
    ]
    lines += [f"  {k:<12} {v}" for k, v in fields]
    if detail.quarantine:
        lines += [
            "",
            f"quarantined: {detail.quarantine} (never recalled or put in a prompt; "
            f"`bowerbird release {m.id}` lets it back)",
        ]
    if detail.entities:
        lines += ["", "entities: " + ", ".join(map(_entity, detail.entities))]
    if detail.questions:
        lines += ["", "found by the questions:"]
        lines += [f"  {q.text}  ({q.origin})" for q in detail.questions]
    if detail.edges:
        lines += ["", "edges:"]
        lines += [
            f"  #{e.src_id} --{e.relation}--> #{e.dst_id} (weight {e.weight:.2f})"
            for e in detail.edges
        ]
    if detail.provenance:
        lines += ["", "provenance:"] + [
            f"  {p.session_id} turn {p.turn_index}" for p in detail.provenance
        ]
    if detail.audit:
        lines += ["", "history:"]
        lines += [
            f"  {when(a.created_at)}  {a.action:<11} by {a.actor or '-'}: {a.reason}"
            for a in detail.audit
        ]
    return "\n".join(lines)


def _entity(entity: Entity) -> str:
    """ "Tomasz (husband, spouse)": the name, and the other names it is known by."""
    return f"{entity.name} ({', '.join(entity.aliases)})" if entity.aliases else entity.name


def key_values(pairs: Mapping[str, Any]) -> str:
    width = max((len(k) for k in pairs), default=0)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in pairs.items())
