"""Changes of time: a statement that something moved to a new time supersedes the memory that gave the old one.

"The standup moved to 10am starting next week." replaces "Our team standup is at 9:30 every weekday.", and "The
dentist appointment was pushed to Friday." replaces "My dentist appointment is on Thursday at 3pm.", so the
bulletin and recall stop giving a time that no longer holds. The statement must say the thing moved ("moved to",
"pushed back to", "rescheduled for", "is now at") and give a time; the memory it replaces must give one too and be
no todo ("call the plumber on Tuesday" is not done by being moved); the two must be close in meaning (cosine at
least `CHANGE_SIMILARITY`) and share a word naming the thing ("standup", "dentist"), times and framing aside, so
"The launch moved to May" leaves "Our standup is at 9:30" alone however alike two schedules sound. A plan or a
question ("we might move the standup to 10", "should we move it?") changes nothing.
"""

from __future__ import annotations

import re

from ..text import stem_words
from ..types import MemoryType

# Cosines measured with all-MiniLM-L6-v2: a meeting, class or appointment and the word that it moved 0.54-0.93
# ("The standup moved to 10am starting next week." / "Our team standup is at 9:30 every weekday." 0.69); another
# schedule's move 0.12-0.56, where the one at 0.56 ("The recycling pickup moved to Wednesday." / "The garbage is
# collected on Mondays.") shares no word and stays.
CHANGE_SIMILARITY = 0.5

_I = re.IGNORECASE
_DAY = r"mon|tues|wednes|thurs|fri|satur|sun"
_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
# a time of day, a weekday, or a date
_WHEN = re.compile(
    rf"\b\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{{1,2}}[:.]\d{{2}}\b|\b(?:noon|midday|midnight)\b|"
    rf"\b(?:{_DAY})days?\b|\bweekdays?\b|\b(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|"
    rf"\bthe\s+\d{{1,2}}(?:st|nd|rd|th)\b",
    _I,
)
# said to have moved: "moved to", "got pushed back to", "was rescheduled for", "is now at"
_MOVED = re.compile(
    r"\b(?:moved|moving|pushed(?:\s+(?:back|out|forward))?|postponed|rescheduled|brought forward|bumped|"
    r"shifted|changed|switched|delayed)\s+(?:\w+\s+){0,2}?(?:to|till|until|for|into|on|at)\b|"
    r"\b(?:is|are|'s|’s)\s+now\s+(?:at|on|from|every|in)\b|\bnow\s+(?:starts?|runs?|happens?|takes place)\b",
    _I,
)
# a move only thought about or asked about
_UNSETTLED = re.compile(
    r"\?|\b(?:might|may be|maybe|perhaps|probably|could|should|would|thinking (?:of|about)|considering|"
    r"want(?:s|ed)? to|plan(?:s|ning)? to|hoping to|trying to|if|unless|think|guess|not sure)\b",
    _I,
)
# words that frame a schedule rather than name what is scheduled
_FRAME = frozenset(
    """
moved moving push pushed back out forward postponed rescheduled brought bumped shifted changed switched delayed
starting starts start from now every each week weeks next this last today tomorrow tonight morning afternoon
evening day days weekday weekdays weekend time times until till instead the and for are was were our your their
its has have had been got get will into onto that with from also just again anymore
""".split()  # noqa: SIM905
)
_TIME_WORD = re.compile(rf"^(?:\d.*|am|pm|noon|midday|midnight|(?:{_DAY})days?|{_MONTH})$", _I)


def says_changed(text: str) -> bool:
    """Whether `text` says something now happens at another time ("The standup moved to 10am")."""
    return (
        _MOVED.search(text) is not None
        and _WHEN.search(text) is not None
        and not _UNSETTLED.search(text)
    )


def change(item_type: MemoryType, item: str, statement: str, similarity: float) -> str | None:
    """Why `statement` (a new memory) replaces the time `item` (a current one; `similarity` their cosine) gave, or
    None."""
    if item_type is MemoryType.TODO or similarity < CHANGE_SIMILARITY:
        return None
    if not _WHEN.search(item) or not says_changed(statement):
        return None
    shared = _thing_words(item) & _thing_words(statement)
    return "changed: a new time for the same thing" if shared else None


def _thing_words(text: str) -> set[str]:
    """Content words naming what is scheduled, cut to four letters, without times and framing."""
    return {w[:4] for w in stem_words(text.lower()) if w not in _FRAME and not _TIME_WORD.match(w)}
