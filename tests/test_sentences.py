"""Sentence splitting helpers: where a sentence quotes someone else's words."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.sentences import quotation_spans, unquoted


@pytest.mark.parametrize(
    "sentence, quoted",
    [
        ("He said 'I'm tired, I need to sleep.' and left.", ["'I'm tired, I need to sleep.'"]),
        ('She wrote "call me" on a napkin.', ['"call me"']),
        (
            "Then: \u201cwe never deploy on Fridays\u201d.",
            ["\u201cwe never deploy on Fridays\u201d"],
        ),
        ("He said: 'Dad, I like Austin.", ["'Dad, I like Austin."]),  # cut off by the splitter
        # a pasted text from its very start is the user's own
        ('"I am a lecturer in Maynooth.', []),
        ('"Good Times" inspired the bassline.', ['"Good Times"']),
        ("I really need to sleep.'", ["I really need to sleep.'"]),  # the cut-off half
        ("I don't know, it's Mateo's.", []),
        ("My kids' school is great.", []),
        ("I grew up in the '90s.", []),
        ("'cause I said so.", []),
        ("It's rock 'n' roll.", []),
    ],
)
def test_quotation_spans(sentence: str, quoted: list[str]) -> None:
    assert [sentence[start:end] for start, end in quotation_spans(sentence)] == quoted


def test_unquoted_keeps_positions() -> None:
    sentence = "He said 'I need to go' and I agreed."
    bare = unquoted(sentence)
    assert len(bare) == len(sentence)
    assert "need" not in bare
    assert bare.endswith("and I agreed.")
