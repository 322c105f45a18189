"""Entity spotting and name normalisation."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.entities import find_entities, mid_sentence_words
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import TurnCapture
from hermes_bowerbird.text import normalise_entity


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I moved to Lisbon last week with my wife Ana.", {("Lisbon", "place"), ("Ana", "person")}),
        (
            "We deploy with Docker and Kubernetes on AWS.",
            {("Docker", "tool"), ("Kubernetes", "tool"), ("AWS", "tool")},
        ),
        ("ping @ada_dev about it", {("ada_dev", "person")}),
        ("I work at Rivera Sustainable Design now.", {("Rivera Sustainable Design", "org")}),
        (
            "Yesterday I met Tom at Barton Springs.",
            {("Tom", "person"), ("Barton Springs", "place")},
        ),
        ('He called the series "Between Places" on purpose.', {("Between Places", "thing")}),
        (
            "The proposal for Austin Housing Authority is due.",
            {("Austin Housing Authority", "org")},
        ),
        ("Diana said the lease is signed.", {("Diana", "person")}),
        ("I love New York.", {("New York", "place")}),  # two capitalised words were a person
        ("New York is expensive.", {("New York", "place")}),
        (
            "St Louis has a great arch, said Kanye West.",
            {("St Louis", "place"), ("Kanye West", "person")},
        ),
        (
            "My friend Santa Maria called.",
            {("Santa Maria", "person")},
        ),  # the words before say a person
        (
            "we use postgres and pytest in the project Falcon",
            {("postgres", "tool"), ("pytest", "tool"), ("Falcon", "project")},
        ),
    ],
)
def test_find_entities(text: str, expected: set[tuple[str, str]]) -> None:
    assert expected <= set(find_entities(text))


@pytest.mark.parametrize(
    "text",
    [
        "Yesterday was long. Honestly the weather was fine.",
        "The end. Then we slept.",
        "I think so. Maybe tomorrow.",
        "go to the store and get some bread",
    ],
)
def test_sentence_openers_are_not_entities(text: str) -> None:
    assert find_entities(text) == []


def test_a_sentence_opener_named_mid_sentence_elsewhere_is_a_name() -> None:
    assert find_entities("Mateo ate two bowls. I asked him why.") == []
    assert [n for n, _ in find_entities("Mateo ate two bowls. I asked Mateo why.")] == ["Mateo"]


def test_mid_sentence_words_end_at_word_boundaries() -> None:
    words = mid_sentence_words("we met Jean-Luc, then: Ana's friend;   Bo. Tom left 3M")
    assert {"Jean", "Jean-Luc", "Ana", "Ana's", "Bo", "3M"} <= words
    # "Tom" follows a full stop, so it opens a sentence; lower-case words are never a name's first word
    assert not {"Tom", "Jean-L", "then", "left"} & words


@pytest.mark.parametrize(
    "text", ["Honestly, Not Sure.", "Thanks So Much!", "OK thanks, See You Tomorrow."]
)
def test_title_case_chat_of_common_words_names_nobody(text: str) -> None:
    assert find_entities(text) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("We track tickets in Jira now.", {("Jira", "tool")}),  # not a place it was "in"
        ("I keep my passwords in Bitwarden.", {("Bitwarden", "tool")}),
        ("Our tests run on Buildkite.", {("Buildkite", "tool")}),
        ("We manage dependencies with Poetry.", {("Poetry", "tool")}),
        ("Message me on Signal.", {("Signal", "tool")}),
        ("i code in python with slack open", {("python", "tool"), ("slack", "tool")}),
        ("Our tests run on GitHub Actions now.", {("GitHub Actions", "tool")}),  # not a person
        ("I moved us to VS Code last week.", {("VS Code", "tool")}),  # not a place
        ("I listen on Apple Music.", {("Apple Music", "tool")}),
        ("we use gitlab  ci", {("gitlab ci", "tool")}),
    ],
)
def test_tools_of_every_slot_are_spotted(text: str, expected: set[tuple[str, str]]) -> None:
    assert expected <= set(find_entities(text))


@pytest.mark.parametrize(
    "text",
    [
        "I love poetry and knitting with soft yarn.",
        "We went to the coast in the spring to see the windows of the old mill.",
        "The teams meet on a safari lodge's terrace; the signal there is weak.",
    ],
)
def test_tool_names_that_are_everyday_words_need_their_capital(text: str) -> None:
    assert not [name for name, kind in find_entities(text) if kind == "tool"]


@pytest.mark.parametrize(
    "text, expected",
    [
        # an occasion is neither a person (two or three capitalised words were) nor a place
        ("Happy New Year! We had a party.", [("New Year", "event")]),
        ("A Happy New Year to all of you!", [("New Year", "event")]),
        ("Happy New Year's Eve!", [("New Year's Eve", "event")]),
        ("Thanksgiving was at my aunt's this year.", [("Thanksgiving", "event")]),
        ("See you at Christmas dinner.", [("Christmas", "event")]),
        ("It was Mother's Day so we went out.", [("Mother's Day", "event")]),
        ("Happy Hour at the office ran late.", [("Happy Hour", "event")]),
        # the speaker's "I" after it is no part of a name, and an everyday tool word inside it is no tool
        ("On Black Friday I bought a TV.", [("Black Friday", "event")]),
        (
            "Last St. Patrick's Day I was in Dublin.",
            [("St. Patrick's Day", "event"), ("Dublin", "place")],
        ),
        # whom a greeting is for is a person, and the greeting's words are no part of the name
        ("Merry Christmas Anna!", [("Christmas", "event"), ("Anna", "person")]),
        ("Happy Birthday Tom, hope it is great.", [("Tom", "person")]),
        ("Congrats Maria on the new job!", [("Maria", "person")]),
        ("Happy Birthday!", []),
        # whom the speaker greets or thanks is a person, also after a comma
        ("Happy Birthday, Tom!", [("Tom", "person")]),
        ("Hey John, I had a blast at the concert.", [("John", "person")]),
        ("It went well. Thanks, Nate!", [("Nate", "person")]),
        # a longer name with an occasion in it stays whole, and is nobody
        (
            "We went to the Christmas Market in Vienna.",
            [("Christmas Market", "place"), ("Vienna", "place")],
        ),
        ("Our Halloween Party was fun.", [("Halloween Party", "thing")]),
        ("Sam Easter is my neighbour.", [("Sam Easter", "person")]),
    ],
)
def test_occasions_and_greetings(text: str, expected: list[tuple[str, str]]) -> None:
    assert find_entities(text) == expected


def test_a_numeral_before_of_stays_in_the_name() -> None:
    names = [n for n, _ in find_entities("We read about Elizabeth I of England.")]
    assert names == ["Elizabeth I of England"]


def test_the_formatter_black_is_still_a_tool() -> None:
    assert ("Black", "tool") in find_entities("I format with Black and deploy on Friday.")


def test_entities_are_unique_by_normalised_name() -> None:
    names = [n for n, _ in find_entities("Ana said hi. I told Ana's brother. ANA?")]
    assert len([n for n in names if normalise_entity(n) == "ana"]) == 1


@pytest.mark.parametrize(
    "name, key",
    [
        ("Marcus's", "marcus"),
        ("Ana’s", "ana"),
        ("The Beatles.", "beatles"),
        ("Node.js", "node.js"),
        ("  New   York ", "new york"),
        ("C++", "c++"),
        ("@ada_dev", "@ada_dev"),
        ('"Between Places"', "between places"),
    ],
)
def test_normalise_entity(name: str, key: str) -> None:
    assert normalise_entity(name) == key


# ------------------------------------------------------------------ names with inner punctuation, end to end


@pytest.mark.parametrize(
    "told, asked, name",
    [
        (
            "We moved the marketing site to Next.js last spring.",
            "Which version of next.js is the site on?",
            "next.js",
        ),
        (
            "My manager Jean-Luc reviews every pull request.",
            "When does jean-luc review things?",
            "jean-luc",
        ),
        (
            "We drove to St. Louis for the baseball game.",
            "How long was the drive to St. Louis?",
            "st. louis",
        ),
        (
            "The billing API runs on Node.js behind nginx.",
            "Which Node.js release does billing use?",
            "node.js",
        ),
        ("Most of the firmware is written in C++ by my team.", "Who writes the C++ code?", "c++"),
    ],
)
def test_names_with_inner_punctuation_are_matched_at_query_time(
    engine: Bowerbird, told: str, asked: str, name: str
) -> None:
    engine.capture_turn(TurnCapture(told, "Noted.", scope="profile:default", session_id="s1"))
    engine.curate_now()
    norms = engine.store.graph.names_and_roles(["profile:default"])[0]
    assert name in norms
    analysis = engine.retriever.analyze(asked, ["profile:default"])
    assert norms[name] in analysis.entity_ids
