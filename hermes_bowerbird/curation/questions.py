"""The questions a user would ask to get a memory back, written from what curation knows of it (no model needed).

A question asked later sits far from the statement that answers it for a sentence model ("Who do I report to?" and
"My manager is Priya"), while two wordings of one question sit close. So each memory is stored with a few
questions in the user's voice, and recall matches the question asked to those (retrieval/signals.py).

With a language model configured, extraction writes them (curation/llm_batch.py). Without one they come from one
table, `ASKS`: a row applies to a memory by its subject slot (vocabulary.py; a family covers its members, whose kind
fills `{kind}`), by a role its text gives someone (curation/roles.py: "my manager Priya" -> `{role}` "manager"), by
a tool it names that fills a slot (curation/tool_names.py), or by its type and words. Every memory also gets the
question its own first-person statement answers ("My daily standup is at 9:15" -> "when is my daily standup?").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .. import vocabulary as vocab
from ..types import MemoryType
from .roles import ROLE_ALIASES
from .tool_names import SLOT_OF

MAX_QUESTIONS = 6  # per memory: each is a vector searched on every recall
MAX_QUESTION_CHARS = 160
ROLE_WORDS = (
    2  # a role's words asked after: the role and its first other word ("sister", "sibling")
)


@dataclass(frozen=True)
class Asks:
    """One row of the table: which memories it applies to and the questions it writes for them.

    `by` is a subject key or family ("user:manager", "user:pet:"), "role:<word>" (a role the memory's text gives
    someone, "role:*" for any), or "type:<memory type>"; `words`, when set, is a regex the memory's text must hold.
    In the questions `{kind}` is a family member's kind ("dentist" of "user:contact:dentist") and `{role}` the role.
    """

    by: str
    questions: tuple[str, ...]
    words: str = ""


ASKS: tuple[Asks, ...] = (
    # -- who the user is
    Asks(vocab.NAME, ("what is my name?", "what should you call me?")),
    Asks(vocab.AGE, ("how old am I?", "when was I born?")),
    Asks(vocab.RESIDENCE, ("where do I live?", "which city am I in?", "what timezone am I in?")),
    Asks(vocab.HOME, ("what kind of home do I live in?",)),
    Asks(vocab.ORIGIN, ("where am I from?", "where did I grow up?")),
    Asks(vocab.FAITH, ("what is my religion?",)),
    Asks(vocab.JOB, ("what do I do for a living?", "what is my job?")),
    Asks(
        vocab.EMPLOYER, ("where do I work?", "who is my employer?", "which company do I work for?")
    ),
    Asks(vocab.WORK_LOCATION, ("where do I work from?", "where is my office?")),
    Asks(vocab.MANAGER, ("who is my manager?", "who do I report to?", "who is my boss?")),
    Asks(vocab.CONTACTS, ("who is my {kind}?", "what is my {kind}'s name?")),
    Asks(vocab.RELATIONSHIP, ("who is my partner?", "am I married?")),
    Asks(vocab.CHILDREN, ("do I have children?", "what are my kids' names?")),
    Asks(vocab.PETS, ("what is my {kind} called?", "what pets do I have?")),
    # -- how the user lives
    Asks(vocab.DIET, ("what is my diet?", "what can't I eat?")),
    Asks(vocab.ALLERGIES, ("what am I allergic to?", "what foods should I avoid?")),
    Asks(vocab.INTOLERANCES, ("what can't I eat?", "what foods don't agree with me?")),
    Asks(vocab.HEALTH, ("what health conditions do I have?", "do I have any medical issues?")),
    Asks(vocab.MEDICATIONS, ("what medication do I take?", "what am I prescribed?")),
    Asks(vocab.WEIGHT, ("how much do I weigh?",)),
    Asks(vocab.METRICS, ("what is my {kind}?",)),
    Asks(vocab.HABITS, ("what are my habits?",)),
    Asks(vocab.ROUTINES, ("what is my routine?",)),
    Asks(vocab.FAVOURITES, ("what is my favourite {kind}?",)),
    Asks(vocab.CAR, ("what car do I drive?", "what kind of car do I have?")),
    Asks(vocab.VEHICLES, ("what {kind} do I have?",)),
    Asks(vocab.PHONE, ("what phone do I have?",)),
    Asks(vocab.PHONE_NUMBER, ("what is my phone number?",)),
    Asks(vocab.BROWSER, ("which browser do I use?",)),
    Asks(vocab.OPERATING_SYSTEM, ("what operating system do I use?", "what OS is on my computer?")),
    Asks(vocab.MUSIC_APP, ("what do I listen to music on?",)),
    Asks(vocab.EMAIL, ("what is my email?",)),
    Asks(vocab.PASSWORD_MANAGER, ("which password manager do I use?",)),
    Asks(vocab.REPLY_LANGUAGE, ("what language should you answer me in?",)),
    Asks(vocab.STUDIES, ("what am I studying?", "what am I learning?")),
    # -- the user's projects and tools: each slot by its name (a slot no row names gets the one of its kind below)
    Asks(vocab.HOSTING, ("where do we host our services?",)),
    Asks(vocab.TEST_FRAMEWORK, ("how do we run our tests?",)),
    Asks(vocab.NOTES_APP, ("where do I keep my notes?",)),
    Asks(vocab.DEPLOY_TOOL, ("how do we deploy?",)),
    Asks(vocab.MONITORING, ("how do we monitor our services?",)),
    Asks(vocab.ISSUE_TRACKER, ("where do we track issues?",)),
    Asks(vocab.PROJECT, ("which {kind} do we use?", "what is our {kind}?")),
    Asks(vocab.USER, ("what is my {kind}?",)),
    # -- the people the user names by their role to them
    Asks("role:manager", ("who do I report to?",)),
    Asks("role:boss", ("who do I report to?",)),
    Asks(
        "role:*", ("who is my {role}?", "what does my {role} do?")
    ),  # the role and its first other word
    # -- by type and words
    Asks(
        f"type:{MemoryType.PREFERENCE}",
        ("how should you write to me?", "what language should you answer me in?"),
        words=rf"\b(?:{vocab.LANGUAGES})\b",
    ),
    Asks(
        f"type:{MemoryType.PREFERENCE}",
        ("which spelling should you use for me?",),
        words=r"\b(?:british|american|australian|canadian|us|uk)\s+(?:english|spelling)\b|\bspell\w*",
    ),
    Asks(
        f"type:{MemoryType.PREFERENCE}",
        ("how should you format your answers for me?",),
        words=r"\b(?:answers?|repl(?:y|ies)|responses?|bullet|format\w*|brief|concise|short|long|detail\w*)\b",
    ),
)

_ROLE_ANY = "role:*"


@dataclass(frozen=True)
class Known:
    """What curation knows of a memory: its type, text, subject slot, the entities it names, the roles its text
    gives people (name -> role words, the role first) and the roles the user gave them before."""

    type: MemoryType
    content: str
    subject: str | None = None
    entities: Sequence[str] = ()
    roles: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # the people it names whom the user calls by a role elsewhere (name -> the role: "Tomasz" -> "husband")
    called: Mapping[str, str] = field(default_factory=dict)


def questions_for(known: Known) -> tuple[str, ...]:
    """Up to MAX_QUESTIONS questions in the user's voice that `known` answers, each once, best first: those of its
    slots' own rows, its roles and its type, the question its first sentence answers, then its slots' kind."""
    slots = _slots(known)
    found = [q for row, fills in _rows_for(known, slots) for q in _filled(row, fills)]
    found += stated_questions(known.content, {**known.called, **_first_roles(known.roles)})
    found += [q for row, fills in _kind_rows(slots) for q in _filled(row, fills)]
    return tuple(dict.fromkeys(q for q in found if q))[:MAX_QUESTIONS]


def _first_roles(roles: Mapping[str, Sequence[str]]) -> dict[str, str]:
    return {name: aliases[0] for name, aliases in roles.items() if aliases}


def _slots(known: Known) -> list[str]:
    """Its subject slot, then those the tools it names fill."""
    slots = [known.subject] if known.subject else []
    slots += [SLOT_OF[e.lower()] for e in known.entities if e.lower() in SLOT_OF]
    return list(dict.fromkeys(slots))


def _rows_for(known: Known, slots: Sequence[str]) -> Iterable[tuple[Asks, Mapping[str, str]]]:
    """The rows that apply to a memory, with what fills their blanks: its slots' own rows, then its roles' (each role
    and its first other word: "sister", "sibling"), then its type's."""
    for slot in slots:
        row = _slot_row(slot)
        if row is not None:
            yield row, {"kind": _kind(slot, row.by)}
    for aliases in known.roles.values():
        for role in list(aliases)[:ROLE_WORDS]:
            for row in ASKS:
                if row.by in (f"role:{role}", _ROLE_ANY):
                    yield row, {"role": role}
    for row in ASKS:
        if row.by == f"type:{known.type}" and re.search(row.words, known.content, re.IGNORECASE):
            yield row, {}


def _kind_rows(slots: Sequence[str]) -> Iterable[tuple[Asks, Mapping[str, str]]]:
    """The row of each slot's kind, the slot's name filling it: a project's always ("which issue tracker do we
    use?"), the user's only for a slot no row names (a family member's name alone says little: "penicillin")."""
    for slot in slots:
        prefix = slot[: slot.find(":") + 1]
        if prefix == vocab.USER and _slot_row(slot) is not None:
            continue
        row = next((r for r in ASKS if r.by == prefix), None)
        if row is not None:
            yield row, {"kind": _kind(slot, slot[: slot.rfind(":") + 1])}


def _kind(slot: str, covered: str) -> str:
    """What a slot names past the key or family that covers it ("dentist" of "user:contact:dentist"; "issue
    tracker" of "project:issue-tracker" past "project:")."""
    return slot[len(covered) :].replace("-", " ").replace(":", " ").strip()


def _slot_row(slot: str) -> Asks | None:
    """The row of a subject key: the key's own, else the narrowest family's that covers it."""
    declared = vocab.declared(slot)
    if declared is None:
        return None
    return next((row for row in ASKS if row.by == declared.key), None)


def _filled(row: Asks, fills: Mapping[str, str]) -> list[str]:
    return [_fill(q, fills) for q in row.questions]


def _fill(question: str, fills: Mapping[str, str]) -> str:
    if ("{kind}" in question and not fills.get("kind")) or (
        "{role}" in question and not fills.get("role")
    ):
        return ""
    return question.format(kind=fills.get("kind", ""), role=fills.get("role", ""))


# -- the question a first-person statement answers --------------------------------------------------------------
_LEAD = r"^(?:(?:by the way|btw|fyi|oh|so|also|and|but|well|honestly|actually)[,\s]+)*"
# "my daily standup is at 9:15", "our production database runs on Aurora"
_OWNED = re.compile(
    _LEAD
    + r"(?P<owner>my|our|[A-Z][\w-]+(?:\s+[A-Z][\w-]+)?['’]s)\s+(?P<thing>(?:[a-z][a-z'-]*\s+){0,2}[a-z][a-z'-]*)\s+"
    r"(?P<verb>is|are|was|runs|lives|works|uses|goes|starts|happens)\b\s*(?P<rest>.*)",
    re.IGNORECASE,
)
# "I drive a blue Tesla", "we usually go to bed around 11", "I'm training for the Berlin marathon"
_DOING = re.compile(
    _LEAD
    + r"(?P<who>i|we)(?P<be>['’]m|\s+am|['’]re|\s+are|\s+was|\s+were|['’]ve\s+been|\s+have\s+been)?\s+"
    r"(?:(?:usually|always|mostly|often|normally|really|still|now|currently|also)\s+)*"
    r"(?P<verb>[a-z]+)\b\s*(?P<rest>.*)",
    re.IGNORECASE,
)
_PLACE = re.compile(r"^(?:in|at|on|from|near|to)\s+(?:the\s+)?[A-Z]")
_TIME = re.compile(
    r"^(?:(?:at|around|by|from|on|every|each|until|before|after)\s+\d|\d{1,2}(?::\d{2}|\s*(?:am|pm))\b|"
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|weekend|morning|evening|night|"
    r"january|february|march|april|may|june|july|august|september|october|november|december)s?\b)",
    re.IGNORECASE,
)
_WHEN = re.compile(
    r"\b(?:at|around|by|from|until|before|after|on)\s+(?:the\s+)?\d|\b(?:monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|weekdays?|weekends?|january|february|march|april|may|june|july|august|september|"
    r"october|november|december)\b",
    re.IGNORECASE,
)
# the things a person is to the user, asked after with "who"
_PERSON_WORDS = re.compile(
    rf"\b(?:{'|'.join(map(re.escape, ROLE_ALIASES))}|{vocab.CONTACT_ROLES}|lead|manager|boss|supervisor|mentor|"
    r"teacher|coach|client)$",
    re.IGNORECASE,
)
_NOT_VERBS = frozenset(
    {
        "think",
        "guess",
        "mean",
        "hope",
        "wish",
        "feel",
        "know",
        "have",
        "had",
        "was",
        "were",
        "will",
        "would",
        "never",
        "much",
        "can",
        "cannot",
        "can't",
        "could",
        "should",
        "just",
        "pretty",
        "try",
        "trying",
        "do",
        "don't",
        "did",
        "didn't",
        "get",
        "got",
        "want",
        "need",
        "like",
        "love",
        "hate",
    }
)
# where the first clause of what follows the verb ends
_CLAUSE_END = re.compile(r",|;|\s+(?:and|but|so|because|though|which|who)\b", re.IGNORECASE)
_PREPOSITIONS = frozenset({"for", "to", "with", "on", "in", "at", "about", "from"})


def stated_questions(content: str, called: Mapping[str, str] | None = None) -> list[str]:
    """The question the memory's first sentence answers when it tells of something of the user's ("my X is ...",
    "our X runs on ...", or of someone the user calls by a role, `called`: name -> role, "Tomasz's birthday is ..."
    -> "when is my husband's birthday?") or of what the user does ("I drive ...", "I'm training for ..."); []
    otherwise."""
    first = re.split(r"(?<=[.!?;])\s+|,\s+(?=(?:and|but|so)\b)", content.strip(), maxsplit=1)[0]
    owned = _OWNED.match(first)
    if owned is not None:
        owner = _owner(owned.group("owner"), called or {})
        return [_owned_question(owned, owner)] if owner else []
    doing = _DOING.match(first)
    if doing is not None and doing.group("verb").lower() not in _NOT_VERBS:
        return _doing_question(doing)
    return []


def _owner(said: str, called: Mapping[str, str]) -> str:
    """Whose thing it is, as the user asks: "my", "our", or "my <role>'s" for a name the user calls by a role ("" for
    anyone else's)."""
    if said.lower() in ("my", "our"):
        return said.lower()
    role = called.get(re.sub(r"['’]s$", "", said))
    return f"my {role}'s" if role else ""


def _owned_question(m: re.Match[str], owner: str) -> str:
    rest = m.group("rest")
    thing = _before_names(m.group("thing"))
    verb = m.group("verb").lower()
    if verb not in ("is", "are", "was"):
        base = {"runs": "run", "lives": "live", "works": "work", "uses": "use", "goes": "go"}.get(
            verb, verb[:-1]
        )
        if base in ("run", "use") and re.match(r"^on\b", rest):
            return f"what does {owner} {thing} run on?"
        return f"{_wh(rest)} does {owner} {thing} {base}?"
    wh = "who" if _PERSON_WORDS.search(thing) and rest[:1].isupper() else _wh(rest)
    return f"{wh} {'are' if verb == 'are' else 'is'} {owner} {thing}?"


def _before_names(thing: str) -> str:
    """The words before the first name ("wife" of "wife Hannah"), lower case."""
    words = thing.split()
    kept = [
        w for w in words[: next((i for i, w in enumerate(words) if w[:1].isupper()), len(words))]
    ]
    return " ".join(kept or words[:1]).lower()


def _wh(rest: str) -> str:
    rest = _CLAUSE_END.split(rest, maxsplit=1)[0]
    if _TIME.match(rest) or (_WHEN.match(rest) and not _PLACE.match(rest)):
        return "when"
    words = rest.split(maxsplit=1)
    if _PLACE.match(rest) and not (len(words) > 1 and _WHEN.match(words[1])):
        return "where"
    return "when" if _WHEN.search(rest) else "what"


def _doing_question(m: re.Match[str]) -> list[str]:
    who = "I" if m.group("who").lower() == "i" else "we"
    verb, rest = m.group("verb").lower(), m.group("rest")
    words = rest.split()
    particle = (
        words[0].lower() if words and words[0].lower() in ("up", "out", "off", "back") else ""
    )
    after = words[1 if particle else 0].lower() if len(words) > (1 if particle else 0) else ""
    tail = " ".join(w for w in (particle, after if after in _PREPOSITIONS else "") if w)
    tail = f" {tail}" if tail else ""
    be = " ".join((m.group("be") or "").replace("’", "'").split()).lower()
    wh = _wh(rest)
    if be in ("was", "were"):
        return [f"{wh} {be} {who} {verb}?"] if verb.endswith(("ed", "en", "rn")) else []
    if be and not verb.endswith("ing"):
        return []
    if be in ("'ve been", "have been"):
        asked = "have I been" if who == "I" else "have we been"
    elif be:
        asked = "am I" if who == "I" else "are we"
    elif verb.endswith("ed") or (verb.endswith("s") and not verb.endswith("ss")):
        return []
    else:
        asked = f"do {who}"
        mine = re.match(r"(my|our)\s+([a-z]+)\b", rest, re.IGNORECASE)
        if mine is not None:  # "I take my tea black" -> "how do I take my tea?"
            return [f"how {asked} {verb} {mine.group(1).lower()} {mine.group(2).lower()}?"]
    named = [f"what {asked} {verb}{tail}?"] if wh == "what" or (wh == "when" and tail) else []
    return named + ([f"{wh} {asked} {verb}?"] if wh != "what" else [])
