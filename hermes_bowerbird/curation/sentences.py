"""Split chat text into sentences, cheaply and without a language model."""

from __future__ import annotations

import re

# what opens a sentence without saying anything: a greeting, "btw", "Big news:", "Just so you know," (extraction
# reads the sentence without it, and the noise filter what follows it)
LEADING_FILLER = re.compile(
    r"^(?:(?:so(?!\s+far\b)|well|yeah|yes|ok(?:ay)?|honestly|actually|anyway|oh(?:\s+no)?|ugh+|argh+|also|and|but|"
    r"btw|by the way|plus|right|(?:hi|hello|hey) there|hi|hello|hey|hiya|"
    r"good (?:morning|afternoon|evening)|(?:big|huge|great|good|some|exciting|sad|bad|quick) "
    r"news|news(?=\s*[:!–-])|(?:big|quick|small|another|one more|important)\s+(?:one|thing)(?=\s*[:!–-])|"
    r"important(?=\s*[:!–-])|(?:quick |small )?"
    r"update|correction|guess what|fun fact|heads up|fyi|so yeah|anyways?|scratch that|(?:no\s+)?wait|"
    r"make that|(?:just\s+)?so you know|for the record|for (?:context|reference|info|your info(?:rmation)?)|"
    r"p\.?s|(?:quick\s+)?(?:note|reminder)(?=\s*[:!–-]))\b[\s,.:!;—–-]*)+",
    re.IGNORECASE,
)

_ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "approx",
        "no",
        "fig",
        "inc",
        "ltd",
        "co",
        "corp",
        "mt",
        "ft",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "a.m",
        "p.m",
        "incl",
        "excl",
        "esp",
        "appt",
        "apt",
        "dept",
        "tel",
        "ref",
    }
)
# no statement runs longer, and one that seems to (a pasted blob without full stops) is read only this far: rules
# that look back from each match would cost time quadratic in its length (extraction, noise and the slot rules)
MAX_STATEMENT_CHARS = 2_000
# how much of a sentence's end tells whether a chunk ends it (an abbreviation, a numbered day, a date)
_END_CHARS = 64
# "she go to 1. klasse", "we have reserved the 5. September": a day or a class numbered as German or Danish write
# them, after a word and before a month or a word in lowercase (not a list's "think of: 1. what ...")
_ORDINAL_DOT = re.compile(r"\b[a-zæøåäöü]+\s+\d{1,2}\.$")
_MONTH_AHEAD = re.compile(
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", re.IGNORECASE
)
# "moved to 21.10. 13:30": a date written day.month. before a time ends no sentence
_DOTTED_DATE = re.compile(r"(?:^|\s)(?P<day>\d{1,2})\.(?P<month>\d{1,2})\.$")
# after a sentence's closing mark, the next one opens with a capital, a digit or, as people type in chat, a small
# letter ("It runs out every month. is it worth going to 15GB?"); an abbreviation before it is no end (see below)
_BOUNDARY = re.compile(
    r"(?:(?<=[.!?…])|(?<=[.!?…][\"'’”)\]]))\s+(?=[\"'“(\[]?[A-Za-z0-9¿¡])|\s*\n+\s*"
)
_LAST_WORD = re.compile(r"(?:^|\s)([A-Za-z.]+)\.$")


def split_sentences(text: str) -> list[str]:
    """Sentences of `text` in order, stripped; lines are always boundaries, abbreviations are not."""
    pieces: list[str] = []
    # the chunks of the sentence under way, and its last characters: whether a chunk ends it is read from its end
    # alone, so a run of initials ("a. a. a. ...") costs time linear in its length
    pending: list[str] = []
    end = ""
    pos = 0
    for m in _BOUNDARY.finditer(text):
        chunk = text[pos : m.start()]
        pos = m.end()
        pending.append(chunk)
        end = f"{end} {chunk}"[-_END_CHARS:] if len(pending) > 1 else chunk[-_END_CHARS:]
        if "\n" not in m.group(0) and (
            _ends_with_abbreviation(end)
            or (
                _ORDINAL_DOT.search(end)
                and (text[m.end() : m.end() + 1].islower() or _MONTH_AHEAD.match(text, m.end()))
            )
            or (_dotted_date(end) and text[m.end() : m.end() + 1].isdigit())
        ):
            continue
        sentence = " ".join(pending).strip()
        if sentence:
            pieces.append(sentence)
        pending, end = [], ""
    pending.append(text[pos:])
    sentence = " ".join(pending).strip()
    if sentence:
        pieces.append(sentence)
    return pieces


def _dotted_date(chunk: str) -> bool:
    """Whether `chunk` ends with a day and month written "21.10." (not a version: "4.0.")."""
    m = _DOTTED_DATE.search(chunk)
    return m is not None and 1 <= int(m["day"]) <= 31 and 1 <= int(m["month"]) <= 12


def _ends_with_abbreviation(chunk: str) -> bool:
    m = _LAST_WORD.search(chunk)
    if not m:
        return False
    word = m.group(1).lower().rstrip(".")
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


# A quotation opens with a quote mark at the start of a sentence or after a space, a bracket, a colon or a comma, and
# closes at its closing mark; a single quote closes only before a space, punctuation or the end ("don't" inside a
# quotation does not close it). An apostrophe inside a word never opens one, nor does a clipped word ('cause, 'em).
_QUOTATION = re.compile(
    r"(?:^|(?<=[\s(\[:,]))(?:\"[^\"]*(?:\"|$)|“[^”]*(?:”|$)|‘(?:[^’]|’(?=\w))*(?:’|$)|"
    r"'(?!(?:cause|cos|til|till|em|bout|round|n|s|d|ll|re|ve|tis|twas)\b)(?=[^\W\d_])(?:[^']|'(?=\w))*(?:'(?![^\W\d_])|$))"
)
# the second half of a quotation the splitter cut in two: a closing mark that nothing opened, at the end or before
# the rest of the sentence ("I'm vegan now," she said.)
_QUOTATION_TAIL = re.compile(r"[.!?,…][\"'’”](?=\s|$)")
_CLOSING = {'"': '"', "“": "”", "‘": "’", "'": "'"}
_QUOTE_OPENER = re.compile(r"(?:^|[\s(\[:,])[\"'‘“]")


def quotation_spans(sentence: str) -> list[tuple[int, int]]:
    """Where `sentence` quotes someone's words: each quotation from its opening mark to its closing one (or to the
    end, when the sentence splitter cut the quotation off after "He said 'I'm beat."), and from the start when the
    sentence begins with the second half of a quotation cut in two ("I need to sleep.'", "I'm vegan now," she
    said.)."""
    spans, start = [], 0
    tail = _QUOTATION_TAIL.search(sentence)
    if tail and not _QUOTE_OPENER.search(sentence[: tail.start()]):
        spans.append((0, tail.end()))
        start = tail.end()
    return spans + [
        m.span()
        for m in _QUOTATION.finditer(sentence, start)
        if m.end() > m.start() + 1 and not (m.start() == 0 and _unclosed(m.group()))
    ]


def _unclosed(quotation: str) -> bool:
    """A quotation that runs to the end of the sentence: from its very start it is a pasted text (the user's own
    bio or draft) as often as the first half of a quotation, so it is not counted as someone else's words."""
    return quotation[-1] != _CLOSING[quotation[0]]


# where a reported clause ends: a comma, a dash, a semicolon, the sentence's end, "but", or "and"/"so" before the
# speaker's own clause ("she asked if we're getting divorced and we said we're separating first")
_REPORT_END = r"(?=[.!?;,—–]|\s-\s|\bbut\b|\b(?:and|so)\s+(?:i|we|i'm|we're|i've|we've)\b|$)"
# "asked (me) if ...", "wondered whether ...": a question someone asked
_INDIRECT_QUESTION = re.compile(
    r"\b(?:asked|asks|asking|wondered|wonders)(?:\s+(?:me|us|him|her|them|(?-i:[A-Z][a-z]+)))?\s+"
    rf"(?:if|whether)\b(?:(?!{_REPORT_END}).)*",
    re.IGNORECASE,
)
# "my boss thinks I'm ...", "people assume I'm ...": a belief, unless the speaker holds it ("I think", "we figured",
# "I don't believe") or a clinician does (see `_belief_spans`). The verb's plain form ("think") counts only after a
# plural subject ("people assume"): "do you think", "made me think" and "it's amazing to think" report no belief.
_BELIEF_VERB = (
    r"(?:(?P<plain>think|assume|believe|reckon|insist|imagine|suspect|claim)|thinks|thought|assumes|assumed|"
    r"believes|believed|claimed|reckons|reckoned|figured|insists|insisted|imagines|imagined|suspects|"
    r"suspected|(?:is|was|are|were)\s+convinced|keeps\s+saying|kept\s+saying)"
)
_BELIEF = re.compile(
    rf"\b{_BELIEF_VERB}\s+(?:that\s+)?(?:(?!{_REPORT_END}).)*",
    re.IGNORECASE,
)
_PLURAL_SUBJECT = re.compile(
    r"\b(?:they|people|folks|others|(?!(?:lets|this|is|was|has|does|always|sometimes|perhaps)\b)\w+s)\s*$",
    re.IGNORECASE,
)
_CLAUSE_OPENING = re.compile(r"[.!?;,—–]|\s-\s|\b(?:and|but|so|because)\b", re.IGNORECASE)
_SPEAKER = re.compile(r"\b(?:i|we|i'm|we're|i've|we've|i'd|we'd)\b|\bi’", re.IGNORECASE)
# a clinician's view of the speaker's health is what the speaker knows of it ("my doctor thinks I have an ulcer")
_CLINICIAN = re.compile(
    r"\b(?:doctors?|dr|gp|physicians?|therapists?|psychiatrists?|psychologists?|dentists?|nurses?|specialists?|"
    r"physio\w*|surgeons?|consultants?|midwife|midwives|\w+ologists?|p(?:a)?ediatricians?)\b",
    re.IGNORECASE,
)


def _belief_spans(sentence: str) -> list[tuple[int, int]]:
    """Where someone other than the speaker believes or claims something ("My boss thinks I'm a designer"): the
    subject before the verb, back to the clause's opening, is not "I" or "we", nor a clinician."""
    spans = []
    openings = [0, *(brk.end() for brk in _CLAUSE_OPENING.finditer(sentence))]
    at = 0
    for m in _BELIEF.finditer(sentence):
        while at + 1 < len(openings) and openings[at + 1] <= m.start():
            at += 1
        subject = sentence[openings[at] : m.start()]
        if not subject.strip() or _SPEAKER.search(subject) or _CLINICIAN.search(subject):
            continue
        if m.group("plain") is None or _PLURAL_SUBJECT.search(subject):
            spans.append(m.span())
    return spans


def reported_spans(sentence: str, beliefs: bool = True) -> list[tuple[int, int]]:
    """Where `sentence` gives words or beliefs that are not the speaker's own: quotations (`quotation_spans`),
    questions someone asked ("she asked if we've decided to separate") and, unless `beliefs` is False, someone
    else's beliefs ("people assume I'm from Spain")."""
    return [
        *quotation_spans(sentence),
        *(m.span() for m in _INDIRECT_QUESTION.finditer(sentence)),
        *(_belief_spans(sentence) if beliefs else ()),
    ]


def own_words(sentence: str, beliefs: bool = True) -> str:
    """`sentence` with everything `reported_spans` finds blanked out (same length, so positions still line up):
    what the speaker states in their own words."""
    out = sentence
    for start, end in reported_spans(sentence, beliefs):
        out = out[:start] + " " * (end - start) + out[end:]
    return out
