"""The user's health (allergies, conditions, medications) weighs as much as who they are: captured in passing, it
leads the bulletin's facts however many ordinary facts were told after it."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.extract import extract_candidates
from hermes_bowerbird.curation.llm_batch import parse_decisions
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import TurnCapture
from hermes_bowerbird.vocabulary import VITAL, importance_floor

SCOPE = "profile:default"
ORDINARY = [
    "Our office in Leeds has 40 desks and a rooftop garden.",
    "I drive a 2019 Skoda Octavia estate to work.",
    "Our team standup is at 9:15 every weekday morning.",
    "I bought a Brompton folding bike for the commute last spring.",
    "My neighbour Tom fixed our fence with 12 new planks.",
    "Our staging database is Postgres 15 on a box called db-stg-03.",
    "The quarterly review with Priya is on the 14th of March.",
    "I read 30 pages of a Terry Pratchett novel every night.",
    "We moved the office wifi over to Ubiquiti gear in 2023.",
    "The Leeds office closes at 7pm on Fridays for cleaning.",
    "I keep 3 backup drives for the family photos at home.",
    "Our flat has 2 bedrooms and a box room that is my study.",
]


@pytest.mark.parametrize(
    "user, subject",
    [
        ("I'm allergic to penicillin.", "user:allergy:penicillin"),
        ("I take iron tablets every morning with breakfast.", "user:medication:iron"),
        ("I have type 2 diabetes, diagnosed last year.", "user:health:diabetes"),
    ],
)
def test_health_statements_weigh_as_much_as_identity(user: str, subject: str) -> None:
    found = [c for c in extract_candidates(user, "") if c.subject == subject]
    assert found, extract_candidates(user, "")
    assert found[0].importance >= VITAL
    assert importance_floor(subject) == VITAL
    assert importance_floor("project:database") == 0.0
    assert importance_floor(None) == 0.0


def test_a_models_low_importance_for_an_allergy_is_raised() -> None:
    reply = (
        '{"decisions": [{"action": "add", "type": "fact", "content": "The user is allergic to peanuts.",'
        ' "importance": 0.3, "subject": "user:allergy:peanuts", "turn": 1}]}'
    )
    (decision,) = parse_decisions(reply, known_ids=(), turns=1)
    assert decision.candidate.importance >= VITAL


def test_an_allergy_told_first_leads_the_bulletins_facts(engine: Bowerbird) -> None:
    turns = ["I'm allergic to penicillin.", *ORDINARY]
    for index, text in enumerate(turns):
        engine.capture_turn(
            TurnCapture(text, "Noted.", scope=SCOPE, session_id="s1", turn_index=index)
        )
    engine.flush(timeout=60)
    bulletin = engine.bulletin(SCOPE, force=True, synthesise=False)
    assert bulletin is not None
    facts = bulletin.text.split("Important facts:")[1].splitlines()
    assert facts[1] == "- I'm allergic to penicillin.", bulletin.text


@pytest.mark.parametrize(
    "user, subject",
    [
        ("I take metformin every morning with breakfast.", "user:medication:metformin"),
        ("I take 20mg of lisinopril daily.", "user:medication:lisinopril"),
        ("I'm on sertraline for my anxiety.", "user:medication:sertraline"),
        ("I take ibuprofen twice a day for my back pain.", "user:medication:ibuprofen"),
        ("I started taking amitriptyline at night.", "user:medication:amitriptyline"),
        ("I take insulin at night.", "user:medication:insulin"),
        ("I take propranolol for my anxiety.", "user:medication:propranolol"),
    ],
)
def test_a_drug_and_its_schedule_are_remembered(user: str, subject: str) -> None:
    found = [c for c in extract_candidates(user, "") if c.subject == subject]
    assert found and found[0].importance >= VITAL, extract_candidates(user, "")


@pytest.mark.parametrize(
    "user",
    [
        "I take the bus every morning.",
        "I take walks every morning before work.",
        "I take online courses daily.",
        "I take my time every morning.",
        "I take the stairs daily at the office.",
    ],
)
def test_taking_what_is_no_drug_sets_no_medication(user: str) -> None:
    assert all(
        not (c.subject or "").startswith("user:medication:") for c in extract_candidates(user, "")
    )
