"""Noise filter and trivial-prompt detection: hand-written cases and the persona signal/noise examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_bowerbird.curation.extract import extract_candidates
from hermes_bowerbird.curation.noise import (
    is_noise,
    is_trivial_prompt,
    statement_before_unmarked_question,
)

PERSONA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "persona"


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "Okay!",
        "thanks",
        "Thank you so much!",
        "Thanks, that was helpful.",
        "hi",
        "Hey there!",
        "Good morning",
        "got it",
        "Sounds good.",
        "Will do.",
        "lol",
        "👍",
        "",
        "   ",
        "Never mind, I'll figure it out.",
        "Sure, go ahead.",
        "What time does the pharmacy close?",
        "Can you explain how DNS works?",
        "Cool. Talk later.",
        "Yeah. I know.",
        "Sorry, I got sidetracked. What were we talking about?",
        "That actually sounds doable.",
        "Making this tomorrow.",
        "Right, I keep forgetting you can't do that.",
        "Google's new model is great.",
        "lol google.com",
        "Is staging at staging.acme.dev?",
        "Thanks, any ideas?",
        "ok so what do you think?",
        # asking that something be forgotten or not kept
        "hey, forget what I told you about my ex. I don't want any of that stuff about Delphine stored, it's done",
        "and please don't keep the panic attack thing either, I'd rather that not be in your memory",
        "I'd rather you didn't keep that",
        "delete that",
        # told something that is no rule for the user
        "He said no.",
        "Trump said no to the deal.",
        "Mom says don't worry about it.",
        "Python is 3 times faster now.",
    ],
)
def test_user_noise(text: str) -> None:
    assert is_noise(text)


@pytest.mark.parametrize(
    "text",
    [
        "I'm vegan.",
        "My name is Ada Lovelace.",
        "I live in Porto with my partner.",
        "I moved to Lisbon last week.",
        "We decided to use Postgres for the ledger service.",
        "Remind me to renew the domain before June 3.",
        "I hate meetings before 10am.",
        "My sister Rita is a nurse in Boston.",
        "ok, my flight to Tokyo is on the 14th",
        "Thanks! By the way, I switched jobs: I work at Acme now.",
        "Our deploy script must run the migrations before restarting the web workers, every single time.",
        "Jordan's birthday is on June 3rd.",
        "Lina's teacher is Mrs. Berg.",
        "Staging lives at staging.acme.dev.",
        "The VPN config is in ~/vpn/client.ovpn.",
        "To deploy, run make deploy-prod from the infra repo.",
        # a statement, then a question in the same sentence
        "i moved my business banking from Starling to Tide last week, what do I need to update?",
        "TODO: buy milk.",
        # a change to the user's drug, told of the doctor
        "he's swapping the atorvastatin for rosuvastatin",
        "He stopped the omeprazole.",
        "Forget the gym, I'm doing yoga now.",
        "My notes are not stored in Notion anymore, I moved to Obsidian.",
        # what the user was told to do by someone who treats or trains them, or noted as a rule
        "The dietitian says no apples, no pears, no honey",
        "gp says strictly no gluten from now on",
        "Jorge's rules: no deadlifts from the floor for six weeks",
        "Her instructions: do not sleep on the left side",
        "no rides over 2hr for a fortnight",
        # someone's age, birthday or condition, by name
        "Noémie is 17, her birthday is October 2nd.",
        "Wilf has a sesame allergy, proper one.",
        # who lives in one of the user's lets
        "Flat 1 is Radoslav Rudnev, he pays £875 a month.",
        "unit 1 - Jarrah Blundell, $540 a week, lease ends 12 April",
        # after an opening that says nothing, and in lowercase
        "btw the wedding budget is 15,000 pounds all in.",
        "Just so you know, the bins go out on Tuesdays.",
        "btw swimming is Fridays now, same time.",
    ],
)
def test_user_signal(text: str) -> None:
    assert not is_noise(text)


@pytest.mark.parametrize(
    "text, noise",
    [
        ("Meera moved to Vancouver.", False),
        ("Oh, Meera moved to Vancouver.", False),
        ("Priya started a book club.", False),  # by first name
        ("Mia's swimming moved to Sundays.", False),
        ("Meera moved.", True),  # too short to say anything
        ("Tess moved out on Sunday.", True),  # not one of the user's people
        ("Meeraj moved to Vancouver.", True),
    ],
)
def test_what_is_told_of_the_users_people_by_name_is_content(text: str, noise: bool) -> None:
    people = {"Meera", "Priya Raman", "Mia"}
    assert is_noise(text, "user", people) is noise
    assert is_noise(text, "user")  # knowing no one, each is filler


@pytest.mark.parametrize(
    "text, noise",
    [
        ("Sure! Here's what you asked for.", True),
        ("Happy to help. Let me know if you need anything else!", True),
        ("Great question?", True),
        (
            "The migration failed because the users table has a NOT NULL column without a default.",
            False,
        ),
        ("We decided to deploy the API with Fly.io and keep the worker on the old VM.", False),
    ],
)
def test_assistant_noise(text: str, noise: bool) -> None:
    assert is_noise(text, role="assistant") is noise


@pytest.mark.parametrize(
    "text, trivial",
    [
        ("/new", True),
        ("/help me", True),
        ("ok", True),
        ("thanks!", True),
        ("hey", True),
        ("Good night!", True),
        ("...", True),
        ("", True),
        ("ok so what did I decide about the database?", False),
        ("what's my sister's name?", False),
        ("hi, can you summarise yesterday's meeting?", False),
        ("Deploy the staging branch", False),
    ],
)
def test_trivial_prompt(text: str, trivial: bool) -> None:
    assert is_trivial_prompt(text) is trivial


def _persona_examples() -> tuple[list[str], list[str]]:
    path = PERSONA / "ground_truth.json"
    if not path.exists():
        pytest.skip("persona data not available")
    truth = json.loads(path.read_text())
    return [e["text"] for e in truth["signal_examples"]], [
        e["text"] for e in truth["noise_examples"]
    ]


def test_persona_signal_and_noise_examples() -> None:
    signal, noise = _persona_examples()
    true_noise = sum(is_noise(t) for t in noise)
    false_noise = sum(is_noise(t) for t in signal)
    precision = true_noise / max(1, true_noise + false_noise)
    recall = true_noise / len(noise)
    signal_kept = 1 - false_noise / len(signal)
    print(f"noise precision={precision:.2f} recall={recall:.2f} signal kept={signal_kept:.2f}")
    assert precision >= 0.9
    assert recall >= 0.85


@pytest.mark.parametrize(
    "sentence, head",
    [
        (
            "My student loan is like 1900 a term how do I budget this.",
            "My student loan is like 1900 a term.",
        ),
        (
            "I got like 22 months left on the civic should I refinance",
            "I got like 22 months left on the civic.",
        ),
        (
            "I usually snack around 3-4 pm, do you have any snack ideas",
            "I usually snack around 3-4 pm.",
        ),
        # no statement before it, or a question all along
        ("how do I budget this", ""),
        ("Do you think I can use my old ID or do I need to update it", ""),
        ("I know what you mean", ""),
    ],
)
def test_a_question_asked_without_its_mark_is_left_out(sentence: str, head: str) -> None:
    assert statement_before_unmarked_question(sentence) == head


def test_the_statement_before_an_unmarked_question_is_the_memory() -> None:
    found = extract_candidates("My student loan is like 1900 a term how do I budget this.", "Ok.")
    assert [c.content for c in found] == ["My student loan is like 1900 a term."]


def test_a_blood_pressure_reading_of_the_morning_is_content() -> None:
    assert not is_noise("152/94 this morning, pulse 78.")
    assert is_noise("that was this morning")  # a moment's remark stays noise
