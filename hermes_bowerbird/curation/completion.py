"""Completion: a new statement that closes an open item supersedes it, so the bulletin stops listing it as open
and recall ranks it below what became of it. Six kinds of open item, each closed in its own words:
- a todo, by saying it is done: "Rate limiting on /sync is done, I merged it" closes "TODO: add rate limiting to
  the /sync endpoint". The words that say so must fit the todo: "done" or "finished" end any task, "renewed"
  only one that asked to renew (or the like: "rang" ends "call the plumber"), so "the proposal I submitted
  covers passive design" leaves "explain passive house principles" open;
- a choice being weighed, by the decision: "We decided to use SQLite in WAL mode" closes "I'm comparing
  PostgreSQL and SQLite for the database", "I went with the Fuji" closes "I can't decide between the Fuji and
  the Sony";
- a standing problem, by its fix: "We fixed the locking error by setting busy_timeout" closes "We hit a bug:
  SQLite returned 'database is locked'";
- a plan or pursuit under way (a todo, a goal, "training for", "signed up for"), by giving it up: "I had to pull
  out of the marathon" closes "I'm training for the Berlin marathon", "We called off the Lisbon trip" closes "I
  still need to book flights for the Lisbon trip"; and one the user says they are saving up, training or working
  for, by reaching it: "I finally bought the iPad Pro!" closes "I'm saving up for a new iPad Pro";
- an appointment ahead (an interview, a check-up, a test with a day or time), by saying how it went: "Biscuit's vet
  appointment went fine" closes "I have a vet appointment for my dog Biscuit tomorrow at 9", "I passed my driving
  test!" closes "I have my driving test next Tuesday"; a stay away, by coming back: "Back home from Tokyo, jet lag
  is killing me" closes "I'm in Tokyo this week for a conference".
In every case nothing in the statement may say it is not over yet ("isn't done", "almost fixed", "still need
to", "I'll"; for a choice: "still", "probably", "leaning"; for giving up: "might", "thinking of", "won't", a
question; for how it went: "I hope", "will"); it must be close in meaning to the item (cosine at least the kind's
threshold), so "I finished the quarterly report" leaves "call the plumber" open; and it must share a word naming
the thing ("report", "passport", "SQLite"), so "I finished the annual budget review" leaves "finish the quarterly
report" open however alike the two sentences sound. A todo never closes anything.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from ..text import stem_words
from ..types import MemoryType
from .changes import STATEMENT_CACHE, when
from .sentences import own_words

# Cosines measured with all-MiniLM-L6-v2. Todos and the words that close them: 0.58-0.93 ("Flights for Lisbon are
# booked!" / "I still need to book flights for the Lisbon trip" 0.83), unrelated completions of the same shape
# -0.01-0.59 ("I finished the annual budget review today" / "I have to finish the quarterly report" 0.59, which
# the shared-word rule leaves open). Choices and their decisions 0.70-0.78, another decision 0.18. A problem and its
# fix can share little more than the thing: 0.50 for the locking bug above, 0.59-0.81 for a noise and its repair,
# 0.09-0.32 for another fix.
COMPLETION_SIMILARITY = 0.55
# A todo and the words that say its own verb was done ("Renewed the car insurance with Admiral." / "I need to renew
# my car insurance before December 15th." 0.44): the verb fits only this kind of task, and a word naming the thing
# must be shared too, so the pair may be further apart.
ECHO_SIMILARITY = 0.4
FIX_SIMILARITY = 0.45
# A plan and the word it was given up 0.47-0.69 ("I had to pull out of the marathon" / "I'm training for the Berlin
# marathon, my target is under 4 hours" 0.47), another plan given up 0.06-0.38.
DROP_SIMILARITY = 0.45
# An appointment and the word of how it went 0.43-0.71 ("Just got back from the dentist, no cavities." / "I have a
# dentist appointment on Thursday at 3pm." 0.43), another appointment's 0.14-0.34; a stay and the word of coming
# back 0.43-0.75 ("Back home from Tokyo, jet lag is killing me." / "I'm in Tokyo this week for a conference." 0.43).
HAPPENED_SIMILARITY = 0.4
# A debt and the word it was paid 0.53-0.64 ("Northbeam has settled WA-0093 in full." / "Northbeam currently owes me
# CAD 5,760 on invoice WA-0093" 0.58), another client's payment 0.25-0.43.
SETTLED_SIMILARITY = 0.45

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
# "Expense report submitted!", "Flights booked."
_TERSE = rf"(?:^|[.!?:;]\s+)(?:[\w'’-]+\s+){{1,4}}(?P<terse>{_DONE_WORDS})\s*[.!]*\s*$"
_DONE = re.compile(rf"{_PASSIVE}|{_ACTIVE}|{_OPENING}|{_TERSE}", re.IGNORECASE)
# what denies a thing was done, in every statement that it was: "not", "never", "yet", any "n't"
_NOT = r"\b(?:not|never|yet)\b|n['’]t\b"
# anything that says the task is not over yet
_NOT_YET = re.compile(
    rf"{_NOT}|\b(?:almost|nearly|half|partly|partially|mostly|still (?:need|have|got|must)|"
    r"need to|have to|must|going to|gonna|will|shall|should|tomorrow|next)\b|['’]ll\b",
    re.IGNORECASE,
)
# weighing a choice not yet made
_WEIGHING = re.compile(
    r"\b(?:comparing|deciding between|choosing between|torn between|weighing up|can'?t decide|cannot decide|"
    r"undecided (?:between|on|about)|not sure (?:whether|which)|trying to (?:decide|choose|pick))\b",
    re.IGNORECASE,
)
# the choice made (a memory typed as a decision makes one too)
_CHOSEN = re.compile(
    r"\b(?:decided|went with|go(?:ing)? with|chose|picked|settled on|opted for|ended up (?:with|going with|"
    r"buying|getting|choosing|picking))\b",
    re.IGNORECASE,
)
# a decision still open ("we decided to wait", "probably going with")
_UNDECIDED = re.compile(
    r"\b(?:still|yet|maybe|perhaps|might|probably|leaning|not sure|undecided|can'?t decide|wait)\b",
    re.IGNORECASE,
)
# something broken that stays broken until fixed
_PROBLEM = re.compile(
    r"\b(?:bug|error|broken|crash(?:es|ing)?|fail(?:s|ing)|flaky|leak(?:s|ing)|outage|noise|noisy|squeak\w*|"
    r"rattl(?:es|ing)|grinding|drip(?:s|ping)|"
    r"(?:does|do|is|are)(?:n't| not) working|(?:doesn't|does not|won't|will not) (?:work|start|boot|load|connect))\b",
    re.IGNORECASE,
)
_FIXED = re.compile(
    r"\b(?:fixed|solved|resolved|sorted(?: out)?|repaired|patched|replaced|works again|working again|"
    r"back up|back to normal)\b",
    re.IGNORECASE,
)
# a plan or pursuit under way (a todo or a goal is one by its type)
_UNDERWAY = re.compile(
    r"\b(?:training for|preparing for|planning|plan to|signed up|registered for|enrolled in|entered|aiming to|"
    r"working towards?|saving (?:up )?for|learning|applying for|taking (?:a|an|the) \w+ (?:class|course)|"
    r"going to|looking forward to|booked)\b",
    re.IGNORECASE,
)
# "I'm", "we are", ... now or still: where the user says what they are doing or where they are
_WE_ARE = r"\b(?:i|we)(?:'m|’m| am|'re|’re| are)\s+(?:currently\s+|still\s+|now\s+)?"
# a pursuit with an end, reached by doing it: "saving up for an iPad" ("bought it"), "training for the marathon"
_REACHABLE = re.compile(
    rf"{_WE_ARE}(?:saving (?:up )?for|training for|working towards?)\b", re.IGNORECASE
)
_SAVING = re.compile(r"\bsaving (?:up )?for\b", re.IGNORECASE)
# given up: "pulled out of", "we called off", "I quit the class", "put the house plans on hold"
_DROPPED = re.compile(
    r"\b(?:pull(?:ed|ing)? out of|dropp(?:ed|ing) out(?: of)?|withdr[ae]w(?:n)?|gave up|giving up|given up|"
    r"call(?:ed|ing) off|cancell?(?:ed|ing)|scrapp(?:ed|ing)|abandon(?:ed|ing)|back(?:ed|ing) out|bail(?:ed|ing) on|"
    r"quit(?:ting)?|decided against|shelv(?:ed|ing)|(?:put|putting|is|are) (?:\w+ ){0,3}on hold|no longer|"
    # "so the half marathon is off", "the trip's off for now" (not "the heating is off at night")
    r"(?:is|are|'s|’s) (?:now |officially |definitely |totally )?off(?=\s*(?:[.!;]|$|,|\s+(?:now|for now|then)\b)))\b"
    # someone leaving the user ("he bailed on us", "Marcus abandoned me") gives up no plan
    r"(?!\s+(?:on\s+)?(?:me|us|him|her|them)\b)",
    re.IGNORECASE,
)
# only thought about, asked, or denied
_MAYBE = re.compile(
    r"\?|\b(?:might|maybe|perhaps|probably|thinking (?:of|about)|considering|may have to|if|unless|not|never|"
    r"tempted|wonder)\b|n't\b|n’t\b",
    re.IGNORECASE,
)
# an appointment (one ahead when it has a day or a time and is not told as past, see `_happened`)
_APPOINTMENT = re.compile(
    r"\b(?:appointments?|interviews?|exams?|tests?|surgery|operation|check-?ups?|hearing|audition|review|recital|"
    r"presentation|consultation|scan|procedure)\b",
    re.IGNORECASE,
)
# coming back from a stay: "back home from Tokyo", "flew home from Lisbon"
_BACK = re.compile(
    r"\bback\s+(?:home\s+)?from\b|\b(?:flew|drove|came|got|travelled|traveled)\s+home\s+from\b",
    re.IGNORECASE,
)
# how it went: "went fine", "was a success", "I passed my driving test", "just got back from the dentist", "back
# home from Tokyo"
_WENT = re.compile(
    r"\bwent\s+(?:\w+\s+)?(?:well|fine|great|ok(?:ay)?|badly|smoothly|alright|terribly|better|worse)\b|"
    r"\b(?:was|were)\s+(?:\w+\s+)?(?:fine|great|good|ok(?:ay)?|a success|a disaster|uneventful|painless|quick)\b|"
    rf"\b(?:is|are)\s+(?:over|behind me|behind us)\b|{_BACK.pattern}|"
    r"\b(?:i|we)\s+(?:just\s+)?(?:passed|failed|nailed|aced|survived|got through)\b",
    re.IGNORECASE,
)
# a stay away, for a while: "I'm in Tokyo this week for a conference", "we're at my in-laws' until Sunday"
_STAY = re.compile(
    rf"{_WE_ARE}(?:in|at|visiting|staying\s+(?:in|at|with))\s"
    r"[^.!?]*\b(?:this\s+(?:week|weekend)|over\s+the\s+weekend|for\s+(?:work|business)\b|"
    r"for\s+(?:a|the)\s+(?:conference|trip|work trip|week|few days|couple of days|wedding|holiday|vacation)\b|"
    r"on\s+(?:a\s+|my\s+|our\s+)?(?:business\s+trip|work\s+trip|trip|vacation|holiday)|until\b|till\b)",
    re.IGNORECASE,
)
# money owed to the user or by them: "Vinhal Labs owe me 2.280 euro", "Corran still haven't paid invoice 028",
# "Larchmont invoice #2207, $7,600, 12 days late"
_OWED = re.compile(
    r"\bowes?\b|\bowed\b|\bunpaid\b|\boverdue\b|\bpast\s+due\b|\boutstanding\b|\bdays?\s+late\b|"
    r"\b(?:hasn['’]?t|haven['’]?t|havent|hasnt|not)\s+(?:yet\s+)?paid\b",
    re.IGNORECASE,
)
# said to be paid, by whoever owed: "Larchmont finally paid 2207", "Northbeam has settled WA-0093 in full.", "Idris did
# finally pay the £840 though" (not "still haven't paid", "will pay next week")
_SETTLED = re.compile(
    r"\b(?:has|have|had)?\s*(?:now\s+|finally\s+|just\s+|also\s+)*(?:paid|settled|squared\s+up)\b"
    r"(?!\s+(?:for|by|off|plan|plans|version|leave|subscription|tier|account|attention|members?|users?|apps?|in|into|on|"
    r"here|there|down|from|with)\b)(?<!\ba\spaid)(?<!\bthe\spaid)(?<!\bget\ssettled)(?<!\bgot\ssettled)"
    r"(?<!\bgetting\ssettled)(?<!\bI\spaid)|"
    r"\bdid\s+(?:finally\s+|eventually\s+)?pay\b",
    re.IGNORECASE,
)
_NOT_PAID = re.compile(
    rf"{_NOT}|\b(?:still|will|might|havent|hasnt|didnt|wont|should|if)\b|['’]ll\b|\?", re.IGNORECASE
)
# told after it took place ("Had my first design review with Meridian today"): nothing ahead
_PAST = re.compile(r"\b(?:had|went|was|were|did|attended|got back|came back)\b", re.IGNORECASE)
# not over yet, or only hoped
_AHEAD_STILL = re.compile(
    r"\?|\b(?:hope|hopefully|might|will|going to|gonna|yet)\b|'ll\b|’ll\b", re.IGNORECASE
)
# the verb of a todo's task: "I need to renew ...", "Remind me to call ...", "TODO: add ..."
_TASK_VERB = re.compile(
    r"\b(?:need|needs|have|has|must|ought|got|remind me|forget) to\s+(?:\w+ly\s+)?(?P<verb>\w+)|"
    r"^\W*(?:todo|to-do)\s*[:–-]?\s*(?P<verb2>\w+)",
    re.IGNORECASE,
)
# words that frame a task or its completion rather than name the task itself
_FRAME = frozenset(
    """
todo to-do task remind reminder remember need needs have has had must should will going gonna want still
later soon before after today tonight tomorrow yesterday morning afternoon evening week weekend month
finally just already also now all done finish finished complete completed sort sorted handle handled
the and for are was were this that with from into about your yours our ours their them they you
get got make made take took taken care off out way can could would decided decide comparing chose picked
went settled bug error broken fixed solved resolved repaired patched replaced works working
noise noisy squeak squeaks squeaky squeaking rattle rattles rattling grinding drip drips dripping leak leaks leaking
""".split()  # noqa: SIM905
)


def completion_words(text: str) -> list[str]:
    """The words by which `text` says something is done ("done", "renewed"), none when anything in it says the
    task is not over yet."""
    return list(_done_words(text))


# the readings of a statement alone are cached (see changes.STATEMENT_CACHE)
@functools.lru_cache(maxsize=STATEMENT_CACHE)
def _done_words(text: str) -> tuple[str, ...]:
    if _NOT_YET.search(text):
        return ()
    return tuple(next(w for w in m.groups() if w).lower() for m in _DONE.finditer(text))


def says_closed(text: str) -> bool:
    """Whether `text` says a task is done or a problem fixed (whether it closes anything depends on what is open)."""
    if _NOT_YET.search(text):
        return False
    return _DONE.search(text) is not None or _FIXED.search(text) is not None


def says_settled(text: str) -> bool:
    """Whether `text` says a debt was paid ("Larchmont finally paid 2207"; whether it closes one depends on what is
    owed)."""
    return _SETTLED.search(text) is not None and not _NOT_PAID.search(text)


@functools.lru_cache(maxsize=STATEMENT_CACHE)
def says_dropped(text: str) -> bool:
    """Whether `text` says in its own words (not quoting anyone) that a plan or pursuit was given up ("I had to pull
    out of the marathon")."""
    own = own_words(text)
    return _DROPPED.search(own) is not None and not _MAYBE.search(own)


# the user booked something named, which is where they will be or whom they will see: "I booked the Marriott for the
# Denver conference", "we've reserved a cottage at Ravenglass" (not "Flights booked.": nothing named)
_BOOKED_NAMED = re.compile(
    r"\b(?:i|we)(?:['’]ve|\s+have)?\s+(?:just\s+|finally\s+|also\s+|now\s+)?(?:booked|reserved|rebooked)\s+"
    r"(?:(?:the|a|an|our|my|us|me)\s+)?(?:[a-z][\w-]*\s+){0,3}?(?:(?:at|with|in|on)\s+)?(?:the\s+)?"
    r"(?-i:[A-Z])[\w’'&-]+",
    re.IGNORECASE,
)
_NOT_BOOKED = re.compile(rf"{_NOT}|\b(?:still|need|needs|forgot|have\s+to)\b", re.IGNORECASE)


def says_booked(text: str) -> bool:
    """Whether the user says they booked something they name ("I booked the Marriott for the Denver conference"):
    where they will stay or whom they will see is news of its own, whether or not a todo to book it was open."""
    return _BOOKED_NAMED.search(own_words(text)) is not None and not _NOT_BOOKED.search(text)


@functools.lru_cache(maxsize=STATEMENT_CACHE)
def says_happened(text: str) -> bool:
    """Whether `text` says in its own words how something went ("The Stripe interview went really well!")."""
    own = own_words(text)
    return _WENT.search(own) is not None and not _AHEAD_STILL.search(own)


def closure(
    item_type: MemoryType, item: str, statement_type: MemoryType, statement: str, similarity: float
) -> str | None:
    """Why `statement` (a new memory) closes `item` (a current one; `similarity` their cosine), or None."""
    if statement_type is MemoryType.TODO:
        return None
    return (
        _completed(item_type, item, statement_type, statement, similarity)
        or _dropped(item_type, item, statement, similarity)
        or _happened(item, statement, similarity)
        or _settled(item, statement, similarity)
    )


def _settled(item: str, statement: str, similarity: float) -> str | None:
    """A debt the item tells of, paid by the one the statement names: they share the payer or the invoice."""
    if not _OWED.search(item) or similarity < SETTLED_SIMILARITY or not says_settled(statement):
        return None
    framing = _phrase_words((*_OWED.finditer(item), *_SETTLED.finditer(statement))) | _MONEY_WORDS
    return "paid: a debt settled" if _share_thing(item, statement, framing) else None


def _happened(item: str, statement: str, similarity: float) -> str | None:
    ahead = _APPOINTMENT.search(item) is not None and when(item) and not _PAST.search(item)
    away = (
        not ahead
        and _STAY.search(item) is not None
        and _BACK.search(own_words(statement)) is not None
    )
    if not (ahead or away) or similarity < HAPPENED_SIMILARITY or not says_happened(statement):
        return None
    # the thing is the appointment's own word ("vet", "Stripe", "driving") or the place ("Tokyo"), not
    # "appointment" or "review"
    framing = _phrase_words((*_WENT.finditer(statement), *_APPOINTMENT.finditer(item)))
    if not _share_thing(item, statement, framing):
        return None
    return "happened: a stay now over" if away else "happened: an appointment now past"


def _dropped(item_type: MemoryType, item: str, statement: str, similarity: float) -> str | None:
    underway = item_type in (MemoryType.TODO, MemoryType.GOAL) or _UNDERWAY.search(item) is not None
    if not underway or similarity < DROP_SIMILARITY or not says_dropped(statement):
        return None
    # the words that say it was under way or given up name no particular plan
    framing = _phrase_words((*_UNDERWAY.finditer(item), *_DROPPED.finditer(statement)))
    return "dropped: a plan given up" if _share_thing(item, statement, framing) else None


def _completed(
    item_type: MemoryType, item: str, statement_type: MemoryType, statement: str, similarity: float
) -> str | None:
    said = _done_words(statement)
    if item_type is MemoryType.TODO:
        floor = ECHO_SIMILARITY if _echoes_task_verb(item, said) else COMPLETION_SIMILARITY
        closed = similarity >= floor and _ends_task(item, said)
        reason = "done: closes an open todo"
    elif _WEIGHING.search(item):
        chosen = statement_type is MemoryType.DECISION or _CHOSEN.search(statement) is not None
        closed = similarity >= COMPLETION_SIMILARITY and chosen and not _UNDECIDED.search(statement)
        reason = "decided: settles a choice that was open"
    elif _PROBLEM.search(item) and not _FIXED.search(item):
        fixed = _FIXED.search(statement) is not None and not _NOT_YET.search(statement)
        closed = similarity >= FIX_SIMILARITY and fixed
        reason = "fixed: resolves a problem"
    elif _REACHABLE.search(item):
        # what was saved for is reached by buying it
        bought = _SAVING.search(item) is not None and any(w in ("bought", "ordered") for w in said)
        closed = (
            similarity >= COMPLETION_SIMILARITY
            and bool(said)
            and (bought or _ends_task(item, said))
        )
        reason = "done: a goal reached"
    else:
        return None
    if not closed:
        return None
    verbs = {p[:4] for w in said for p in _ECHOES.get(w, ())} | {w[:4] for w in said}
    return reason if _share_thing(item, statement, verbs) else None


def _echoes_task_verb(todo: str, said: Sequence[str]) -> bool:
    """Whether every word that says the task is done is the todo's own verb ("renewed" for "I need to renew my car
    insurance"), not a word found elsewhere in it ("bought" for "I have to say ... I managed to get ...")."""
    m = _TASK_VERB.search(todo)
    if m is None or not said:
        return False
    verb = (m["verb"] or m["verb2"]).lower()
    return all(any(verb.startswith(p) for p in _ECHOES.get(w, ())) for w in said)


def _ends_task(todo: str, said: Sequence[str]) -> bool:
    """Whether the words a statement says the task is done in (`said`, see `completion_words`) fit it: "done" ends
    any task, "renewed" only one that asked to renew (or the like)."""
    if any(w not in _ECHOES for w in said):
        return True
    lowered = todo.lower()
    return any(re.search(rf"\b{re.escape(p)}", lowered) for w in said for p in _ECHOES[w])


# the words of any bill or payment, which name no particular debt
_MONEY_WORDS = {"invo", "bill", "euro", "poun", "doll", "full", "mone", "owe", "owes"}


def _share_thing(item: str, statement: str, framing: set[str]) -> bool:
    """Whether `item` and `statement` share a word naming the thing, besides `framing` (words, cut to four letters,
    that say it was done, given up, ahead or past rather than what it is)."""
    return bool((_task_words(item) & _task_words(statement)) - framing)


def _phrase_words(matches: Iterable[re.Match[str]]) -> set[str]:
    """The words of the matched phrases, cut to four letters as `_task_words` cuts them."""
    return {w[:4] for m in matches for w in stem_words(m.group(0).lower())}


def _task_words(text: str) -> set[str]:
    """Content words cut to four letters ("renew" meets "renewed", "flight" "flights"), without the framing."""
    return {w[:4] for w in stem_words(text.lower()) if w not in _FRAME}
