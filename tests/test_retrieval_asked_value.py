"""A question that asks for a kind of value (an amount, a number to call, an age, a time to come) is not answered,
unasked, by an item that holds none: it is a near miss however close it stands."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_bowerbird.config import load_config
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import TurnCapture
from hermes_bowerbird.retrieval import RecallRequest
from hermes_bowerbird.retrieval.asked_value import asked_value, lacks

SCOPE = "profile:default"


@pytest.mark.parametrize(
    ("question", "item", "lacking"),
    [
        (
            "How much did I pay for my car?",
            "I drive a 2016 Skoda Octavia estate.",
            True,
        ),  # a year is no price
        ("How much did I pay for my car?", "I paid £9,500 for the Skoda in 2019.", False),
        ("How much does my sister earn?", "My sister Maya is a nurse.", True),
        ("How much did the cooker cost?", "The cooker was three hundred quid.", False),
        ("What's my landlord's phone number?", "Our landlord is Henrik.", True),
        ("What's my landlord's phone number?", "Henrik's number is 07700 900123.", False),
        ("What is Sam's email address?", "Sam's is sam@example.org.", False),
        ("How old is my son?", "My son Theo loves swimming.", True),
        ("How old is my son?", "Theo turned seven in May.", False),
        ("When is my brother's birthday?", "My brother Sam lives in Leeds.", True),
        ("When is the bin collection?", "Bins go out on Tuesday nights.", False),
        ("What time does my train leave?", "I take the 7:42 from Haywards Heath.", False),
        ("So when does the pager pass on?", "The on-call rota switches every Monday.", False),
    ],
)
def test_an_item_without_the_value_asked_for_lacks_it(
    question: str, item: str, lacking: bool
) -> None:
    assert lacks(asked_value(question), item) is lacking


def test_a_long_text_is_not_read() -> None:
    long = "My brother Sam lives in Leeds. " * 100
    assert not lacks(asked_value("When is my brother's birthday?"), long)


@pytest.mark.parametrize(
    "question",
    [
        "When did I go to the support group?",  # the date the turn was told answers it
        "Which car do I drive?",
        "How do I get to work?",
        "Who is my landlord?",
        "Which phone do I have?",
        "What's my email provider?",
    ],
)
def test_a_question_asking_no_kind_of_value_lacks_nothing(question: str) -> None:
    assert asked_value(question) is None
    assert not lacks(asked_value(question), "Anything at all.")


def test_prefetch_leaves_out_a_near_miss_and_keeps_the_answer(
    tmp_path: Path, minilm: LocalEmbedder
) -> None:
    config = load_config(
        tmp_path,
        environ={"BOWERBIRD_LLM_BACKEND": "none", "BOWERBIRD_MAINTENANCE_ENABLED": "false"},
    )
    engine = Bowerbird(config, embedder=minilm, background=False)
    try:
        for n, text in enumerate(
            (
                "My car's a 2016 Skoda Octavia estate, it's been very reliable.",
                "Our landlord is a guy called Henrik, he's pretty relaxed.",
                "I'm learning the cello, my teacher is called Marguerite.",
            )
        ):
            engine.capture_turn(TurnCapture(text, "Noted.", scope=SCOPE, session_id=f"s{n}"))
        engine.curate_now()

        def gated(question: str) -> list[str]:
            request = RecallRequest(question, (SCOPE,), limit=5, min_relevance=config.prefetch_gate)
            return [h.content for h in engine.retriever.search(request, touch=False)]

        assert not any("Skoda" in c for c in gated("How much did I pay for my car?"))
        assert any("Skoda" in c for c in gated("What car do I drive?"))
        assert not any("Henrik" in c for c in gated("What's my landlord's phone number?"))
        assert any("Henrik" in c for c in gated("Who is my landlord?"))
        engine.capture_turn(
            TurnCapture(
                "My landlord's number is 07700 900123.", "Saved.", scope=SCOPE, session_id="s9"
            )
        )
        engine.curate_now()
        assert any("07700" in c for c in gated("What's my landlord's phone number?"))
    finally:
        engine.shutdown()
