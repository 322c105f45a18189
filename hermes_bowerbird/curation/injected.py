"""Message text as capture sees it: the text parts of (multimodal) content, without the recalled-memory blocks the
host adds to user messages, so memories never echo back in as new words."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_INJECTED = re.compile(r"<\s*memory-context\s*>[\s\S]*?<\s*/\s*memory-context\s*>", re.IGNORECASE)


def strip_injected_context(text: str | None) -> str:
    """`text` without any <memory-context>...</memory-context> span (and trimmed when one was removed)."""
    if not text or "memory-context" not in text.lower():
        return text or ""
    return _INJECTED.sub("", text).strip()


def message_text(content: Any) -> str:
    """The text of a chat message's content: a string as it is, or the text parts of a multimodal list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("text")
        )
    return ""
