"""Split a turn's text into verbatim episode chunks: paragraph-aware, about 512 tokens each."""

from __future__ import annotations

import re

from ..text import estimate_chunk_tokens

DEFAULT_MAX_TOKENS = 512
MIN_CHUNK_CHARS = 20

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# A sentence ends at . ! ? or … (optionally followed by closing quotes/brackets) and whitespace.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+")


def chunk_text(
    text: str, *, max_tokens: int = DEFAULT_MAX_TOKENS, min_chars: int = MIN_CHUNK_CHARS
) -> list[str]:
    """Verbatim chunks of `text`; paragraphs are kept together, oversized ones split at sentences."""
    pieces: list[str] = []
    for paragraph in _paragraphs(text):
        if estimate_chunk_tokens(paragraph) <= max_tokens:
            pieces.append(paragraph)
        else:
            pieces.extend(_split_paragraph(paragraph, max_tokens))
    return _absorb_fragments(_pack(pieces, max_tokens, "\n\n"), min_chars)


def _absorb_fragments(chunks: list[str], min_chars: int) -> list[str]:
    """Attach a fragment shorter than `min_chars` to a neighbouring chunk; drop it only when it stands alone."""
    out: list[str] = []
    carry = ""
    for chunk in chunks:
        if len(chunk.strip()) >= min_chars:
            out.append(f"{carry} {chunk}" if carry else chunk)
            carry = ""
        elif out:
            out[-1] = f"{out[-1]} {chunk}"
        else:
            carry = f"{carry} {chunk}".strip()
    return out


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]


def _split_paragraph(paragraph: str, max_tokens: int) -> list[str]:
    """Sentences packed up to the limit; a sentence longer than the limit is cut at word boundaries."""
    sentences: list[str] = []
    for sentence in _SENTENCE_END.split(paragraph):
        sentence = sentence.strip()
        if not sentence:
            continue
        if estimate_chunk_tokens(sentence) <= max_tokens:
            sentences.append(sentence)
        else:
            sentences.extend(_split_words(sentence, max_tokens))
    return _pack(sentences, max_tokens, " ")


def _split_words(sentence: str, max_tokens: int) -> list[str]:
    return _pack(sentence.split(), max_tokens, " ")


def _pack(pieces: list[str], max_tokens: int, joiner: str) -> list[str]:
    """Greedily join consecutive pieces while the joined text stays within the limit."""
    out: list[str] = []
    current: list[str] = []
    size = 0
    for piece in pieces:
        tokens = estimate_chunk_tokens(piece)
        if current and size + tokens > max_tokens:
            out.append(joiner.join(current))
            current, size = [], 0
        current.append(piece)
        size += tokens
    if current:
        out.append(joiner.join(current))
    return out
