"""A question in another language than English: told by its function words, judged by its keywords, and a memory in
its language is not injected for sharing the language alone."""

from __future__ import annotations

import json

import pytest

from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.retrieval.languages import other_language
from hermes_bowerbird.retrieval.query import STOP_WORDS, analyze_query, tokens

NOW = 1_790_000_000.0


@pytest.mark.parametrize(
    ("question", "foreign"),
    [
        ("Wer ist mein Chef?", True),
        ("¿Dónde trabajo?", True),  # one question word of its own, no English
        ("¿Cómo se llama mi hija?", True),
        ("Quel vélo est-ce que j'ai ?", True),
        ("Dove lavoro?", True),
        ("Who is my boss?", False),
        ("Where did I park the van?", False),  # "van" is Dutch too
        ("die hard sequel", False),
        ("What did Ana say about la Sagrada Familia?", False),  # a name in another language
        ("NAS backup location", False),
    ],
)
def test_another_language_is_told_by_its_function_words(question: str, foreign: bool) -> None:
    assert other_language(tokens(question), STOP_WORDS) is foreign
    assert analyze_query(question, NOW).foreign is foreign


def test_its_function_words_are_no_keywords() -> None:
    assert analyze_query("¿Cómo se llama mi hija?", NOW).keywords == ("llama", "hija")
    assert analyze_query("Wer ist mein Chef?", NOW).keywords == ("chef",)
    # an English question keeps its words, whatever other languages call them
    assert "van" in analyze_query("Where did I park the van?", NOW).keywords


@pytest.fixture
def told(chat: BowerbirdProvider) -> BowerbirdProvider:
    engine = chat.engine
    assert engine is not None
    for n, said in enumerate(
        (
            "Mi hija se llama Lucía y es alérgica a los cacahuetes.",
            "Mein Zahnarzt heißt Dr. Weber und seine Praxis ist in der Schillerstraße.",
            "Notre propriétaire s'appelle Henrik.",
            "My favourite beer is Kozel, the dark one.",
        )
    ):
        chat.sync_turn(said, "Noted.", session_id=f"s{n}")
    assert engine.flush(60)
    return chat


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("¿A qué es alérgica mi hija?", "cacahuetes"),
        ("Wie heißt mein Zahnarzt?", "Weber"),
        ("Comment s'appelle notre propriétaire ?", "Henrik"),
        ("What beer do I like?", "Kozel"),
    ],
)
def test_a_question_in_the_memorys_language_gets_it(
    told: BowerbirdProvider, question: str, answer: str
) -> None:
    told.on_session_switch(f"ask-{answer}", reset=True)
    assert answer in told.prefetch(question)


@pytest.mark.parametrize(
    "question",
    [
        "¿Cuál es la capital de Francia?",
        "¿Cuántos años tiene mi hermano?",
        "Wer ist mein Chef?",
        "Quelle est la hauteur de la tour Eiffel ?",
    ],
)
def test_sharing_a_language_is_no_reason_to_inject(told: BowerbirdProvider, question: str) -> None:
    told.on_session_switch(f"other-{len(question)}", reset=True)
    assert told.prefetch(question) == ""
    found = json.loads(told.handle_tool_call("bowerbird_recall", {"query": question}))
    assert "results" in found  # asked outright, search still answers with what it has
