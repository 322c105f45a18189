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


# A quotation opens with a quote mark at the start of a sentence or after a space, a bracket, a colon or a comma, and
# closes at its closing mark; a single quote closes only before a space, punctuation or the end ("don't" inside a
# quotation does not close it). An apostrophe inside a word never opens one, nor does a clipped word ('cause, 'em).
_QUOTATION = re.compile(
    r"(?:^|(?<=[\s(\[:,]))(?:\"[^\"]*(?:\"|$)|“[^”]*(?:”|$)|‘(?:[^’]|’(?=\w))*(?:’|$)|"
    r"'(?!(?:cause|cos|til|till|em|bout|round|n|s|d|ll|re|ve|tis|twas)\b)(?=[^\W\d_])(?:[^']|'(?=\w))*(?:'(?![^\W\d_])|$))"
)
# the second half of a quotation the splitter cut in two: it ends with a closing mark that nothing opened
_QUOTATION_TAIL = re.compile(r"[.!?,…][\"'’”]$")
_CLOSING = {'"': '"', "“": "”", "‘": "’", "'": "'"}
_QUOTE_OPENER = re.compile(r"(?:^|[\s(\[:,])[\"'‘“]")


def quotation_spans(sentence: str) -> list[tuple[int, int]]:
    """Where `sentence` quotes someone's words: each quotation from its opening mark to its closing one (or to the
    end, when the sentence splitter cut the quotation off after "He said 'I'm beat."), or the whole sentence when it
    is the second half of a quotation cut in two ("I need to sleep.'")."""
    if _QUOTATION_TAIL.search(sentence) and not _QUOTE_OPENER.search(sentence):
        return [(0, len(sentence))]
    return [
        m.span()
        for m in _QUOTATION.finditer(sentence)
        if m.end() > m.start() + 1 and not (m.start() == 0 and _unclosed(m.group()))
    ]


def _unclosed(quotation: str) -> bool:
    """A quotation that runs to the end of the sentence: from its very start it is a pasted text (the user's own
    bio or draft) as often as the first half of a quotation, so it is not counted as someone else's words."""
    return quotation[-1] != _CLOSING[quotation[0]]


def unquoted(sentence: str) -> str:
    """`sentence` with every quotation blanked out (same length, so positions still line up): what the speaker
    says in their own words."""
    out = sentence
    for start, end in quotation_spans(sentence):
        out = out[:start] + " " * (end - start) + out[end:]
    return out
