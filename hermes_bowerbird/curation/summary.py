"""The durable points of a message list, as a short list for the host's compression summariser."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..store import content_hash
from .extract import extract_candidates
from .injected import message_text, strip_injected_context
from .redact import redact
from .screen import screen

HEADER = "Durable facts and decisions from the earlier conversation (keep them in the summary):"
_ITEM_CHARS = 240


def durable_points(messages: Sequence[Mapping[str, Any]], *, limit_chars: int = 1500) -> str:
    """Most important extracted statements first, one line each, redacted and screened, within `limit_chars`.

    Tool results are never read: what a tool returned reaches memory only through the assistant's own words."""
    candidates = []
    for position, message in enumerate(messages or ()):
        role, content = message.get("role"), message_text(message.get("content"))
        if role not in ("user", "assistant") or not content.strip():
            continue
        text = strip_injected_context(content)
        found = extract_candidates(text, "") if role == "user" else extract_candidates("", text)
        # a bare "it's done" or "the standup moved to 10am" is no durable point without the memory it may close or
        # change
        candidates += [(c.importance, position, c) for c in found if not c.closing_only]
    lines: list[str] = []
    seen: set[str] = set()
    used = len(HEADER)
    for _, _, candidate in sorted(candidates, key=lambda item: (-item[0], item[1])):
        digest = content_hash(candidate.content)
        # text that could steer the model is no durable point
        if digest in seen or screen(candidate.content, said_by_user=candidate.role == "user"):
            continue
        line = f"- [{candidate.type}] {_shorten(redact(candidate.content))}"
        if used + len(line) + 1 > limit_chars:
            continue
        seen.add(digest)
        lines.append(line)
        used += len(line) + 1
    return "\n".join([HEADER, *lines]) if lines else ""


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ITEM_CHARS else text[: _ITEM_CHARS - 1].rstrip() + "…"
