"""Completion: the user saying a thing is done closes the open todo it is about.

"Rate limiting on /sync is done, I merged it this morning" closes "TODO: add rate limiting to the /sync endpoint
before the public beta": the todo is superseded by the statement, so the bulletin no longer lists it as open and
recall ranks it below what became of it. A statement closes a todo only when all of these hold:
- it says something is done, in the past or perfect ("is done", "has been booked", "I renewed", "we shipped"),
  and nothing in it says "not yet" ("isn't done", "almost finished", "still need to", "I'll");
- the words that say so fit the todo: "done" or "finished" end any task, "renewed" only one that asked to renew
  (or the like: "rang" ends "call the plumber"), so "the proposal I submitted covers passive design" leaves
  "explain passive house principles" open;
- it is not itself a todo;
- it is close in meaning to the todo (cosine at least COMPLETION_SIMILARITY), so "I finished the quarterly report"
  leaves "call the plumber" open;
- it shares a word naming the thing with the todo ("report", "passport", "plumber"), so "I finished the annual
  budget review" leaves "finish the quarterly report" open however alike the two sentences sound.
"""

from __future__ import annotations

import re

from ..text import stem_words
from ..types import MemoryType

# measured with all-MiniLM-L6-v2 on todos and the words that close them (0.58-0.93: "Flights for Lisbon are
# booked!" / "I still need to book flights for the Lisbon trip" 0.83), against unrelated completions of the same
# shape (-0.01-0.59: "I finished the annual budget review today" / "I have to finish the quarterly report" 0.59,
# which the shared-word rule leaves open)
COMPLETION_SIMILARITY = 0.55

# words that say any task is over
_GENERIC = (
    "done|finished|completed?|sorted(?: out)?|handled|resolved|wrapped up|taken care of|took care of|dealt with|"
    "crossed off|ticked off|out of the way|got round to|got around to|managed to"
)
# words that say what was done: each closes only a todo that asked for it (the todo's words that start so)
_ECHOES: dict[str, tuple[str, ...]] = {
    "fixed": ("fix", "repair", "sort"),
    "repaired": ("repair", "fix"),
    "merged": ("merge",),
    "shipped": ("ship", "release", "launch"),
    "released": ("release", "ship", "launch", "publish"),
    "deployed": ("deploy", "ship", "release", "roll"),
    "published": ("publish", "post", "release"),
    "booked": ("book", "reserve", "schedule"),
    "scheduled": ("schedule", "book", "arrange", "set up"),
    "paid": ("pay",),
    "sent": ("send", "email", "mail", "post", "submit"),
    "posted": ("post", "send", "mail"),
    "emailed": ("email", "mail", "send", "write"),
    "submitted": ("submit", "send", "hand in"),
    "filed": ("file", "submit"),
    "signed": ("sign",),
    "renewed": ("renew",),
    "cancelled": ("cancel",),
    "canceled": ("cancel",),
    "ordered": ("order", "buy", "get"),
    "bought": ("buy", "get", "order", "purchase", "pick up"),
    "installed": ("install", "set up"),
    "replaced": ("replace", "change", "swap"),
    "returned": ("return", "send back", "take back"),
    "uploaded": ("upload",),
    "added": ("add",),
    "called": ("call", "ring", "phone"),
    "rang": ("call", "ring", "phone"),
    "phoned": ("call", "ring", "phone"),
}
_DONE_WORDS = "|".join((_GENERIC, *sorted(_ECHOES, key=len, reverse=True)))
# "... is done", "... are all booked", "... has been fixed", "... got merged"
_PASSIVE = (
    r"\b(?:is|are|was|were|'s|’s|has been|have been|'s been|’s been|got|finally got)\s+"
    rf"(?:now\s+|finally\s+|all\s+|already\s+)?(?P<passive>{_DONE_WORDS})\b"
)
# "I renewed ...", "we've shipped ...", "I finally got round to ..."
_ACTIVE = (
    r"\b(?:i|we)(?:'ve|’ve|\s+have)?\s+(?:now\s+|finally\s+|just\s+|already\s+|also\s+)*"
    rf"(?P<active>{_DONE_WORDS})\b"
)
# "Booked the flights.", "Called the plumber this morning"
_OPENING = rf"(?:^|[.!?:;]\s+)(?:just\s+|finally\s+)?(?P<opening>{_DONE_WORDS})\b"
_DONE = re.compile(rf"{_PASSIVE}|{_ACTIVE}|{_OPENING}", re.IGNORECASE)
# anything that says the task is not over yet
_NOT_YET = re.compile(
    r"\b(?:not|never|yet|almost|nearly|half|partly|partially|mostly|still (?:need|have|got|must)|"
    r"need to|have to|must|going to|gonna|will|shall|should|tomorrow|next)\b|n't\b|n’t\b|'ll\b|’ll\b",
    re.IGNORECASE,
)
# words that frame a task or its completion rather than name the task itself
_FRAME = frozenset(
    """
todo to-do task remind reminder remember need needs have has had must should will going gonna want still
later soon before after today tonight tomorrow yesterday morning afternoon evening week weekend month
finally just already also now all done finish finished complete completed sort sorted handle handled
the and for are was were this that with from into about your yours our ours their them they you
get got make made take took taken care off out way can could would
""".split()  # noqa: SIM905
)


def completion_words(text: str) -> list[str]:
    """The words by which `text` says something is done ("done", "renewed"), none when anything in it says the
    task is not over yet."""
    if _NOT_YET.search(text):
        return []
    return [next(w for w in m.groups() if w).lower() for m in _DONE.finditer(text)]


def closes(
    todo_type: MemoryType, todo: str, statement_type: MemoryType, statement: str, similarity: float
) -> bool:
    """Whether `statement` (a new memory) closes `todo` (a current memory; `similarity` their cosine)."""
    if (
        todo_type is not MemoryType.TODO
        or statement_type is MemoryType.TODO
        or similarity < COMPLETION_SIMILARITY
    ):
        return False
    said = completion_words(statement)
    lowered = todo.lower()
    echoes = [p for w in said for p in _ECHOES.get(w, ())]
    # "done" closes any task; "renewed" only one that asked to renew (or the like)
    if not any(w not in _ECHOES for w in said) and not any(
        re.search(rf"\b{re.escape(p)}", lowered) for p in echoes
    ):
        return False
    verbs = {p[:4] for p in echoes} | {w[:4] for w in said}
    return bool((_task_words(todo) & _task_words(statement)) - verbs)


def _task_words(text: str) -> set[str]:
    """Content words cut to four letters ("renew" meets "renewed", "flight" "flights"), without the framing."""
    return {w[:4] for w in stem_words(text.lower()) if w not in _FRAME}
