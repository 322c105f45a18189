from __future__ import annotations

import pytest

from hermes_bowerbird.curation.given_up import amends, given_up, given_up_names
from hermes_bowerbird.types import MemoryType


@pytest.mark.parametrize(
    "statement, names",
    [
        ("also I cancelled Crunchyroll, I wasn't watching anything", ["Crunchyroll"]),
        ("I cancelled Netflix as well, we never watch it anymore", ["Netflix"]),
        ("They use PyCharm here so I switched from VS Code to it.", ["VS Code"]),
        ("I moved the books to Zoho Books and cancelled QuickBooks.", ["QuickBooks"]),
        ("Cancelled Disney+ today.", ["Disney+"]),
        ("We finally cancelled the Amazon Prime subscription.", ["Amazon Prime"]),
        ("I got rid of Comcast finally.", ["Comcast"]),
        ("I no longer use Evernote.", ["Evernote"]),
        ("I don't use Evernote anymore, Obsidian is better.", ["Evernote"]),
        ("We migrated away from Next.js.", ["Next.js"]),
        # a preference, a thought, a question, a plan, someone else's doing, no name
        ("I don't use Windows.", []),
        ("I might cancel Netflix.", []),
        ("Should I cancel Netflix?", []),
        ("I'm thinking of switching from Fido.", []),
        ("I'll cancel Spotify next month.", []),
        ("Netflix cancelled my favourite show.", []),
        ("My flight to Rome was cancelled.", []),
        ("I quit my job at Google.", []),
        ("I dropped Mia at school.", []),
        ('Ana said "I cancelled Netflix" but she was joking.', []),
    ],
)
def test_given_up_names(statement: str, names: list[str]) -> None:
    assert given_up_names(statement) == names


@pytest.mark.parametrize(
    "item_type, item, statement, ended",
    [
        (
            MemoryType.FACT,
            "I code in VS Code with the Python and Ruff extensions.",
            "I switched from VS Code to PyCharm.",
            True,
        ),
        (
            MemoryType.PREFERENCE,
            "I watch Netflix every evening with my wife.",
            "Cancelled Netflix today.",
            True,
        ),
        (
            MemoryType.FACT,
            "I use QuickBooks for the books.",
            "I moved the books to Zoho Books and cancelled QuickBooks.",
            True,
        ),
        (MemoryType.FACT, "I use Evernote for all my notes.", "I no longer use Evernote.", True),
        # named among others: what else it says still holds
        (
            MemoryType.FACT,
            "I pay for Spotify student ($6) and Crunchyroll ($10).",
            "I cancelled Crunchyroll.",
            False,
        ),
        (
            MemoryType.FACT,
            "I'm paying for Netflix, Disney+, Spotify and a Gymshark app.",
            "I cancelled Netflix.",
            False,
        ),
        # someone else's, another thing, who the user is, a todo
        (MemoryType.FACT, "My sister uses VS Code.", "I switched from VS Code to PyCharm.", False),
        (MemoryType.FACT, "I use VS Codium at home.", "I switched from VS Code to PyCharm.", False),
        (
            MemoryType.IDENTITY,
            "I work at Netflix as a designer.",
            "Cancelled Netflix today.",
            False,
        ),
        (MemoryType.TODO, "I need to pay the Netflix bill.", "Cancelled Netflix today.", False),
    ],
)
def test_a_thing_given_up_ends_what_the_user_said_of_it(
    item_type: MemoryType, item: str, statement: str, ended: bool
) -> None:
    assert (given_up(item_type, item, statement) is not None) == ended


@pytest.mark.parametrize(
    "statement, drug",
    [
        ("The doctor switched me from metformin to sitagliptin", "metformin"),
        ("Dr took me OFF metformin!! a1c is normal now", "metformin"),
        ("I had to stop the rosuvastatin too, still aches.", "rosuvastatin"),
        ("He's swapping the metformin for sitagliptin", "metformin"),
        ("Saw Dr Okoro, she stopped the metformin.", "metformin"),
        ("The doctor switched my metformin to sitagliptin.", "metformin"),
    ],
)
def test_a_drug_the_user_was_taken_off_ends_its_memory(statement: str, drug: str) -> None:
    assert given_up_names(statement) == [drug]
    assert given_up(MemoryType.FACT, f"I take {drug} 500mg twice a day.", statement) is not None
    # a memory of two drugs still says the other one is taken
    both = f"I'm on {drug} 500 mg twice daily and atorvastatin 20 mg at night"
    assert given_up(MemoryType.FACT, both, statement) is None


def test_a_drug_only_thought_of_stopping_is_not_given_up() -> None:
    assert given_up_names("I might stop the metformin") == []
    assert given_up_names("He's swapping the metformin for sitagliptin next month") == []


def test_a_drug_of_someone_elses_the_doctor_stopped_is_not_given_up() -> None:
    assert given_up_names("My son's doctor stopped the ritalin.") == []
    assert given_up_names("The GP is swapping the metformin for sitagliptin for my dad.") == []


def test_a_drug_the_doctor_started_the_user_on_ends_when_they_are_switched_from_it() -> None:
    started = "Dr. Okafor at the Spring Garden clinic started me on amlodipine 5mg once a day."
    switched = "Because of the ankles she switched me from amlodipine to perindopril 4mg."
    assert given_up(MemoryType.FACT, started, switched) is not None


def test_a_thing_given_up_among_others_amends_the_memory_that_lists_them() -> None:
    both = "I take metformin and atorvastatin every morning."
    switched = "The doctor switched my atorvastatin to rosuvastatin."
    assert given_up(MemoryType.FACT, both, switched) is None
    assert amends(MemoryType.FACT, both, switched)
    assert amends(MemoryType.FACT, "I pay for Spotify and Crunchyroll.", "I cancelled Crunchyroll.")
    # named alone it ends the memory; not named, or not the user's, it amends nothing
    assert not amends(MemoryType.FACT, "I take atorvastatin 20mg at night.", switched)
    assert not amends(MemoryType.FACT, "I take metformin and ramipril.", switched)
    assert not amends(MemoryType.TODO, both, switched)


def test_a_thing_traded_in_for_another_is_given_up() -> None:
    assert given_up_names("Traded the Golf in for a Kia EV6.") == ["Golf"]
    assert given_up_names("We part-exchanged the Corsa for a Yaris.") == ["Corsa"]
    assert given_up(MemoryType.FACT, "I drive a 2015 Golf.", "I traded the Golf in for a Kia EV6.")
