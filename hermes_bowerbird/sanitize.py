"""Make any text storable: lone surrogates become U+FFFD, NUL bytes are removed; nothing is dropped."""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` as valid UTF-8 without NULs: surrogate pairs are joined, lone surrogates replaced by U+FFFD."""
    if _SURROGATE.search(text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text.replace("\x00", "") if "\x00" in text else text


def storable_or_empty(value: object) -> str:
    """A hook argument of any type as storable text: None and non-strings become '' (never raise)."""
    return storable(value) if isinstance(value, str) else ""
