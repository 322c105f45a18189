"""How the user wants to be answered, asked once for good, is kept as a preference; a request for this turn is not."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.extract import extract_candidates
from hermes_bowerbird.curation.standing import standing_request
from hermes_bowerbird.types import MemoryType


@pytest.mark.parametrize(
    "said, kept",
    [
        (
            "please always speak slowly and simply to me, big words confuse me sometimes",
            "Always speak slowly and simply to me, big words confuse me sometimes",
        ),
        ("always metric", "Always metric"),
        (
            "please always cc my deputy Farai Moyo on any draft you write for me",
            "Always cc my deputy Farai Moyo on any draft you write for me",
        ),
        (
            "give me summaries as bullet points, not paragraphs",
            "Give me summaries as bullet points, not paragraphs",
        ),
        ("please keep your answers under 100 words", "Keep your answers under 100 words"),
        (
            "any chart you suggest must avoid red/green",
            "Any chart you suggest must avoid red/green",
        ),
        ("first thing: from now on answer me in French", "From now on answer me in French"),
        ("from now on, answer in Spanish", "From now on, answer in Spanish"),
        ("use British spelling by default", "Use British spelling by default"),
        ("please write everything for me in Spanish", "Write everything for me in Spanish"),
        ("use celsius pls im in canada", "Use celsius pls I'm in canada"),
        ("stop using emojis in ur answers", "Stop using emojis in ur answers"),
        (
            "i want all my product descriptions in british english, and no emojis",
            "I want all my product descriptions in british english, and no emojis",
        ),
        # what the assistant does for the user, and rules however they are opened
        ("and always pick an aisle seat, never window", "Always pick an aisle seat, never window"),
        (
            "ground rules: never book me on a flight departing before 10am",
            "Never book me on a flight departing before 10am",
        ),
        (
            "pls remember: always explain me in easy german or english, no long words",
            "Always explain me in easy german or english, no long words",
        ),
        (
            "please when you explain me something, use simple words, no difficult words",
            "When you explain me something, use simple words, no difficult words",
        ),
        (
            "keep replies short, bullet points, no essays",
            "Keep replies short, bullet points, no essays",
        ),
    ],
)
def test_a_request_for_good_is_kept_as_said(said: str, kept: str) -> None:
    assert standing_request(said) is not None
    assert [(c.type, c.content) for c in extract_candidates(said, "Will do.")] == [
        (MemoryType.PREFERENCE, kept)
    ]


@pytest.mark.parametrize(
    "said",
    [
        "explain this to me",  # this turn only
        "write something funny for the card",
        "answer this one in hindi pls, my mom wants to read it: what does a backend engineer do",
        "write the email in French",
        "Can you always answer in Spanish?",  # asked, not told
        "I always take the train",  # of the user, not of answers
        "I want a new job",
        "Never give up!",  # advice, not how to answer
        "always check the weather before hiking",
        "Keep the email short and suggest a call.",  # this email
        "go back to the main menu",
        "go back to sleep now",
        "order pizza for tonight, never mind the salad",
        "I always pick the aisle seat",
        "give me the summary as bullets",  # this summary
        "every email you sent went to spam",
    ],
)
def test_a_request_for_this_turn_or_a_habit_is_none(said: str) -> None:
    assert standing_request(said) is None


def test_the_language_to_answer_in_is_one_slot() -> None:
    first = extract_candidates(
        "from now on answer me in Portuguese please, i'm practicing before lisbon", "Claro!"
    )
    later = extract_candidates(
        "ok lisbon done. you can go back to english now", "Sure, back to English."
    )
    assert [(c.type, c.subject) for c in first] == [(MemoryType.PREFERENCE, "user:reply-language")]
    assert [(c.type, c.subject, c.content) for c in later] == [
        (MemoryType.PREFERENCE, "user:reply-language", "Go back to english now")
    ]
