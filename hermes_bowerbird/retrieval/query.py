"""Query analysis: keywords, known entity names, time expressions and memory-type hints of a search query."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from .. import vocabulary as vocab
from ..curation.noise import is_trivial_prompt, statement_before_question
from ..curation.sentences import split_sentences
from ..text import DIGIT_WORDS, search_word_spans
from ..text import search_words as tokens  # the name retrieval modules use
from ..types import MemoryType, type_specs
from .languages import FOREIGN_STOP_WORDS, other_language

MAX_QUERY_CHARS = 2_000
_MAX_ENTITY_WORDS = 4
_NAME_TAIL = re.compile(r"\+\+|#(?!\w)")

STOP_WORDS = frozenset(
    """
a about above after again against all also am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each few for from
further had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn it
its itself just let me more most much my myself no nor not now of off on once only or other ought our ours
ourselves out over own same shan she should shouldn so some such than that the their theirs them themselves then
there these they this those through to too under until up very was wasn we were weren what when where which
while who whom why will with won would wouldn you your yours yourself yourselves s t d ll m re ve y ever tell
told say said know think thing things get got go going gone really please yesterday today tonight tomorrow
recently lately ago last week weeks month months year years day days morning afternoon evening night recent
latest currently current
""".split()  # noqa: SIM905
)

_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        )
    )
}
_MONTHS.update({name[:3]: num for name, num in list(_MONTHS.items()) if name != "may"})
_MONTHS["sept"] = 9
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    **DIGIT_WORDS,
    "ten": 10,
    "couple": 2,
    "few": 3,
    "several": 3,
}
_UNIT_DAYS = {"day": 1.0, "week": 7.0, "month": 30.0, "year": 365.0}

# (pattern, subjects): topics of the user's profile slots, as the curator keys them (memory.subject). They only
# apply to questions about the user (first person, or the user's own name). A key ending in ':' names a family
# of slots ("user:routine:" = every routine the store holds).
_SUBJECT_HINTS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(p, re.IGNORECASE), subjects)
    for p, subjects in (
        (
            r"\b(live[sd]?|(?<!a )(?<!for )living|location|located|based|city|town|reside\w*|address|move[ds]?|"
            r"moving|homes?|house|property|neighbou?rhood)\b",
            (vocab.RESIDENCE, vocab.HOME),
        ),
        (
            r"\b(work|works|working|job|jobs|occupation|career|profession\w*|employ\w*|company|firm|office|commut\w*|"
            r"(?:for|make|makes|making|earn|earns|earning)\s+(?:a\s+)?living|"
            r"business|practice)\b",
            (vocab.JOB, vocab.EMPLOYER, vocab.WORK_LOCATION),
        ),
        # what the user studies: "What am I studying?", "Which language am I learning?", "What's my degree in?"
        (
            r"\b(stud(?:y|ies|ying)|learning|degree|course|masters|msc|mba|phd|diploma)\b",
            (vocab.STUDIES,),
        ),
        # what the user cannot eat is part of their diet: "any dietary restriction?" asks for an intolerance too
        (
            r"\b(diet\w*|eats?|eating|food|vegan\w*|vegetarian\w*|meat)\b",
            (vocab.DIET, *vocab.FOOD_CONDITIONS),
        ),
        (
            r"\b(relationship\w*|married|marriage|wife|husband|partner|spouse|dating|girlfriend|boyfriend|divorc\w*|"
            r"single|separat\w*)\b",
            (vocab.RELATIONSHIP,),
        ),
        (r"\b(name|called)\b", (vocab.NAME,)),
        (r"\b(boss|manager|supervisor|report to|reporting to)\b", (vocab.MANAGER,)),
        (rf"\b({vocab.CONTACT_ROLES}|physio\w*)s?\b", (vocab.CONTACTS,)),
        # a contact asked for by what they do for the user: "who does my books?", "who handles my taxes?", "who
        # minds the kids?", "who cuts my hair?"
        (
            r"\bwho(?:'s|\s+is)?\s+(?:\w+\s+)?(?:does|do|did|handles?|prepares?|files?|sorts?|looks?\s+after|minds?|"
            r"watches|takes?\s+care\s+of|cuts?|fix(?:es)?|services?|treats?|sees?\s+to|cleans?|walks?)\s+"
            r"(?:my|our|the)\s+(?:books|bookkeeping|tax(?:es)?|tax\s+returns?|returns?|accounts|vat|gst|payroll|kids|"
            r"children|boys|girls|baby|hair|car|teeth|house|flat|dog|cat|garden)\b",
            (vocab.CONTACTS,),
        ),
        (r"\b(age|how old|birthday)\b", (vocab.AGE,)),
        (r"\b(grew up|hometown|originally|heritage|ethnic\w*)\b", (vocab.ORIGIN,)),
        (r"\b(religio\w*|faith|believer|church|mosque|synagogue|temple)\b", (vocab.FAITH,)),
        (r"\b(car|drive|drives)\b", (vocab.CAR,)),
        (r"\b(phone)\b", (vocab.PHONE, vocab.PHONE_NUMBER)),
        (r"\b(mobile|cell|number|reach me|call me)\b", (vocab.PHONE_NUMBER,)),
        (r"\b(kids?|child|children|sons?|daughters?)\b", (vocab.CHILDREN,)),
        (
            r"\b(hobb\w*|routines?|habits?|pastimes?|spare time|free time|for fun)\b",
            (vocab.ROUTINES, vocab.HABITS),
        ),
        (
            r"\b(health\w*|medical|medications?|doses?|dosage|illness\w*|injur\w*)\b",
            (vocab.HEALTH, vocab.MEDICATIONS),
        ),
        # its own hint: with the medical one, "what medication am I on" also drew the allergies (everyday set)
        (r"\b(allerg\w*)\b", (vocab.ALLERGIES,)),
        (r"\b(pets?|dogs?|cats?)\b", (vocab.PETS,)),
        (r"\b(weigh\w*|how heavy)\b", (vocab.WEIGHT,)),
    )
)
# "my sister", "our little girl", "my mother-in-law's": the question is about someone the user knows, so the user's
# own slots (where they live, their job, their name) are not what it asks for; only the slot the person word itself
# names is (husband -> relationship, daughter -> children).
_OTHER_PERSON = re.compile(
    r"\b(?:my|our)\s+(?:[a-z]+\s+)?((?:mother|father|brother|sister|son|daughter)-in-law|mother|mum|mom|father|dad|"
    r"parents?|brothers?|sisters?|siblings?|husband|wife|spouse|partner|sons?|daughters?|kids?|child|children|boy|"
    r"girl|baby|friends?|mate|boss|manager|colleagues?|co-?workers?|neighbou?rs?|in-laws|grand\w+|aunt|uncle|"
    r"cousins?|nephews?|nieces?|teachers?|doctor|dentist|accountant|landlord|landlady|flatmates?|roommates?)\b",
    re.IGNORECASE,
)
# "we", "our" and "us" too ("how much do we pay for Netflix?"), but not "the US"
_FIRST_PERSON = re.compile(
    r"\b(i|me|my|mine|myself|i'm|i've|i'd|we|(?!(?-i:US)\b)us|our|ours|we're|we've|we'd)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TimeWindow:
    """A half-open interval [start, end) of Unix epoch seconds; either side may be open (None)."""

    start: float | None
    end: float | None

    def contains(self, ts: float) -> bool:
        return (self.start is None or ts >= self.start) and (self.end is None or ts < self.end)


@dataclass(frozen=True)
class QueryAnalysis:
    """What a query asks for, as the candidate generators and the rescorer use it."""

    text: str
    keywords: tuple[str, ...]
    entity_ids: tuple[int, ...] = ()
    entity_names: tuple[str, ...] = ()
    window: TimeWindow | None = None
    recency: float = 0.0  # 0 = no preference, 1 = "recently": newer items should win
    type_hints: frozenset[MemoryType] = field(default_factory=frozenset)
    about_user: bool = False  # first person, or the user's own name
    # asked in the present tense with no past time ("how many guests are coming?", "what time is standup?"): what
    # is true now, so an old value's turn ranks below its successor (see `present_tense`)
    present: bool = False
    subjects: tuple[
        str, ...
    ] = ()  # profile slots (memory.subject) a question about the user asks for
    # the text to embed: the user's own name turned into first person, names put after the user's roles for
    # them ("my husband" -> "my husband Tomasz"); "" = `text`
    semantic_text: str = ""
    role_names: tuple[str, ...] = ()  # the names put after roles
    # with names put after roles, the text to embed without them (the gate reads both); else ""
    unnamed_text: str = ""
    # "who is my boss?", "what is my little girl called?": the names of the roles whose holder the question asks
    # for, and every role word of theirs ("girl", "daughter", "kid")
    names_asked: tuple[str, ...] = ()
    asked_roles: tuple[str, ...] = ()
    # asked in another language than English (retrieval/languages.py): its cosines say little, its own function
    # words are no keywords
    foreign: bool = False
    # the question alone, when the text says something before it ("I'm sorting things out today. Which club am I a
    # fan of?"); the gate reads it too (retriever.Retriever._relevant)
    asked_alone: str = ""

    @property
    def search_text(self) -> str:
        """Keywords joined for full-text search (the raw text when every word was a stop word)."""
        return " ".join(self.keywords)


def extract_keywords(text: str, drop: Collection[str] = ()) -> tuple[str, ...]:
    """Distinct content words in order; stop words, one-letter words and `drop` left out (all words kept if none
    remain)."""
    words = tokens(text[:MAX_QUERY_CHARS])
    kept = [
        w for w in words if w not in STOP_WORDS and w not in drop and (len(w) > 1 or w.isdigit())
    ]
    return tuple(dict.fromkeys(kept or words))


def match_entities(text: str, norms: Mapping[str, int]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Entities whose normalised name or alias equals a run of whole query words (longest runs first), read
    either as the words joined by spaces or as written, so names with inner punctuation match too (next.js,
    jean-luc, st. louis, c++)."""
    text = text[:MAX_QUERY_CHARS]
    spans = search_word_spans(text)
    words = [text[a:b].lower() for a, b in spans]
    used = [False] * len(words)
    ids: list[int] = []
    names: list[str] = []
    for size in range(min(_MAX_ENTITY_WORDS, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            if any(used[start : start + size]):
                continue
            joined = " ".join(words[start : start + size])
            written = _as_written(text, spans[start][0], spans[start + size - 1][1])
            for phrase in dict.fromkeys((joined, written)):
                if size == 1 and (phrase in STOP_WORDS or len(phrase) < 2):
                    continue
                entity_id = norms.get(phrase)
                if entity_id is not None:
                    used[start : start + size] = [True] * size
                    if entity_id not in ids:
                        ids.append(entity_id)
                        names.append(phrase)
                    break
    return tuple(ids), tuple(names)


def _as_written(text: str, start: int, end: int) -> str:
    """The query's own text from `start` to `end` (and a trailing "++" or "#"), lower-case, single spaces."""
    tail = _NAME_TAIL.match(text, end)
    return " ".join(text[start : tail.end() if tail else end].lower().split())


def type_hints(text: str) -> frozenset[MemoryType]:
    """The memory types whose `TypeSpec.query_hints` words the query uses ("what did we decide" -> decision)."""
    return frozenset(
        s.name for s in type_specs() if s.query_hints and _hint_pattern(s.query_hints).search(text)
    )


@functools.lru_cache(maxsize=64)
def _hint_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def subject_hints(text: str) -> tuple[str, ...]:
    """Profile slots a question names ("where do I live" -> user:residence, user:home), in pattern order.

    A question about someone the user knows ("where does my mother live") names only the slot of that person word.
    """
    other = _OTHER_PERSON.search(text)
    if other is not None:
        text = other.group(1)
    return tuple(
        dict.fromkeys(
            s for pattern, subjects in _SUBJECT_HINTS if pattern.search(text) for s in subjects
        )
    )


def expand_families(subjects: Sequence[str], known: Collection[str]) -> tuple[str, ...]:
    """Family keys ("user:routine:") replaced by the stored keys they cover, in sorted order; others kept."""
    out: list[str] = []
    for subject in subjects:
        out.extend(
            sorted(k for k in known if k.startswith(subject))
            if subject.endswith(":")
            else [subject]
        )
    return tuple(dict.fromkeys(out))


@functools.lru_cache(maxsize=4096)
def _key_words(key: str) -> tuple[str, tuple[str, ...]]:
    """A subject key's prefix and the words that name it: after the prefix, and after the family of a family's
    member ("user:contact:physio" -> ("user", ("physio",)), "project:deploy-tool" -> ("project", ("deploy",
    "tool"))). A question naming only the family ("my favourite film") names none of its members ("my favourite
    author"); the families a question asks for whole come from `subject_hints`."""
    prefix, _, rest = key.partition(":")
    family, _, member = rest.partition(":")
    return prefix, tuple(p for p in re.split(r"[:\-]", member or family) if p)


def named_subjects(
    keywords: Collection[str], known: Collection[str], about_user: bool
) -> tuple[str, ...]:
    """Stored subject keys that a query word names ("what editor ..." -> project:editor, user:editor).

    A key's words are what names it (`_key_words`: a family's member by its own words, split on '-'); a query word
    matches one when either is a prefix of the other and both have at least four letters (editor ~ editors), and a
    key of one short word ("project:ci", "user:os") when the query has that word. `user:` keys need a question about
    the user.
    """
    words = set(keywords)
    long_words = [w for w in words if len(w) >= 4]
    found = []
    for key in sorted(known):
        prefix, parts = _key_words(key)
        if prefix == "user" and not about_user:
            continue
        if (len(parts) == 1 and parts[0] in words) or any(
            w.startswith(p) or p.startswith(w) for w in long_words for p in parts if len(p) >= 4
        ):
            found.append(key)
    return tuple(found)


def self_words(text: str, self_names: Collection[str]) -> set[str]:
    """The words of `text` that name the user (whole-word runs equal to one of the normalised `self_names`)."""
    words = tokens(text[:MAX_QUERY_CHARS])
    found: set[str] = set()
    for name in self_names:
        parts = name.split()
        if parts and any(
            words[i : i + len(parts)] == parts for i in range(len(words) - len(parts) + 1)
        ):
            found.update(parts)
    return found


def analyze_query(
    text: str,
    now: float,
    entity_norms: Mapping[str, int] | None = None,
    tz: tzinfo | None = None,
    self_names: Collection[str] = (),
    known_subjects: Collection[str] = (),
    alias_names: Mapping[str, str] | None = None,
) -> QueryAnalysis:
    """Analyse `text` relative to `now` (epoch seconds, read in `tz`; the local zone when None).

    `self_names` are the user's own names (normalised). In a user's own memory every item is about the user, so
    their name carries no search information: it is dropped from keywords and entity matches, and the question
    counts as one about the user, like a first-person one ("what is Marcus's diet" = "what is my diet").

    `alias_names` maps the roles the user gave people to their names ("husband" -> "Tomasz"): a question that
    asks about "my husband" searches for Tomasz too, by keyword and by meaning (see `name_roles`).
    """
    text = question_core(text[:MAX_QUERY_CHARS])
    own = self_words(text, self_names)
    norms = entity_norms or {}
    # copying every known name costs more than the rest at 10K entities
    if any(n in norms for n in self_names):
        norms = {n: i for n, i in norms.items() if n not in self_names}
    ids, names = match_entities(text, norms)
    window, recency = parse_time(text, now, tz)
    about_user = bool(own) or _FIRST_PERSON.search(text) is not None
    semantic = first_person(text, self_names) if own else text
    unnamed = semantic
    semantic, named = name_roles(semantic, names, alias_names or {})
    alone = _asked_alone(text)
    names_asked, asked_roles = _asked_holders(alone or text, named, alias_names or {})
    foreign = other_language(tokens(text), STOP_WORDS)
    own_words = {*own, *FOREIGN_STOP_WORDS} if foreign else own
    keywords = extract_keywords(text, own_words)
    keywords += tuple(w for w in extract_keywords(" ".join(named), own) if w not in keywords)
    hinted = expand_families(subject_hints(text), known_subjects) if about_user else ()
    subjects = hinted + named_subjects(keywords, known_subjects, about_user)
    return QueryAnalysis(
        text=text,
        keywords=keywords,
        entity_ids=ids,
        entity_names=names,
        window=window,
        recency=recency,
        type_hints=type_hints(text),
        about_user=about_user,
        present=present_tense(text) and (window is None or window.end is None or window.end > now),
        subjects=tuple(dict.fromkeys(subjects)),
        semantic_text=semantic if semantic != text else "",
        role_names=named,
        unnamed_text=unnamed if named else "",
        names_asked=names_asked,
        asked_roles=asked_roles,
        foreign=foreign,
        asked_alone=alone,
    )


def _asked_alone(text: str) -> str:
    """The last sentence of `text` when it is a question said after something else; else ""."""
    sentences = split_sentences(text)
    return sentences[-1] if len(sentences) > 1 and sentences[-1].endswith("?") else ""


# what opens a question without asking anything: "Hey,", "Quick question -", "Can you remind me:", "Do you remember"
_WRAPPER_OPENING = re.compile(
    r"^(?:\W*(?:hi|hey|hello|hiya|ok(?:ay)?|so|um+|erm+|well|oh|btw|by the way|sorry|random question|"
    r"(?:a\s+|one\s+)?(?:quick|small|silly|dumb)\s+(?:question|q)|question|"
    r"(?:(?:can|could|would)\s+you\s+)?(?:please\s+)?(?:remind\s+me|tell\s+me)(?:\s+again)?(?=\s*[:,;–—-])|"
    r"(?:do|d'you)\s+you\s+(?:remember|recall)(?=\s*[:,;–—-]))\b(?![-'’]\w)[\s,.:;!?–—-]*)+",
    re.IGNORECASE,
)
# ...and what closes it: "Thanks!", "please", "cheers :)" (read in the last characters, one at a time)
_WRAPPER_CLOSING = re.compile(
    r"(?:[\s,.!]+(?:thanks|thank\s+you|thx|ta|cheers|please|pls|plz)(?:\s+(?:so\s+much|a\s+lot|in\s+advance))?|"
    r"\s*(?:[:;]-?[()DP]|[\u2600-\u27BF\U0001F300-\U0001FAFF]))[\s.!]*$",
    re.IGNORECASE,
)
_CLOSING_WINDOW = 40


# a question typed without its question mark: "which instrument am I practising"
_UNMARKED_QUESTION = re.compile(
    r"^(?:what|which|who|whom|whose|where|when|why|how|is|are|am|do|does|did|can|could|should|will|would|have|has)"
    r"\b[^?]*?[\w'’\"]$",
    re.IGNORECASE,
)


def question_core(text: str) -> str:
    """The question without the words around it that ask nothing ("Hey, quick question - which app do I use for
    notes? Thanks!" -> "which app do I use for notes?"): they would count as keywords and pull the question's
    meaning away from what it asks. A text that is nothing else is kept whole. A question typed without its mark gets
    one: the model reads "which instrument am I practising" further from its answer than the question asked."""
    core = _WRAPPER_OPENING.sub("", text, count=1).strip()
    while closing := _WRAPPER_CLOSING.search(core[-_CLOSING_WINDOW:]):
        core = core[: len(core) - len(closing.group())].rstrip()
    if _UNMARKED_QUESTION.match(core):
        core += "?"
    return core or text


def only_asks(text: str) -> bool:
    """Whether a message asks and tells nothing: read as `question_core` reads a question (without the words around
    it that ask nothing, with the mark it was typed without), each of its sentences is a question with no statement
    before it in the same sentence (extraction keeps "I'm 41 and my knee hurts" of "I'm 41 and my knee hurts, is
    that normal?"), or says nothing at all ("Thanks!"), and one of them asks."""
    sentences = split_sentences(question_core(text))
    asked = [_asks_only(s) for s in sentences]
    return any(asked) and all(
        a or is_trivial_prompt(s) for a, s in zip(asked, sentences, strict=True)
    )


def _asks_only(sentence: str) -> bool:
    core = question_core(sentence)
    return core.endswith("?") and not statement_before_question(core)


# "who is my boss?", "who's our landlord?", "what is my little girl called?", "what's my daughter's name?"
# (the role is what the question ends with: "who is my husband's favourite band?" asks something else)
_ROLE_ASKED = r"(?:my|our)\s+(?:[\w-]+\s+){0,2}?[\w-]+"
_ASKS_WHO = re.compile(
    rf"^\W*(?:who(?:['’]s|\s+is|\s+are)\s+{_ROLE_ASKED}|what(?:['’]s|\s+is)\s+(?:the\s+name\s+of\s+{_ROLE_ASKED}|"
    rf"{_ROLE_ASKED}\s+(?:called|named)|{_ROLE_ASKED}['’]s\s+name))(?:\s+again|\s+now)?\W*$",
    re.IGNORECASE,
)


def _asked_holders(
    text: str, named: Sequence[str], alias_names: Mapping[str, str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """For a question asking who holds a role of the user's, the role's names and all their role words; else
    nothing."""
    if not named or _ASKS_WHO.match(text) is None:
        return (), ()
    return tuple(named), tuple(alias for alias, name in alias_names.items() if name in named)


_PRESENT = re.compile(
    r"\b(?:is|are|am|isn't|aren't|do|does|don't|doesn't|can|should|must|will|won't)\b|\w['’]re\b|"
    # "what's", "who's", not the possessive "Caroline's"
    r"\b(?:what|who|where|when|which|how|that|it|there|here|he|she)['’]s\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:did|didn't|was|wasn't|were|weren't|had|used to|before|previously|originally|at first|first|earlier|"
    r"former(?:ly)?|old|ago|last|then|back when|until)\b",
    re.IGNORECASE,
)


def present_tense(text: str) -> bool:
    """Whether a question asks in the present tense and says nothing of the past ("which day does the babysitter
    come?", not "which day did she come?" or "what was the old rate?"). "Has" and "have" tell nothing: "how many
    dogs has Maria adopted?" asks of a past as often as of now."""
    return _PRESENT.search(text) is not None and _PAST.search(text) is None


# "my husband", "our little girl", "my closest mate": a role of the user's own, up to two words after my/our
_ROLE_LEAD = r"\b(?:my|our)\s+(?:[\w'’-]+\s+){0,2}?"


def name_roles(
    text: str, matched: Sequence[str], alias_names: Mapping[str, str]
) -> tuple[str, tuple[str, ...]]:
    """`text` with the name of each person it calls by the user's own role for them put after the role, and
    those names: "when is my husband's birthday?" -> "when is my husband Tomasz's birthday?", ("Tomasz",).

    What was said of Tomasz by name ("Tomasz's birthday is in April") shares no word with the role and little
    meaning with it. Only a role the user said is theirs ("my", "our") counts: "Melanie's husband" is someone
    else's. A name the question already gives is not added again."""
    words = set(tokens(text))
    named: list[str] = []
    for phrase in matched:
        name = alias_names.get(phrase)
        if name is None or name in named or set(tokens(name)) <= words:
            continue
        role = r"\s+".join(re.escape(w) for w in phrase.split())
        found = re.search(rf"{_ROLE_LEAD}{role}\b", text, re.IGNORECASE)
        if found is None:
            continue
        text = f"{text[: found.end()]} {name}{text[found.end() :]}"
        named.append(name)
    return text, tuple(named)


def first_person(text: str, self_names: Collection[str]) -> str:
    """`text` with the user's names turned into "my" (possessive) or "I", as the user's own turns say it."""
    for name in sorted(self_names, key=len, reverse=True):
        words = r"\s+".join(re.escape(w) for w in name.split())
        text = re.sub(rf"\b{words}(?:'s|’s)", "my", text, flags=re.IGNORECASE)
        text = re.sub(rf"\b{words}\b", "I", text, flags=re.IGNORECASE)
    return text


# -- time expressions -------------------------------------------------------------------------------------------
_RE_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple|few|several)"
    r"(?: of)? (day|week|month|year)s? ago\b"
)
_RE_PAST_N = re.compile(
    r"\b(?:last|past) (\d+|two|three|four|five|six|seven|eight|nine|ten|couple|few|several)"
    r"(?: of)? (day|week|month|year)s?\b"
)
_RE_MONTH = re.compile(
    r"\b(in|during|since|last|this|early|late|mid)?\s*("
    + "|".join(_MONTHS)
    + r")\b\.?(\s+(\d{4}))?"
)
_RECENT = re.compile(
    r"\b(recent(ly)?|lately|latest|these days|nowadays|current(ly)?|right now|newest|now)\b"
)
_MAX_SPAN_DAYS = 36_500.0  # "300 years ago" is clamped to a century


def parse_time(text: str, now: float, tz: tzinfo | None = None) -> tuple[TimeWindow | None, float]:
    """The first time expression of `text` as a window, plus a recency weight (0..1)."""
    lowered = " ".join(text.lower().split())
    local = datetime.fromtimestamp(now, tz)
    today = local.replace(hour=0, minute=0, second=0, microsecond=0)
    recency = 1.0 if _RECENT.search(lowered) else 0.0
    for parser in (_parse_relative_day, _parse_ago, _parse_past_n, _parse_calendar, _parse_month):
        try:
            window = parser(lowered, local, today)
        except (OverflowError, ValueError):  # a date outside what datetime can hold: no window
            window = None
        if window is not None:
            return TimeWindow(_ts(window[0]), _ts(window[1])), recency
    return None, recency


def _ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


_Span = tuple[datetime | None, datetime | None]


def _parse_relative_day(text: str, local: datetime, today: datetime) -> _Span | None:
    day = timedelta(days=1)
    if re.search(r"\b(last night)\b", text):
        return today - day + timedelta(hours=17), today + timedelta(hours=6)
    if re.search(r"\bday before yesterday\b", text):
        return today - 2 * day, today - day
    if re.search(r"\byesterday\b", text):
        return today - day, today
    if re.search(
        r"\bthis (morning|afternoon|evening)\b|\btoday\b|\btonight\b|\bearlier today\b", text
    ):
        return today, local + timedelta(seconds=1)
    return None


def _count(word: str) -> int:
    return min(int(word[:6]), int(_MAX_SPAN_DAYS)) if word.isdigit() else _NUMBER_WORDS.get(word, 1)


def _parse_ago(text: str, local: datetime, today: datetime) -> _Span | None:
    found = _RE_AGO.search(text)
    if not found:
        return None
    unit = found.group(2)
    center = local - timedelta(days=min(_MAX_SPAN_DAYS, _count(found.group(1)) * _UNIT_DAYS[unit]))
    if unit == "day":
        start = center.replace(hour=0, minute=0, second=0, microsecond=0)
        return start, start + timedelta(days=1)
    half = timedelta(days=_UNIT_DAYS[unit] / 2)
    return center - half, min(center + half, local + timedelta(seconds=1))


def _parse_past_n(text: str, local: datetime, today: datetime) -> _Span | None:
    found = _RE_PAST_N.search(text)
    if not found:
        return None
    span = min(_MAX_SPAN_DAYS, _count(found.group(1)) * _UNIT_DAYS[found.group(2)])
    return local - timedelta(days=span), local + timedelta(seconds=1)


def _parse_calendar(text: str, local: datetime, today: datetime) -> _Span | None:
    found = re.search(r"\b(last|this|past|previous) (week|month|year)\b", text)
    if not found:
        return None
    which, unit = found.group(1), found.group(2)
    if unit == "week":
        start = today - timedelta(days=today.weekday())
        if which == "this":
            return start, local + timedelta(seconds=1)
        return start - timedelta(days=7), start
    if unit == "month":
        start = today.replace(day=1)
        if which == "this":
            return start, local + timedelta(seconds=1)
        return (start - timedelta(days=1)).replace(day=1), start
    start = today.replace(month=1, day=1)
    if which == "this":
        return start, local + timedelta(seconds=1)
    return start.replace(year=start.year - 1), start


def _parse_month(text: str, local: datetime, today: datetime) -> _Span | None:
    for found in _RE_MONTH.finditer(text):
        prefix, name, year = found.group(1), found.group(2), found.group(4)
        if not (prefix or year):
            continue  # a bare "may" or "march" is more often a verb than a date
        month = _MONTHS[name]
        if year:
            chosen = int(year)
        else:
            chosen = local.year if month <= local.month else local.year - 1
            if prefix == "last" and month >= local.month:
                chosen = local.year - 1
        start = today.replace(year=chosen, month=month, day=1)
        end = (
            start.replace(year=chosen + 1, month=1)
            if month == 12
            else start.replace(month=month + 1)
        )
        if prefix == "since":
            return start, local + timedelta(seconds=1)
        return start, end
    return None
