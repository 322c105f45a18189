"""What prefetch injects unasked: messages that only ask, lines that add nothing, the best answer first."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.provenance import ASSISTANT, EXPLICIT, ORIGIN_KEY, TOOL, USER
from hermes_bowerbird.retrieval.fusion import Fused, Key
from hermes_bowerbird.retrieval.injection import (
    adding,
    best_answer_first,
    covered,
    said_on,
    words_of,
)
from hermes_bowerbird.retrieval.query import only_asks
from hermes_bowerbird.types import ItemKind, Memory, MemoryType, Source


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


def _entry(
    kind: ItemKind, item_id: int, relevance: float, score: float, carries: tuple[Key, ...] = ()
) -> Fused:
    return Fused((kind, item_id), score, {"relevance": relevance}, carries=list(carries))


def test_the_best_answer_comes_first_whatever_its_score() -> None:
    ordered = best_answer_first(
        [
            _entry(ItemKind.MEMORY, 1, relevance=0.70, score=0.9),
            _entry(ItemKind.EPISODE, 2, relevance=0.95, score=0.1),
            _entry(ItemKind.MEMORY, 3, relevance=0.80, score=0.5),
        ]
    )
    assert [e.key[1] for e in ordered] == [2, 3, 1]


def test_what_holds_now_comes_before_the_old_value_it_changed() -> None:
    old = _entry(ItemKind.MEMORY, 1, 0.95, 0.2, carries=((ItemKind.MEMORY, 2),))
    new = _entry(ItemKind.MEMORY, 2, 0.60, 0.3)
    other = _entry(ItemKind.MEMORY, 3, 0.80, 0.4)
    assert [e.key[1] for e in best_answer_first([old, other, new])] == [2, 1, 3]


def test_lines_that_add_nothing_are_left_out() -> None:
    entries = [
        _entry(ItemKind.MEMORY, 1, 0.99, 0.5),
        _entry(ItemKind.EPISODE, 2, 0.97, 0.4),
        _entry(ItemKind.MEMORY, 3, 0.96, 0.3),
        _entry(ItemKind.MEMORY, 4, 0.55, 0.2),
    ]
    texts: dict[Key, str] = {
        (ItemKind.MEMORY, 1): "Hi, I'm Ada. I always deploy with Ansible, and never on Fridays.",
        (ItemKind.EPISODE, 2): "I always deploy with Ansible.",
        (ItemKind.MEMORY, 3): "The billing playbook lives in the ops repository.",
        (ItemKind.MEMORY, 4): "Our staging cluster runs on Hetzner.",
    }
    kept = adding(entries, texts)
    assert [e.key[1] for e in kept] == [1, 3, 4]  # a weak line that says something new stays
    assert entries[1].signals["covered"] == 1.0


def test_what_a_kept_line_carries_stays_however_covered() -> None:
    turn = _entry(ItemKind.EPISODE, 3, 0.99, 0.4)
    old = _entry(ItemKind.MEMORY, 1, 0.95, 0.2, carries=((ItemKind.MEMORY, 2),))
    new = _entry(ItemKind.MEMORY, 2, 0.52, 0.3)
    texts: dict[Key, str] = {
        (ItemKind.EPISODE, 3): "Big news: I live in Berlin now, we moved in May.",
        (ItemKind.MEMORY, 1): "I live in Lisbon.",
        (ItemKind.MEMORY, 2): "I live in Berlin.",
    }
    kept = adding(best_answer_first([old, turn, new]), texts)
    assert [e.key[1] for e in kept] == [3, 2, 1]
