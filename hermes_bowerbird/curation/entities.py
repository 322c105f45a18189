"""Spot named entities in a turn cheaply: capitalised names, known tools, @handles and quoted titles."""

from __future__ import annotations

import re
from collections.abc import Collection

from hermes_bowerbird.curation.occasions import OCCASION_PHRASE, find_occasion, greeting_length
from hermes_bowerbird.curation.sentences import split_sentences
from hermes_bowerbird.curation.tool_names import DISPLAY, EVERYDAY_WORDS, KNOWN_TOOLS
from hermes_bowerbird.text import normalise_entity

COMMON_WORDS = frozenset(
    """
a about above after again against all almost also although always am an and another any anyway are around as
at back be because been before being below between both but by can could did do does doing done down during
each either else even ever every few first for from further had has have having he her here hers herself him
himself his how however i if in into is it its itself just last later least less let like many may maybe me
might mine more most much must my myself never next no nobody none nor not nothing now of off often on once one
only or other our ours ourselves out over own perhaps please quite rather really same she should since so some
anyone anybody anything everyone everybody everything somebody noone
someone something sometimes soon still such than that the their theirs them themselves then there these they
this those though through thus to today tomorrow too under until up upon us very was we well were what when
where whether which while who whom whose why will with within without would yes yet you your yours yourself
yesterday tonight morning afternoon evening night day week month year hi hello hey thanks thank okay ok sure
yeah yep nope right alright great good nice cool fine oh ah wow well so also anyway honestly actually
basically apparently hopefully luckily sadly unfortunately finally meanwhile besides instead otherwise
made make makes making took take takes taking got get gets getting went go goes going came come comes coming
said say says saying told tell tells asked ask asks saw see sees seeing found find finds thought think thinks
felt feel feels knew know knows gave give gives put tried try tries trying started start starts finished
spent spend bought buy sold met left leave called call worked work works working walked walk ran run sat stood
looked look looks used use uses using wanted want wants needed need needs loved love loves liked hate hated
decided decide moved move lived live lives visited visit cooked cook ate eat drove drive woke wake slept sleep
spoke speak wrote write read heard hear watched watch played play helped help kept keep brought bring
dropped picked signed submitted sent received opened closed built build designed design planned plan
still already never always every just only also even maybe probably definitely totally completely literally
first second third last next other another same different whole entire half few several
monday tuesday wednesday thursday friday saturday sunday
january february march april may june july august september october november december
dear mom dad mum grandma grandpa
i'm i've i'd i'll it's that's there's we're we've we'll they're don't can't didn't won't isn't wasn't let's here's
what's he's she's you're
""".replace("’", "'").split()
)

_ARTICLES = frozenset({"the", "a", "an", "i"})
_LOWER_CONNECTORS = frozenset(
    {"of", "de", "da", "del", "van", "von", "la", "le", "the", "and", "&", "for", "du"}
)
_ORG_WORDS = frozenset(
    {
        "inc",
        "corp",
        "corporation",
        "llc",
        "ltd",
        "gmbh",
        "company",
        "co",
        "authority",
        "university",
        "college",
        "school",
        "bank",
        "labs",
        "group",
        "foundation",
        "institute",
        "committee",
        "council",
        "department",
        "agency",
        "association",
        "design",
        "studio",
        "studios",
        "partners",
        "consulting",
        "society",
        "club",
        "hospital",
        "church",
        "team",
        "firm",
        "ministry",
        "office",
        "board",
        "technologies",
        "systems",
        "solutions",
    }
)
_PLACE_WORDS = frozenset(
    {
        "city",
        "street",
        "st",
        "avenue",
        "ave",
        "road",
        "park",
        "county",
        "lake",
        "river",
        "mountain",
        "mountains",
        "island",
        "beach",
        "valley",
        "springs",
        "bay",
        "square",
        "state",
        "village",
        "district",
        "heights",
    }
)
# first words of place names ("New York", "San Diego", "Fort Worth", "South Korea"), unless the words before
# say a person ("my friend Santa Maria")
_PLACE_OPENERS = frozenset(
    {
        "new",
        "san",
        "santa",
        "los",
        "las",
        "saint",
        "st",
        "fort",
        "port",
        "mount",
        "mt",
        "cape",
        "north",
        "south",
        "east",
        "west",
    }
)
_PLACE_CONTEXT = re.compile(
    r"(?:\b(?:in|at|from|to|near|around|across|outside|visiting|visit|downtown|via|"
    r"toward|towards|into)\s+(?:the\s+)?|\b(?:in|at|from|to|near)\s+[A-Z][\w.-]*,\s+)$"
)
_PERSON_CONTEXT = re.compile(
    r"(?:\b(?:i'm|i’m|i am|name is|this is|met|meet|meeting|told|asked|texted|emailed|"
    r"thanked|named|called|with|my|his|her|our|their|mr|mrs|ms|dr|prof|uncle|aunt|"
    r"wife|husband|son|daughter|brother|sister|friend|boss|partner|colleague|"
    r"girlfriend|boyfriend|mother|father|cousin|neighbor|neighbour)\.?\s+|"
    # whom the speaker greets or thanks ("Hey Jon", "Thanks, Nate", "Happy Birthday, Tom")
    r"\b(?:hi|hey|hello|hiya|thanks|thank you|bye|goodbye|congrats|congratulations|birthday)[,!]?\s+)$",
    re.IGNORECASE,
)
_PERSON_FOLLOW = re.compile(
    r"^(?:'s|’s|\s+(?:[a-z]+ly\s+)?(?:said|says|asked|asks|told|tells|thinks|thought|"
    r"wants|wanted|"
    r"called|texted|emailed|is|was|and I|and me|loves|loved|likes|liked|"
    r"came|went|made|cried|laughed|replied|agreed|has|had))\b"
)
# how far before and after a name its context patterns look
_CONTEXT_CHARS = 80
_PROJECT_CONTEXT = re.compile(r"(?:\bproject\s+|\brepo\s+|\brepository\s+)$", re.IGNORECASE)

_CAP_SEQ = re.compile(
    r"(?<![\w@#])(?:[A-Z][\w'’&.-]*|[0-9]+[A-Z][\w-]*)(?:\s+(?:(?:of|de|da|del|van|von|la|le|the|du)\s+)?"
    r"(?:[A-Z][\w'’&.-]*))*"
)
_HANDLE = re.compile(r"(?<![\w@.])@([A-Za-z0-9_][A-Za-z0-9_.-]{1,38}[A-Za-z0-9_])")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,60})[\"”]|(?<![A-Za-z])'([^'\n]{2,60})'(?![A-Za-z])")
_TOOL_WORD = re.compile(
    r"(?<![\w.+#-])[A-Za-z][A-Za-z0-9+#.-]*[A-Za-z0-9+#]|(?<![\w.+#-])[A-Za-z](?![\w])"
)
# tools named by several words ("GitHub Actions", "vs code"), longest first; their words are not read one by one
_TOOL_PHRASE = re.compile(
    r"(?<![\w.+#-])(?:"
    + "|".join(
        re.escape(name).replace(r"\ ", r"\s+")
        for name in sorted((n for n in KNOWN_TOOLS if " " in n), key=len, reverse=True)
    )
    + r")(?![\w+#-])",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
MID_WORD_CHARS = 64  # the longest word looked for mid-sentence (names are far shorter)
# a name's first word opens with a capital or digits (`_CAP_SEQ`); only such words are looked for
_MID_TOKEN = re.compile(rf"(?<=[\w,;:])\s+([A-Z0-9]\S{{0,{MID_WORD_CHARS - 1}}})")
_BOUNDARY = re.compile(r"\b")
# what follows the speaker's "I" at the end of a capitalised run: a verb ("Black Friday I bought", "Day I was"),
# where a numeral is followed by "of" or "and" ("Elizabeth I of England", "Acts I and II")
_PRONOUN_NEXT = re.compile(r"\s+(?!(?:of|and|or)\b)[a-z]")


def _looks_like_title(quoted: str) -> bool:
    """A quoted title ("Between Places") rather than quoted speech: short, mostly capitalised, no end stop."""
    parts = quoted.split()
    if not parts or len(parts) > 6 or quoted.rstrip()[-1:] in ".!?,":
        return False
    capitalised = sum(1 for p in parts if p[:1].isupper() or p[:1].isdigit())
    return capitalised * 2 > len(parts) and parts[0][:1].isupper()


def _kind_of(name: str, before: str, after: str) -> str:
    tokens = [t.lower().strip(".,") for t in name.split()]
    if any(t in _ORG_WORDS for t in tokens[1:]):
        return "org"
    if _PROJECT_CONTEXT.search(before):
        return "project"
    if any(t in _PLACE_WORDS for t in tokens[1:]) or _PLACE_CONTEXT.search(before):
        return "place"
    said_a_person = _PERSON_CONTEXT.search(before) is not None
    if _opens_a_place(name, tokens) and not said_a_person:
        return "place"  # "New York is expensive": what follows a place reads like what follows a person
    if said_a_person or _PERSON_FOLLOW.match(after):
        return "person"
    if 2 <= len(tokens) <= 3 and all(t.isalpha() for t in tokens):
        return "person"
    return "thing"


def _opens_a_place(name: str, tokens: list[str]) -> bool:
    """A place opener and a name after it: not a day ("New Year's Eve"), not an adjective ("New York-trained")."""
    if len(tokens) < 2 or tokens[0] not in _PLACE_OPENERS or re.search(r"-[a-z]", name):
        return False
    return not any(_POSSESSIVE.sub("", t) in COMMON_WORDS for t in tokens[1:])


def _trim_sequence(words_: list[str], at_start: bool) -> list[str]:
    """Drop leading openers ("Yesterday", "The" at sentence start; articles anywhere) and trailing connectors."""
    if at_start and words_ and words_[0].lower().replace("’", "'") in COMMON_WORDS:
        words_ = words_[1:]
    while words_ and words_[0].lower() in _ARTICLES:
        words_ = words_[1:]
    while words_ and words_[-1].lower() in _LOWER_CONNECTORS:
        words_ = words_[:-1]
    return words_


def mid_sentence_words(text: str) -> frozenset[str]:
    """The capitalised words that occur in `text` after a word, comma, semicolon or colon and a space (so
    mid-sentence), found in one pass: a sentence-initial word also found there is a name ("Mateo ate two bowls. I
    asked Mateo why").

    A word is any start of such a token that ends at a word boundary, up to MID_WORD_CHARS long. Asking the whole
    text again for each sentence's first word cost time quadratic in a text of many short sentences ("Tue + Thu. "
    over and over: 13 s at 64,000 characters)."""
    found: set[str] = set()
    for m in _MID_TOKEN.finditer(text):
        token = m.group(1)
        # the character after the token decides whether its end is a boundary
        view = text[m.start(1) : m.end(1) + 1]
        found.update(
            token[: b.start()] for b in _BOUNDARY.finditer(view) if 0 < b.start() <= len(token)
        )
    return frozenset(found)


def _capitalised_names(sentence: str, mid_words: Collection[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for m in _CAP_SEQ.finditer(sentence):
        words = [(w.start() + m.start(), w.group()) for w in re.finditer(r"\S+", m.group(0))]
        occasion = _occasion(words, sentence[m.end() :])
        if occasion is None:
            found += _name(sentence, mid_words, words, m.start() == 0, m.end())
            continue
        # "Happy New Year", "Merry Christmas Anna", "On Black Friday I": the occasion, and a name beside it
        start, end, greeted = occasion
        found.append((_clean(" ".join(w for _, w in words[start:end])), "event"))
        found += _name(sentence, mid_words, words[end:], False, m.end(), greeted=greeted)
    return found


def _occasion(words: list[tuple[int, str]], after: str) -> tuple[int, int, bool] | None:
    """Where a run of capitalised words names an occasion, when it names one on its own: after nothing but a
    greeting or common words, and at the run's end ("Happy New Year", "On Black Friday I") or wished to someone
    ("Merry Christmas Anna"). A longer name with one inside ("Christmas Market", "Sam Easter") is that name.
    Returns the occasion's (start, end) word indices and whether a greeting opens the run."""
    found = find_occasion([w for _, w in words])
    if found is None:
        return None
    start, end = found
    opening = [w for _, w in words[:start]]
    greeting = greeting_length(opening)
    if any(w.lower().replace("’", "'") not in COMMON_WORDS for w in opening[greeting:]):
        return None
    tail = [w for _, w in words[end:]]
    if greeting or not tail or (len(tail) == 1 and _is_pronoun(tail[0], after)):
        return start, end, greeting > 0
    return None


def _clean(name: str) -> str:
    return _POSSESSIVE.sub("", name).strip(".,;:!?-")


def _name(
    sentence: str,
    mid_words: Collection[str],
    words: list[tuple[int, str]],
    at_start: bool,
    end: int,
    *,
    greeted: bool = False,
) -> list[tuple[str, str]]:
    """The name in a run of capitalised `words` (each with its offset in `sentence`) ending at `end`, with its
    kind; none for a run of common words, a lone word opening the sentence, or a greeting alone. A name that
    follows a greeting ("Congrats Maria", "Happy Birthday Tom") is a person's."""
    skip = greeting_length([w for _, w in words])
    greeted = greeted or skip > 0
    words = words[skip:]
    at_start = at_start and not skip
    parts = _trim_sequence([w for _, w in words], at_start)
    after = sentence[end:]
    if len(parts) > 1 and _is_pronoun(parts[-1], after):
        parts = parts[:-1]  # "On Black Friday I bought", "Tuesday I'm off"
    if not parts:
        return []
    if (
        at_start
        and len(parts) == 1
        and parts[0] == words[0][1]
        and not greeted
        and not _PERSON_FOLLOW.match(after)
        and not _POSSESSIVE.search(parts[0])
        and parts[0] not in mid_words
    ):
        return []
    name = _clean(" ".join(parts))
    # a name made only of common words is title-case chat ("Not Sure", "See You Tomorrow")
    if (
        len(name) < 2
        or all(p.lower() in COMMON_WORDS for p in name.split())
        or all(p.lower() in KNOWN_TOOLS for p in name.split())
        or " ".join(name.split()).lower() in KNOWN_TOOLS
    ):
        return []
    if name.isupper() and len(name) <= 2:
        return []
    start = next(offset for offset, w in words if w == parts[0])
    # the context patterns end at the name and reach a few words back: searching the whole sentence before
    # every name would cost time quadratic in a long sentence of names
    before = sentence[max(0, start - _CONTEXT_CHARS) : start]
    kind = "person" if greeted else _kind_of(name, before, after[:_CONTEXT_CHARS])
    if kind == "person" and (find_occasion(name.split()) or (1, 0))[0] == 0:
        kind = "thing"  # "Halloween Party", "Christmas Tree Farm": named after an occasion, not a person
    return [(name, kind)]


def _is_pronoun(word: str, after: str) -> bool:
    """Whether the last word of a capitalised run is the speaker's "I" ("Black Friday I bought"), not a numeral
    ("Elizabeth I of England"); a numeral before a verb reads as the pronoun ("World War I was" names "World
    War")."""
    word = word.replace("’", "'")
    if word in ("I'm", "I've", "I'd", "I'll"):
        return True
    return word == "I" and _PRONOUN_NEXT.match(after) is not None


def _tools(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []

    def blank(m: re.Match[str]) -> str:
        """Take a tool named by several words, and blank it out so its words are not read again one by one."""
        found.append((" ".join(m.group(0).split()), "tool"))
        return " " * len(m.group(0))

    # an occasion's words are not tools either ("Black Friday")
    unnamed = OCCASION_PHRASE.sub(lambda m: " " * len(m.group(0)), text)
    for m in _TOOL_WORD.finditer(_TOOL_PHRASE.sub(blank, unnamed)):
        word = m.group(0).rstrip(".")
        low = word.lower()
        if low in KNOWN_TOOLS and not (low in EVERYDAY_WORDS and word.islower()):
            found.append((DISPLAY.get(low, word), "tool"))
    return found


def find_entities(text: str) -> list[tuple[str, str]]:
    """(name, kind) pairs in first-seen order, one per normalised name; kind is person, place, org, tool, project,
    event (an occasion: a holiday) or thing."""
    found: list[tuple[str, str]] = []
    found += [(m.group(1), "person") for m in _HANDLE.finditer(text)]
    found += [
        (q.strip(), "thing")
        for m in _QUOTED.finditer(text)
        for q in m.groups()
        if q and _looks_like_title(q)
    ]
    found += _tools(text)
    mid_words = mid_sentence_words(text)
    for sentence in split_sentences(text):
        found += _capitalised_names(sentence, mid_words)
    seen: set[str] = set()
    unique: list[tuple[str, str]] = []
    for name, kind in found:
        key = normalise_entity(name)
        if key and key not in seen:
            seen.add(key)
            unique.append((name, kind))
    return unique
