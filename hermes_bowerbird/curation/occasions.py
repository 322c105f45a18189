"""Occasions (holidays and the like) and the greetings that wish them: capitalised like names, yet neither people
nor places ("Happy New Year", "Merry Christmas, Anna", "Black Friday", "Happy Birthday Tom")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_bowerbird.text import normalise_entity

# as `normalise_entity` keys them: lower case, no possessive at the end ("Valentine's" -> "valentine")
OCCASIONS = frozenset(
    {
        "new year",
        "new year's eve",
        "new year's day",
        "lunar new year",
        "chinese new year",
        "christmas",
        "christmas eve",
        "christmas day",
        "xmas",
        "easter",
        "easter sunday",
        "easter monday",
        "good friday",
        "thanksgiving",
        "halloween",
        "valentine",
        "valentine's day",
        "valentines day",
        "mother's day",
        "mothers day",
        "father's day",
        "fathers day",
        "independence day",
        "fourth of july",
        "labor day",
        "labour day",
        "memorial day",
        "veterans day",
        "boxing day",
        "st. patrick's day",
        "st patrick's day",
        "saint patrick's day",
        "mardi gras",
        "diwali",
        "holi",
        "hanukkah",
        "chanukah",
        "passover",
        "ramadan",
        "eid",
        "eid al-fitr",
        "eid al-adha",
        "rosh hashanah",
        "yom kippur",
        "kwanzaa",
        "black friday",
        "cyber monday",
        "happy hour",
    }
)
_LONGEST = max(len(o.split()) for o in OCCASIONS)
_FIRST_WORDS = frozenset(normalise_entity(o.split()[0]) for o in OCCASIONS)
# words that open a greeting ("Happy ...", "Merry ...", "Congrats Maria")
GREETINGS = frozenset({"happy", "merry", "congrats", "congratulations"})
# what a greeting wishes before the name of whom it is for ("Happy Birthday Tom"): not a name of its own
WISHES = frozenset(
    {"birthday", "bday", "anniversary", "holidays", "holiday", "graduation", "retirement"}
)

# occasions of several words in running text, so a tool's name inside one ("Black Friday") is not read as the tool
OCCASION_PHRASE = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(
        re.escape(o).replace(r"\ ", r"\s+").replace("'", "['’]")
        for o in sorted((o for o in OCCASIONS if " " in o), key=len, reverse=True)
    )
    + r")(?:['’]s)?(?![\w-])",
    re.IGNORECASE,
)


def find_occasion(words: Sequence[str]) -> tuple[int, int] | None:
    """Where in a run of capitalised words an occasion is named, as (start, end) word indices: the first one, at
    its longest ("New Year's Eve" over "New Year"); None when no run of them names one."""
    for start in range(len(words)):
        if normalise_entity(words[start]) not in _FIRST_WORDS:
            continue  # (and the name starts after its article: "The Christmas Market")
        for end in range(min(len(words), start + _LONGEST), start, -1):
            if normalise_entity(" ".join(words[start:end])) in OCCASIONS:
                return start, end
    return None


def greeting_length(words: Sequence[str]) -> int:
    """How many of the first words greet or wish ("Happy Birthday" of "Happy Birthday Tom", "A Happy" of "A Happy
    New Year"): 0 when the run opens with no greeting. A wish counts only after a greeting ("Birthday Party" is no
    greeting)."""
    lowered = [w.lower().strip(",!") for w in words]
    count = 1 if lowered[:1] in (["a"], ["the"]) and lowered[1:2] and lowered[1] in GREETINGS else 0
    while count < len(lowered) and lowered[count] in GREETINGS:
        count += 1
    if count:
        while count < len(lowered) and lowered[count] in WISHES:
            count += 1
    return count
