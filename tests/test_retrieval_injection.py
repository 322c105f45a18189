"""What prefetch injects unasked: messages that only ask, and lines that say nothing new."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.provenance import ASSISTANT, EXPLICIT, ORIGIN_KEY, TOOL, USER
from hermes_bowerbird.retrieval.injection import covered, said_on, words_of
from hermes_bowerbird.retrieval.query import only_asks
from hermes_bowerbird.types import Memory, MemoryType, Source


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Remind me, how do we deploy things here?", True),
        ("Which tool should I use to deploy the billing service?", True),
        ("Hi! How do we deploy? Thanks!", True),
        ("which tool do I deploy with", True),  # typed without its mark
        ("Can you remind me: which nuts must my kid avoid? cheers :)", True),
        ("Is Dr. Okafor my dentist?", True),
        (
            "Hi, I'm Ada Lovelace. I always deploy with Ansible, and we never deploy on Fridays.",
            False,
        ),
        ("I'm 41 and my knee hurts, is that normal?", False),  # tells before it asks
        ("I moved my banking to Tide last week, what do I update?", False),
        ("Which tool? We use Ansible.", False),
        ("my rent is 540 how do I budget this", False),
        ("Thanks!", False),  # asks nothing either
        ("", False),
    ],
)
def test_a_message_only_asks_when_every_sentence_is_a_question(text: str, expected: bool) -> None:
    assert only_asks(text) is expected


def _memory(origin: str) -> Memory:
    return Memory(
        id=1,
        scope="profile:default",
        type=MemoryType.FACT,
        content="We deploy with Ansible.",
        importance=0.6,
        confidence=1.0,
        created_at=0.0,
        updated_at=0.0,
        source=Source.TURN,
        metadata={ORIGIN_KEY: origin},
    )


@pytest.mark.parametrize(
    ("origin", "role", "expected"),
    [
        (USER, "user", True),
        (USER, "assistant", False),
        (ASSISTANT, "assistant", True),
        (ASSISTANT, "user", False),
        (TOOL, "assistant", True),
        (EXPLICIT, "user", True),
        (EXPLICIT, "assistant", True),
    ],
)
def test_a_memory_is_said_on_the_side_its_words_came_from(
    origin: str, role: str, expected: bool
) -> None:
    assert said_on(_memory(origin), role) is expected


@pytest.mark.parametrize(
    ("line", "earlier", "expected"),
    [
        (
            "I always deploy with Ansible.",
            "Hi, I'm Ada. I always deploy with Ansible, and never on Fridays.",
            True,
        ),
        ("We deploy on Fridays.", "We deploy on Fridays and Mondays.", True),
        (
            "We deploying on Friday.",
            "We deploy on Fridays.",
            True,
        ),  # words compare by their first letters
        ("We don't deploy on Fridays.", "We deploy on Fridays.", False),  # "not" is a word too
        ("Hi, I'm Ada. I always deploy with Ansible.", "I always deploy with Ansible.", False),
        ("Ansible 2.16", "Ansible 2.15", False),
    ],
)
def test_a_line_is_covered_when_an_earlier_one_holds_all_its_words(
    line: str, earlier: str, expected: bool
) -> None:
    assert covered(words_of(line), [words_of("Unrelated words."), words_of(earlier)]) is expected
