"""Split chat text into sentences, cheaply and without a language model."""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "approx",
        "no",
        "fig",
        "inc",
        "ltd",
        "co",
        "corp",
        "mt",
        "ft",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "a.m",
        "p.m",
    }
)
_BOUNDARY = re.compile(
    r"(?:(?<=[.!?…])|(?<=[.!?…][\"'’”)\]]))\s+(?=[\"'“(\[]?[A-Z0-9¿¡])|\s*\n+\s*"
)
_LAST_WORD = re.compile(r"(?:^|\s)([A-Za-z.]+)\.$")


def split_sentences(text: str) -> list[str]:
    """Sentences of `text` in order, stripped; lines are always boundaries, abbreviations are not."""
    pieces: list[str] = []
    pending = ""
    pos = 0
    for m in _BOUNDARY.finditer(text):
        chunk = text[pos : m.start()]
        pos = m.end()
        pending = f"{pending} {chunk}" if pending else chunk
        if "\n" not in m.group(0) and _ends_with_abbreviation(pending):
            continue
        if pending.strip():
            pieces.append(pending.strip())
        pending = ""
    tail = text[pos:]
    pending = f"{pending} {tail}" if pending else tail
    if pending.strip():
        pieces.append(pending.strip())
    return pieces


def _ends_with_abbreviation(chunk: str) -> bool:
    m = _LAST_WORD.search(chunk)
    if not m:
        return False
    word = m.group(1).lower().rstrip(".")
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())
