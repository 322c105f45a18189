"""Sentence splitting, and where a sentence quotes someone else's words."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.sentences import (
    own_words,
    quotation_spans,
    reported_spans,
    split_sentences,
)


@pytest.mark.parametrize(
    "text, sentences",
    [
        (
            "I moved to Porto. My sister lives in Faro.",
            ["I moved to Porto.", "My sister lives in Faro."],
        ),
        # chat in small letters: a fact, then a question
        (
            "It runs out every month. is it worth going to 15GB?",
            ["It runs out every month.", "is it worth going to 15GB?"],
        ),
        (
            "Our cat keeps jumping on the counter lol. any tips?",
            ["Our cat keeps jumping on the counter lol.", "any tips?"],
        ),
        ("Hi! my name is Bo.", ["Hi!", "my name is Bo."]),
        # abbreviations and initials end nothing, whatever follows
        ("Use e.g. pytest, vs. nose.", ["Use e.g. pytest, vs. nose."]),
        ("Meet Dr. chen at 9 a.m. tomorrow.", ["Meet Dr. chen at 9 a.m. tomorrow."]),
        ("J. k. rowling wrote it.", ["J. k. rowling wrote it."]),
        ("We use next.js daily.", ["We use next.js daily."]),
        ("one\ntwo", ["one", "two"]),
        ("No egg at all incl. baked.", ["No egg at all incl. baked."]),
        # a class or a day numbered as Danish or German write them
        ("she go to 1. klasse at Skæring Skole.", ["she go to 1. klasse at Skæring Skole."]),
        ("Ideas I have: 1. what to eat", ["Ideas I have: 1.", "what to eat"]),  # a list's number
        ("we have reserved the 5. September 2026", ["we have reserved the 5. September 2026"]),
        ("interview moved to 21.10. 13:30, on site", ["interview moved to 21.10. 13:30, on site"]),
        (
            "I like the Omni PC 4.0. It is light.",
            ["I like the Omni PC 4.0.", "It is light."],
        ),  # a version
    ],
)
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


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
        # the cut-off half before its speech tag, and a quotation after it
        ("I'm vegan now,\" she said.", ["I'm vegan now,\""]),
        (
            "Honestly? I'm done,' he said, 'and I mean it.'",
            ["Honestly? I'm done,'", "'and I mean it.'"],
        ),
        ("I don't know, it's Mateo's.", []),
        ("My kids' school is great.", []),
        ("I grew up in the '90s.", []),
        ("'cause I said so.", []),
        ("It's rock 'n' roll.", []),
    ],
)
def test_quotation_spans(sentence: str, quoted: list[str]) -> None:
    assert [sentence[start:end] for start, end in quotation_spans(sentence)] == quoted


@pytest.mark.parametrize(
    "sentence, reported",
    [
        (
            "The therapist asked if we've decided to separate.",
            ["asked if we've decided to separate"],
        ),
        ("My boss thinks I'm a designer.", ["thinks I'm a designer"]),
        ("People assume I'm from Spain, which is funny.", ["assume I'm from Spain"]),
        ("She thinks I'm vegan but I'm not.", ["thinks I'm vegan "]),
        ("Mom keeps saying that I work too much.", ["keeps saying that I work too much"]),
        # the speaker's own beliefs, and a clinician's view of their health
        ("I think I'm allergic to cats.", []),
        ("I don't believe I'm ready to move.", []),
        ("My wife and I think we should move to Lisbon.", []),
        ("We figured we'd move next year.", []),
        ("My doctor thinks I have an ulcer.", []),
        # a verb's plain form reports a belief only after a plural subject
        ("Do you think I could bring a tent?", []),
        ("It made me think about how I need to plan better.", []),
        ("Lets think step by step about what I need to do.", []),
        ("My parents think I'm still in Leeds.", ["think I'm still in Leeds"]),
        ("You won't believe it - I got promoted!", []),
        # a reported clause ends where the speaker's own begins
        (
            "She asked if we're getting divorced and we said we're separating first.",
            ["asked if we're getting divorced "],
        ),
        ("He thinks I'm lazy - I work two jobs.", ["thinks I'm lazy"]),
    ],
)
def test_reported_spans_beyond_quotations(sentence: str, reported: list[str]) -> None:
    assert [sentence[start:end] for start, end in reported_spans(sentence)] == reported


def test_own_words_keeps_positions() -> None:
    sentence = "He said 'I need to go' and I agreed."
    bare = own_words(sentence)
    assert len(bare) == len(sentence)
    assert "need" not in bare
    assert bare.endswith("and I agreed.")


def test_a_long_run_of_initials_or_a_blob_is_one_sentence() -> None:
    """Whether a chunk ends a sentence is read from its end alone: 20,000 initials make one sentence (a pending
    sentence re-read whole at each chunk took 20 s here)."""
    assert split_sentences("a. " * 20_000) == [("a. " * 20_000).strip()]
    assert split_sentences("Dr. " * 30_000) == [("Dr. " * 30_000).strip()]
