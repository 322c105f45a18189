from __future__ import annotations

import pytest

from hermes_bowerbird.curation.gone import closed_places, gone
from hermes_bowerbird.types import MemoryType


@pytest.mark.parametrize(
    "statement, names",
    [
        ("Sad news, Casa Pepe closed down last week.", ["Casa Pepe"]),
        ("The Crown has shut for good.", ["Crown"]),
        ("Our local Tesco went out of business.", ["Tesco"]),
        ("My favourite cafe, Bean There, closed its doors in March.", ["Bean There"]),
        # a closing for the day, a rumour, a question, a denial, a pronoun
        ("The office closed early today.", []),
        ("I heard Casa Pepe might be closing down.", []),
        ("Is Casa Pepe closing down?", []),
        ("Casa Pepe is not closing down.", []),
        ("They closed down the Mill Road branch.", []),
        ('Ana said "Casa Pepe closed down" but she was joking.', []),
    ],
)
def test_closed_places(statement: str, names: list[str]) -> None:
    assert closed_places(statement) == names


@pytest.mark.parametrize(
    "item_type, item, closed",
    [
        (MemoryType.PREFERENCE, "Our favourite restaurant is Casa Pepe on Mill Road.", True),
        (MemoryType.FACT, "We go to Casa Pepe every Friday.", True),
        # another place, or who the user is
        (MemoryType.PREFERENCE, "Our favourite bakery is Pepe's Bread.", False),
        (MemoryType.IDENTITY, "I work as a waiter at Casa Pepe.", False),
        (MemoryType.TODO, "Book a table at Casa Pepe for Saturday.", False),
    ],
)
def test_a_closed_place_ends_what_names_it(item_type: MemoryType, item: str, closed: bool) -> None:
    why = gone(item_type, item, "Sad news, Casa Pepe closed down last week.")
    assert (why is not None) == closed
