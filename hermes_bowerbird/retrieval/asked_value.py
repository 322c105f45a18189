"""The kind of value a question asks for, where the kind shows in a text's form, and whether an item holds one.

"How much did I pay for my car?" asks for an amount; "I drive a Golf" holds none, so it is a near miss however
close it stands (the same car, another fact of it). So are a way to reach someone without a number or an address,
an age without a number, and a time without any word of when for "when is ...?". The prefetch gate does not inject
such an item unasked; search still ranks it. A question of when something happened ("when did I ...?") is not
read: the date a turn was told is its answer.
"""

from __future__ import annotations

import re

from ..text import DIGIT_WORDS, MONTHS_BUT_MAY, WEEKDAY_STEMS

_I = re.IGNORECASE

_NUMBER_WORDS = "|".join(
    (
        *DIGIT_WORDS,
        "zero|ten|eleven|twelve|a\\s+dozen|dozen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety",
        "hundred|thousand|million|billion|grand|half|quarter|double|twice|free|nothing",
    )
)
# a number that is not a year ("a 2016 Skoda" gives no price), a currency sign, or a number said in words
_AMOUNT = re.compile(rf"(?<!\d)(?!(?:19|20)\d\d(?!\d))\d|[£$€¥₹]|\b(?:{_NUMBER_WORDS})\b", _I)
# a number to call, or an address to write to (redacted ones count: the item held one)
_REACH = re.compile(r"\d{3}|@|\[REDACTED", _I)
_AGE = re.compile(rf"\d|\b(?:{_NUMBER_WORDS}|born|teens?|teenager|toddler|baby|newborn)\b", _I)
_TIME = re.compile(
    rf"\d|\b(?:{WEEKDAY_STEMS})days?\b|\b(?:{MONTHS_BUT_MAY}|may|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b|"
    r"\b(?:every|each|daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annual(?:ly)?|morning|mornings|"
    r"afternoons?|evenings?|nights?|noon|midday|midnight|tonight|tomorrow|today|weekends?|weekdays?|week|month|year|"
    r"spring|summer|autumn|fall|winter|christmas|easter|holidays?|term|soon|later|next|first|last|before|after|"
    r"until|till|by|since|ago|o['’]clock|dawn|dusk|lunch(?:time)?|dinner(?:time)?|breakfast|bedtime|once|twice|"
    rf"always|never|usually|often|end\s+of|start\s+of|beginning\s+of|half\s+term|(?:{'|'.join(DIGIT_WORDS)}))\b",
    _I,
)

# each kind: how a question asks for it, and what an item holding one shows
_KINDS = (
    (re.compile(r"\bhow\s+much\b", _I), _AMOUNT),
    (
        re.compile(
            r"\b(?:phone|mobile|cell|telephone|contact)\s+(?:number|no\.?)|\bnumber\s+(?:for|to\s+call)\b|"
            r"\be-?mail\s+address\b|['’]s\s+e-?mail\b|\be-?mail\s+(?:for|of)\b",
            _I,
        ),
        _REACH,
    ),
    (re.compile(r"\bhow\s+old\b", _I), _AGE),
    (
        re.compile(
            r"^\W*(?:(?:and|so|ok(?:ay)?|remind\s+me)[\s,]+)?(?:when(?:['’]s|\s+(?:is|are|does|do|will|should|can|"
            r"shall|must))|what\s+(?:time|day|date)\s+(?:is|are|does|do|will|should))\b",
            _I,
        ),
        _TIME,
    ),
)


def asked_value(question: str) -> re.Pattern[str] | None:
    """What an item answering `question` must show, when the question asks for a kind of value its form shows."""
    return next((holds for asks, holds in _KINDS if asks.search(question)), None)


# a text longer than this is not read (it is never said to lack the value): a long turn almost always holds a number
# or a word of time somewhere, and reading it costs ~6 ms per 25,000 characters
MAX_READ_CHARS = 2_000


def lacks(holds: re.Pattern[str] | None, text: str) -> bool:
    """Whether `text` shows none of the value a question asks for (`asked_value`); False when it asks for none, or
    when the text is too long to read cheaply."""
    return holds is not None and len(text) <= MAX_READ_CHARS and holds.search(text) is None
