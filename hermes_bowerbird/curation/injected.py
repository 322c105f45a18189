"""Strip the recalled-memory blocks the host adds to user messages, so memories never echo back in as new words."""

from __future__ import annotations

import re

_INJECTED = re.compile(r"<\s*memory-context\s*>[\s\S]*?<\s*/\s*memory-context\s*>", re.IGNORECASE)


def strip_injected_context(text: str | None) -> str:
    """`text` without any <memory-context>...</memory-context> span (and trimmed when one was removed)."""
    if not text or "memory-context" not in text.lower():
        return text or ""
    return _INJECTED.sub("", text).strip()
