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
        ("from now on, answer in Spanish", "From now on, answer in Spanish"),
        ("use British spelling by default", "Use British spelling by default"),
        ("please write everything for me in Spanish", "Write everything for me in Spanish"),
        ("use celsius pls im in canada", "Use celsius pls I'm in canada"),
        ("stop using emojis in ur answers", "Stop using emojis in ur answers"),
        (
            "i want all my product descriptions in british english, and no emojis",
            "I want all my product descriptions in british english, and no emojis",
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
    ],
)
def test_a_request_for_this_turn_or_a_habit_is_none(said: str) -> None:
    assert standing_request(said) is None
