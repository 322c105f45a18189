"""What the user gave up by name: "I cancelled Crunchyroll" supersedes "I pay for Crunchyroll every month", "I
switched from VS Code to PyCharm" supersedes "I code in VS Code with the Ruff extension", so recall and the bulletin
stop offering a subscription, a tool or a provider the user no longer has.

The statement must say in the user's own words, not asked or hedged, that they (or "we") cancelled, quit, stopped
using, unsubscribed from, got rid of or switched from a thing named with a capital ("Netflix", "VS Code"), or no
longer use or pay for it, or that they were taken off, switched from or stopped a drug ("the doctor switched me
from metformin to sitagliptin"), which ends a memory of that drug alone. The memory it ends must be a preference
or a fact in which the user ("I", "we") says something of that thing in the same words ("My sister uses VS Code"
is hers), and must not name it in a list of others ("I pay for Spotify and Crunchyroll" still says Spotify is
paid for): such a memory stays, and the statement is kept beside it as a memory of its own, however short.
"""

from __future__ import annotations

import functools
import re

from ..types import MemoryType
from ..vocabulary import DRUG, SOMEONE_ELSES_DRUG
from .changes import STATEMENT_CACHE
from .sentences import own_words

# a thing's name: up to four words, each opening with a capital (or a digit after the first), "+" allowed
# ("Disney+"); a leading "my", "our" or "the" left out
_NAME = (
    r"(?:(?:my|our|the)\s+)?(?P<name>(?-i:[A-Z][\w'’&.+-]*)(?:\s+(?-i:[A-Z0-9][\w'’&.+-]*)){0,3})"
)
# the user, or a clause of theirs going on ("I moved the books to Zoho and cancelled QuickBooks")
_WHO = r"(?:\b(?:i|we)(?:['’]ve|\s+have)?\s+|(?:^|[,;:]\s*|\band\s+|\bso\s+))"
_WHEN = r"(?:just\s+|finally\s+|also\s+|already\s+|actually\s+|officially\s+)*"
_GAVE_UP = re.compile(
    rf"{_WHO}{_WHEN}(?:cancell?ed|quit|unsubscribed\s+from|stopped\s+(?:using|paying\s+for)|got\s+rid\s+of|"
    rf"switched\s+(?:away\s+)?from|(?:moved|migrated)\s+away\s+from)\s+{_NAME}",
    re.IGNORECASE,
)
# ...or traded in for another: "Traded the Golf in for a Kia EV6", "we part-exchanged the Corsa for a Yaris"
_TRADED_IN = re.compile(
    rf"{_WHO}{_WHEN}(?:traded|part[- ]exchanged)\s+(?:in\s+)?{_NAME}(?:\s+in)?\s+for\b",
    re.IGNORECASE,
)
# "I no longer use Evernote"; "I don't use Evernote" only with "anymore" ("I don't use Windows" is a preference)
_NO_LONGER = re.compile(
    rf"\b(?:i|we)\s+no\s+longer\s+(?:use|pay\s+for|have)\s+{_NAME}", re.IGNORECASE
)
_NOT_ANYMORE = re.compile(
    rf"\b(?:i|we)\s+(?:don['’]t|do\s+not)\s+(?:use|pay\s+for|have)\s+{_NAME}[^.!?;]{{0,80}}?\bany\s?more\b",
    re.IGNORECASE,
)
# a drug the user was taken off, switched from or stopped, named as drugs are, in lowercase: "the doctor switched me
# from metformin to sitagliptin", "dr took me OFF metformin", "I had to stop the rosuvastatin"
_TAKEN_OFF = re.compile(
    r"(?:\b(?:switched|moved|changed|took|taken|came|come|got|gone|went)\s+(?:me\s+)?(?:off|from)"
    r"|\b(?:i|we)(?:['’]ve|\s+have)?\s+(?:had\s+to\s+)?(?:stop(?:ped)?|quit)(?:\s+taking)?)"
    rf"\s+(?:the\s+|my\s+)?(?P<name>{DRUG})\b",
    re.IGNORECASE,
)
# ...or one the doctor swapped out or stopped: "he's swapping the atorvastatin for rosuvastatin", "the doctor switched
# my atorvastatin to rosuvastatin", "she stopped the omeprazole" (a drug said with "the" or "my": "his ritalin" is his)
_SWAPPED_OUT = re.compile(
    r"\b(?:(?:swapp|switch|chang|replac)(?:ed|ing)\s+(?:the|my)\s+(?P<name>"
    rf"{DRUG})\s+(?:for|with|to)\b|(?:stopped|stopping|discontinued)\s+(?:the|my)\s+(?P<stopped>{DRUG})\b)",
    re.IGNORECASE,
)
_SOMEONE_ELSES = re.compile(SOMEONE_ELSES_DRUG, re.IGNORECASE)
_A_DRUG = re.compile(rf"\b{DRUG}\b", re.IGNORECASE)
# only thought of, asked, or ahead
_UNSURE = re.compile(
    r"\?|\b(?:might|maybe|perhaps|probably|should|could|would|thinking|considering|plan(?:ning)?|want|going to|"
    r"gonna|if|unless|hope|tomorrow|next\s+(?:week|month|year|time))\b",
    re.IGNORECASE,
)
# a word one of the patterns above cannot match without
_MAY_GIVE_UP = re.compile(
    r"cancel|quit|unsubscrib|stop|rid\s+of|away\s+from|no\s+longer|any\s?more|traded|exchanged|swap|switch|chang|"
    r"replac|discontinu|\b(?:moved|took|taken|came|come|got|gone|went)\s+(?:me\s+)?(?:off|from)\b"
)  # searched in lower case: three times faster than ignoring case, on every memory a recall pools
_KINDS = (MemoryType.PREFERENCE, MemoryType.FACT)
# the user speaking of the thing: "I", "we" or "me" before it in the same sentence ("Dr. Okafor started me on
# amlodipine")
_SPEAKER = r"\b(?:i|we|me)(?:['’](?:m|ve|d|ll|re))?\b[^.!?;]*?"
# the thing named among others: "Netflix, Disney+ and Spotify", "Spotify student ($6) and Crunchyroll"
_GLUE = r"\s*(?:\([^)]*\)\s*)?(?:,|\band\b|\bor\b|&|/)\s*(?:(?:a|an|the|my|our)\s+)?"
_OTHER = r"(?-i:[A-Z])[\w'’&.+-]*"


def given_up_names(text: str) -> list[str]:
    """The names of the things `text` says, in the user's own words, they gave up ("I cancelled Crunchyroll" ->
    ["Crunchyroll"]); none from a clause that is unsure or ahead."""
    return list(_given_up_names(text))


def says_given_up(text: str) -> bool:
    """Whether `text` says, in the user's own words, that they gave up something named."""
    return bool(_given_up_names(text))


@functools.lru_cache(maxsize=STATEMENT_CACHE)  # see changes.STATEMENT_CACHE
def _given_up_names(text: str) -> tuple[str, ...]:
    # no word any pattern needs: most text, passed over at a fraction of the cost of reading it
    if not _MAY_GIVE_UP.search(text.lower()):
        return ()
    names: list[str] = []
    for clause in re.split(r"(?<=[.!;])\s+", own_words(text)):
        if not _UNSURE.search(clause):
            for pattern in (_GAVE_UP, _TRADED_IN, _NO_LONGER, _NOT_ANYMORE, _TAKEN_OFF):
                names.extend(m["name"].rstrip(".'’&-") for m in pattern.finditer(clause))
            if not _SOMEONE_ELSES.search(clause):
                names.extend(m["name"] or m["stopped"] for m in _SWAPPED_OUT.finditer(clause))
    return tuple(dict.fromkeys(names))


def given_up(item_type: MemoryType, item: str, statement: str) -> str | None:
    """Why `statement` ends `item` (a current memory), or None: the user gave up a thing the item says they have,
    use or pay for, named there alone."""
    if item_type not in _KINDS:
        return None
    if any(_named_in(item, name) == "alone" for name in _given_up_names(statement)):
        return "given up: the user no longer has it"
    return None


def amends(item_type: MemoryType, item: str, statement: str) -> bool:
    """Whether `statement` gives up a thing `item` names among others: "The doctor switched my atorvastatin to
    rosuvastatin" against "I take metformin and atorvastatin every morning", which still says metformin is taken
    but no longer holds whole."""
    return item_type in _KINDS and any(
        _named_in(item, name) == "listed" for name in _given_up_names(statement)
    )


def _named_in(item: str, name: str) -> str | None:
    """How `item` names the thing `name` as the user's: "alone", "listed" among others of its kind, or None."""
    thing = rf"(?<![\w'’]){re.escape(name)}(?![\w'’+])"
    if not re.search(rf"{_SPEAKER}{thing}", item, re.IGNORECASE):
        return None
    listed = rf"{_OTHER}(?:\s+[\w'’&.+-]+)?{_GLUE}{thing}|{thing}{_GLUE}{_OTHER}"
    # a memory of two drugs ("metformin ... and atorvastatin at night") still says the other is taken
    if re.search(listed, item, re.IGNORECASE) or any(
        d.lower() != name.lower() for d in _A_DRUG.findall(item)
    ):
        return "listed"
    return "alone"
