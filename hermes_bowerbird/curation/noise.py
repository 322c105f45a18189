"""Tell durable content from chat noise: acknowledgements, greetings, thanks, filler and trivial prompts."""

from __future__ import annotations

import re
from collections.abc import Collection

from hermes_bowerbird.curation.sentences import LEADING_FILLER, MAX_STATEMENT_CHARS, split_sentences
from hermes_bowerbird.curation.spoken import plain
from hermes_bowerbird.curation.standing import standing_request
from hermes_bowerbird.text import MONTHS_BUT_MAY, WEEKDAY_STEMS
from hermes_bowerbird.text import chat_words as words
from hermes_bowerbird.vocabulary import BP_READING, CONTACT_ROLES, PRESCRIBER_CHANGE

_FILLER_WORDS = (
    r"ok(?:ay)?|k+|sure(?: thing)?|yes|yeah|yea|yep|yup|no|nope|nah|right|alright|all right|cool|nice|great|"
    r"awesome|perfect|excellent|wonderful|lovely|amazing|fine|good|got it|gotcha|understood|noted|will do|"
    r"sounds (?:good|great|fine|right|like a plan)|good (?:call|point|idea|question|to know)|makes sense|"
    r"fair(?: enough)?|true|exactly|indeed|agreed|i agree|i see|i know|i guess|i think so|i don't know|"
    r"i dunno|maybe|perhaps|hmm+|hm+|oh|ah|aha|uh|um|well|so|anyway|lol|haha+|heh|wow|interesting|"
    r"same|me too|never ?mind|no worries|no problem|np|whatever|sorry|oops|my bad|of course|definitely|"
    r"absolutely|totally|hi|hello|hey(?: there)?|yo|howdy|greetings|good (?:morning|afternoon|evening|night)|"
    r"morning|afternoon|evening|night|gn|bye|goodbye|see (?:you|ya)(?: later| soon| tomorrow)?|later|cya|ttyl|"
    r"talk (?:later|soon)|heading out|gotta go|take care|thanks?(?: (?:so|very) much| a lot| again| anyway)?|"
    r"thank you(?: (?:so|very) much)?|"
    r"thx|ty|cheers|appreciate it|much appreciated|you're (?:right|the best|welcome)|that's (?:it|all|fine|right|true)|"
    r"that helps|that works|that (?:was|is) (?:helpful|useful|great|perfect|it)|done|go ahead|continue|"
    r"next|please|pls|again"
)
_PRESCRIBER_CHANGE = re.compile(PRESCRIBER_CHANGE, re.IGNORECASE)
_BP_READING = re.compile(BP_READING, re.IGNORECASE)
_FILLER_RUN = re.compile(rf"^(?:(?:{_FILLER_WORDS})\b[\s,.!;:~-]*)+", re.IGNORECASE)
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i’m|im|let's|let’s|i've|i’ve|i'd|i'll|me|my|mine|myself|we|we're|we've|"
    r"our|ours|us)\b",
    re.IGNORECASE,
)
_TRANSIENT = re.compile(
    r"^(?:i(?:'ll| will| can| should| need to| have to| gotta| must)? (?:probably |just |maybe )?"
    r"(?:try(?: to)?(?: that| it)?|check|look(?: into it)?|think about it|figure it out|sleep|go|rest|"
    r"get going|head out|do that|do it|give it a (?:try|shot|go))\b.{0,20}$|"
    r"i (?:got|get|was|am|'m) (?:sidetracked|distracted|busy|carried away|confused|lost)|"
    r"i keep forgetting|i forgot you|i'm (?:fine|good|ok|okay|back|here|done|ready|tired|sorry|not sure)\b.{0,12}$|"
    r"let me (?:check|think|try|see|look)|i (?:know|see|guess|agree|understand)\b.{0,12}$|"
    r"(?:what|where) (?:were|was) (?:we|i)\b)",
    re.IGNORECASE,
)
_ABOUT_ASSISTANT = re.compile(
    r"\byou (?:don't|do not|can't|cannot|couldn't|won't) (?:know|remember|see|access|do)\b|"
    r"\bas an ai\b|\byou're (?:an|a) (?:ai|bot|assistant)\b",
    re.IGNORECASE,
)
# the user asking that something be forgotten or not kept is no fact to keep: "forget what I told you about my
# ex", "please don't keep the panic attack thing either, I'd rather that not be in your memory", "delete that"
_KEPT = r"(?:stored|saved|kept|recorded|remembered|in (?:your|the) memory)\b"
_FORGET_ASKED = re.compile(
    r"^(?:(?:and|also|oh|so|but|ok(?:ay)?|actually)\s+)*(?:(?:please|pls|can you|could you)\s+)?(?:"
    r"(?:forget|unlearn|erase|wipe|delete|remove)\s+(?:about\s+)?(?:what|that|this|it|everything|all|anything)\b|"
    r"(?:forget|erase|wipe|delete|remove)\b[^.!?]{0,60}\b(?:i|i've|i'd)\s+(?:told|said|mentioned|shared)\b|"
    r"(?:don'?t|do not|never|stop)\s+(?:keep|keeping|store|storing|save|saving|remember|remembering|record|"
    r"recording|retain|retaining)\b)|"
    rf"\b(?:don'?t|do not)\b[^.!?]{{0,50}}\b{_KEPT}|(?:['’]d|would) rather\b[^.!?]{{0,20}}\b(?:not|never)\b"
    rf"[^.!?]{{0,30}}\b{_KEPT}|(?:['’]d|would) rather you (?:didn'?t|did not|not)\s+(?:keep|store|save|remember|"
    r"record)\b",
    re.IGNORECASE,
)
_ASSISTANT_FILLER = re.compile(
    r"^(?:sure|certainly|of course|absolutely|great question|good question|happy to help|glad (?:to|i could) help|"
    r"here(?:'s| is| are)|let me know|feel free|i hope (?:this|that) helps|hope (?:this|that) helps|"
    r"you're welcome|no problem|anytime|welcome|nice to meet you|is there anything else|"
    r"i can help|i'd be happy|i'm here|i'll be here|let's (?:dive|get started|take a look))\b",
    re.IGNORECASE,
)
# asking the assistant for a reminder is setting down the task, not a question: "Can you remind me to call mum?"
REMINDER_REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) you|please)\s+(?:please\s+)?remind me to\s+(?P<task>[^?]+?)[\s?.!]*$",
    re.IGNORECASE,
)
# a task the user sets down for later, whoever it is about ("TODO: renew the TLS cert", "Note to self: call the bank")
_REMINDER_MARKS = r"\bremind me to\b|\bdon'?t (?:let me )?forget\b|\bnote to self\b"
TODO_MARK = re.compile(rf"^\W*(?:todo|to-do)\b|{_REMINDER_MARKS}", re.IGNORECASE)
# the markers that make even a short task one: "TODO: buy milk." ("todo list is long" is about a list)
_SHORT_TASK_MARK = re.compile(rf"^\W*(?:todo|to-do)\s*[:–-]|{_REMINDER_MARKS}", re.IGNORECASE)
# what the user tells of someone by name, with a value, is content however short: "Jordan's birthday is on June 3rd.",
# "Tess's new flat is in Hackney.", not a passing remark ("Google's new model is great")
NAMED_FACT = re.compile(
    r"^(?!(?:It|That|There|Here|What|He|She|Who|This|Where|How|Let|Today|Everyone|Nobody)['’]s)"
    r"(?-i:[A-Z][a-z]+)(?:'s|’s)\s+(?:[A-Za-z-]+\s+){1,3}?(?:is|are|was|were)\s+[^?]*?(?:\d|\s(?-i:[A-Z])[a-z])"
)
# what the user tells of someone by name that they like, eat or are: "Giedre is vegan", "Barnaby doesn't drink",
# "Hideo collects vinyl", "Marta loves orchids and Agatha Christie novels", "Sipho's mum is diabetic" (not "Python is
# great", "Everyone loves pizza")
PERSON_TRAIT = re.compile(
    r"^(?!(?-i:The|This|That|These|Those|It|He|She|They|We|You|I|My|Our|Your|His|Her|Their|Everyone|Everybody|"
    r"Nobody|Someone|Somebody|People|Nothing|Everything|Who|What|Which|There|Here|Mine|Anyone|"
    rf"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|{MONTHS_BUT_MAY}|May)\b)"
    r"(?-i:[A-ZÀ-ÖØ-Þ](?:[a-zß-öø-ÿ])+)(?:['’]s\s+(?:mum|mom|mother|dad|father|wife|husband|partner|son|daughter|"
    r"sister|brother|"
    r"kid|kids|girlfriend|boyfriend))?(?:"
    r"(?:\s+(?:is|are)|['’]s)\s+(?:(?:a|an|so|super|very|really|totally|severely|also|now|strictly|fully|still|"
    r"huge|big|massive)\s+)*(?:vegan|vegetarian|veggie|pescatarian|coeliac|celiac|diabetic|allergic|"
    r"lactose|gluten|sober|teetotal|pregnant|obsessed\s+with|into|fan\s+of|afraid\s+of|scared\s+of|"
    r"terrified\s+of|mad\s+about|crazy\s+about)\b|"
    r"\s+(?:really\s+|absolutely\s+|also\s+|still\s+)?(?:loves|hates|likes|adores|collects|detests|prefers|"
    r"can['’]?t\s+stand|can['’]?t\s+eat|can['’]?t\s+have|doesn['’]?t\s+(?:eat|drink|like)|never\s+(?:eats|drinks))\b|"
    # a condition someone has, their age or birthday: "Wilf has a sesame allergy", "Noémie is 17, her birthday is
    # October 2nd", "Maisie is 3 and goes to nursery" (a count of something else is no age: "Python is 3 times faster")
    r"\s+has\s+(?:(?:a|an)\s+)?(?:[\w-]+\s+){0,2}?(?:allergy|intolerance|asthma|diabetes|eczema|epilepsy|adhd|autism)\b|"
    r"(?:['’]s\s+birthday\s+is|\s+(?:is|turns|turned|just\s+turned)\s+\d{1,2}(?:\s+years?\s+old)?"
    r"(?=\s*(?:$|[,.;!]|and\b|now\b|next\b|this\b|in\b|on\b))))"
)
# what the user was told to do or not to do by someone who treats, trains or advises them: "The dietitian says no
# apples, no pears, no honey", "gp says strictly no gluten from now on", "Rasmus said no speedwork for 3 weeks",
# "Jorge's rules: no deadlifts from the floor for six weeks", "Her instructions: do not sleep on the left side"; or such
# a rule noted alone: "no rides over 2hr for a fortnight" (not "Trump said no to the deal", "Mom says don't worry")
ADVICE = re.compile(
    rf"^(?:(?:the|my|our)\s+)?(?:(?:{CONTACT_ROLES}|coach|nurse|consultant|surgeon|specialist|he|she|they)\b|"
    r"(?-i:[A-ZÀ-Þ])[\w'’-]+(?:\s+(?-i:[A-ZÀ-Þ])[\w'’-]+)?|(?:her|his|their)(?=\s+(?:rules?|instructions?|advice|orders)))"
    r"(?:(?:['’]s)?\s+(?:rules?|instructions?|advice|orders)\s*:\s*|"
    r"\s+(?:also\s+)?(?:says?|said|told\s+me|wants\s+me|advised(?:\s+me)?|recommends?|recommended)\b\s*:?\s*"
    r"(?:that\s+)?(?:i\s+(?:should|must|have\s+to)\s+)?(?:to\s+)?)"
    r"(?:strictly\s+|absolutely\s+|definitely\s+)?(?:no(?!\s+(?:to|one|way|idea|problem|worries|thanks|longer|more|"
    r"rush|need)\b)|(?:don['’]?t|do\s+not)(?!\s+(?:worry|bother|mind|care|forget|panic|stress)\b)|avoid|stop|only|max|"
    r"never|keep|take(?=(?:\s+\S+){0,3}?\s+\d)|raise|wear|rest|ice|cut|limit|drop)\b(?!\s*[.!]?$)|"
    r"^no\s+(?:[\w'’-]+\s+){1,6}?(?:for|until|till)\s+(?:a|an|one|two|three|four|five|six|\d{1,2})?\s*"
    r"(?:days?|weeks?|months?|fortnight)\b",
    re.IGNORECASE,
)
# who lives in one of the user's lets, noted as a landlord notes it: "Flat 1 is Radoslav Rudnev, he pays £875 a
# month", "unit 1 - Jarrah Blundell, $540 a week", "Unit 1 is the ground floor, Kayleigh Szymanski"
LET_UNIT = re.compile(
    r"^(?:flat|unit|apartment|apt|room|suite)\s+[\w-]{1,4}\b[^.!?]{0,30}?\s*(?:\bis\b|[-:=–])\s+(?:the\s+\w+\s+floor,?\s+)?"
    r"(?-i:[A-ZÀ-Þ])[\w'’-]+",
    re.IGNORECASE,
)
# a short statement may hold a durable value of its own: an address, a path or code ("Staging lives at
# staging.acme.dev.", "The VPN config is in ~/vpn/client.ovpn."), or a way to do something ("To deploy, run make
# deploy-prod from the infra repo.")
TECHNICAL_VALUE = re.compile(
    # labels of bounded length and number, so a run of "A.A.A." costs no more than its length
    r"https?://\S+|\b(?:[\w-]{1,63}\.){1,8}(?:dev|com|io|org|net|app|co|ai|internal|local|cloud)\b|"
    r"(?:^|\s)~?/[\w.-]+/[\w./-]+|`[^`]+`",
    re.IGNORECASE,
)
# how a team works, said tersely: "we squash-merge everything", "rule: no merges to main after 3pm on fridays", "PRs
# need two approvals", "nobody pushes to main directly", "no deploys after 4pm pacific"
TEAM_RULE = re.compile(
    r"^(?:we|the\s+team|our\s+team)\s+(?:now\s+|only\s+|all\s+|always\s+|never\s+)?(?:squash[- ]?merge|squash|"
    r"rebase|merge|deploy|release|ship|tag|branch|pair|review|version)(?:s|es)?\b|"
    r"^(?:we|the\s+team|our\s+team)\s+(?:only\s+|always\s+|never\s+)?push(?:es)?\s+(?:to|directly|straight|on|after|"
    r"before)\b|"
    r"^(?:(?:house|team|deploy|merge|release|branching)\s+)?(?:rules?|conventions?|policy|process|workflow|"
    r"branching)\s*[:=]\s*\S|"
    r"\b(?:prs?|pull\s+requests?|commits?|deploys?|deployments?|releases?|merges?|pushes|hotfix(?:es)?|"
    r"migrations?|schema\s+changes)\s+(?:need|needs|must|require|requires|have\s+to|has\s+to|should|go|goes|get)\b|"
    r"^no\s+(?:\w+\s+){0,2}(?:deploys?|deployments?|merges?|pushes|releases?|changes|commits|migrations?)\s+"
    r"(?:to|on|after|before|during|in|without|until|past|from)\b|"
    r"\bnobody\s+(?:pushes|merges|deploys|commits)\b",
    re.IGNORECASE,
)
PROCEDURE_OPENING = re.compile(
    r"^(?:to|in order to) [a-z]+[^,]{0,60}, (?:run|use|type|open|click|go|do|call|set|add|first)\b",
    re.IGNORECASE,
)
# the word a statement opens with, and whether it is owned ("Meera moved", "Mia's swimming moved")
_OPENING_NAME = re.compile(r"(?P<name>[A-Za-z][\w-]{0,40})(?:['’]s)?\b")
_SLASH_COMMAND = re.compile(r"^/[A-Za-z][\w-]*(?:\s.*)?$", re.DOTALL)
# a thing of the user's life said to happen at a time, in the present: "The team offsite is in Manchester on the
# 14th", "Bins go out on Tuesday nights here", "the book club meets every other Thursday" (a thing, with "the" or
# plural: "Sam is in Leeds on Monday" is said of a person, and is kept when Sam is one of the user's)
_THING_WHEN = re.compile(
    r"^(?:(?:the|our)\s+(?:[\w'’-]+\s+){0,3}?(?:is|are|goes|comes|happens|starts|begins|runs|meets|falls|takes\s+place"
    r"|renews|expires|ends|(?:is|are)\s+due)"
    # a thing of the user's own that runs out or comes round: "My passport expires next March", "my MOT is due in June"
    r"|my\s+(?:[\w'’-]+\s+){0,3}?(?:renews|expires|runs\s+out|ends|(?:is|are)\s+due(?:\s+for\s+renewal)?)"
    r"|(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*s\s+(?:are|go|come|happen|start|begin|run|meet|fall|take\s+place)"
    # a thing named by a noun phrase whose last word is a common noun, or an activity, on a day or at a time:
    # "Choir practice is on Tuesdays at 7", "Mum's birthday is on the 14th", "Swimming is every Saturday" (not "Sam is
    # in Leeds on Monday", nor what starts "in May" in general: "Direct sowing outdoors starts in May")
    r"|(?:[\w'’-]+\s+(?:[\w'’-]+\s+){0,2}?(?-i:[a-z][\w-]*)|(?-i:[A-Z][a-z]{2,}ing))\s+(?:is|goes|happens|starts"
    rf"|begins|runs|meets|takes\s+place)(?=\s+(?:on|at|every|each|(?:{WEEKDAY_STEMS})days?)\b))"
    rf"\s+(?:out\s+|back\s+|again\s+)?(?:on|at|in|every|from|each|next|this|(?:{WEEKDAY_STEMS})days?)\b",
    re.IGNORECASE,
)
_WHEN_GIVEN = re.compile(
    rf"\b(?:{WEEKDAY_STEMS})days?\b|\b(?:{MONTHS_BUT_MAY})\b|\bin\s+(?-i:May)\b|\bthe\s+\d{{1,2}}(?:st|nd|rd|th)\b|"
    r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b",
    re.IGNORECASE,
)
_LONG_SENTENCE_WORDS = 11
_ASSISTANT_MIN_WORDS = 8


def _strip_filler(sentence: str) -> str:
    return _FILLER_RUN.sub("", sentence.strip()).strip(" ,.!;:-—–\"'")


def says_when_it_happens(sentence: str) -> bool:
    """Whether a statement without "I" says when a thing happens, by weekday, month, day of the month or clock:
    "The team offsite is in Manchester on the 14th.", "The school run is at 8:15 every morning."."""
    return _THING_WHEN.match(sentence) is not None and _WHEN_GIVEN.search(sentence) is not None


def opens_with_person(sentence: str, people: Collection[str]) -> bool:
    """Whether a statement opens with one of `people` (the user's own, named with a role before: "my sister Meera")
    by name or first name, in any case: "Meera moved to Vancouver.", "Mia's swimming moved to Sundays." tell of
    them."""
    m = _OPENING_NAME.match(sentence)
    if m is None:
        return False
    said = m["name"].lower()  # chat may not capitalise a name: "maddie has a peanut allergy"
    return any(said in (name.lower(), name.split()[0].lower()) for name in people)


def people_named(text: str, people: Collection[str]) -> list[str]:
    """Those of `people` that `text` names, by name or first name (the entity spotter takes no word opening a
    sentence for a name: "Meera moved to Vancouver.")."""
    return [name for name in people if re.search(rf"\b{re.escape(name.split()[0])}\b", text)]


def _is_user_content(rest: str, people: Collection[str]) -> bool:
    n = len(words(rest))
    # a reading of the morning is kept: "152/94 this morning, pulse 78"
    if n >= 2 and _BP_READING.match(rest):
        return True
    if (
        n == 0
        or _TRANSIENT.search(rest)
        or _ABOUT_ASSISTANT.search(rest)
        or _FORGET_ASKED.search(rest)
    ):
        return False
    if (
        (n >= 2 and _FIRST_PERSON.search(rest))
        or NAMED_FACT.match(rest)
        or PERSON_TRAIT.match(rest)
        or ADVICE.match(rest)
        or LET_UNIT.match(rest)
    ):
        return True
    # a change to the user's drug told of the doctor: "he's swapping the atorvastatin for rosuvastatin"
    if n >= 3 and _PRESCRIBER_CHANGE.search(rest):
        return True
    if n >= 3 and people and opens_with_person(rest, people):
        return True
    if n >= 4 and says_when_it_happens(rest):  # "Date night is Fridays."
        return True
    if n >= 3 and (
        TECHNICAL_VALUE.search(rest) or PROCEDURE_OPENING.match(rest) or TEAM_RULE.search(rest)
    ):
        return True
    return n >= _LONG_SENTENCE_WORDS


def _is_assistant_content(rest: str) -> bool:
    if _ASSISTANT_FILLER.search(rest):
        return False
    return len(words(rest)) >= _ASSISTANT_MIN_WORDS


# where a question opens after a statement in the same sentence: "I'm 41 and my knee hurts, is that normal?"
_ASKING = re.compile(
    r"(?:[,;:—–]|\s(?:and|but|so))\s*(?=(?:is|are|am|do|does|did|can|could|should|would|will|"
    r"what|how|why|which|who|where|when|any|anything|thoughts|right|ok|okay)\b[^?]*\?$)",
    re.IGNORECASE,
)


def statement_before_question(sentence: str) -> str:
    """The statement that opens a question ("I'm 41 and my knee hurts, is that normal?" -> "I'm 41 and my knee
    hurts."); "" when no statement stands before the question itself."""
    m = _ASKING.search(sentence)
    if not m:
        return ""
    head = sentence[: m.start()].strip(" ,;:—–")
    return f"{head}." if len(words(head)) >= 2 else ""


# a question asked without its question mark after what the user tells: "my student loan is like 1900 a term how
# do I budget this", "Tashas bday is nov 22 what should I get her", "... 22 months left should I refinance"
_ASKING_UNMARKED = re.compile(
    r"(?:[,;:—–]\s*|\s+)(?:(?:so|but|and)\s+)?(?=(?:(?:how|what|which|where|when|why|who)\s+(?:do|does|did|should"
    r"|can|could|would|will|is|are|am)|should|can|could|would|do|does)\s+(?:i|we|you|u)\b[^.!?]*[.!]?$)",
    re.IGNORECASE,
)
_OPENS_A_QUESTION = re.compile(
    r"(?:do|does|did|can|could|would|should|is|are|will|what|how|why|which|where|when|who)\b",
    re.IGNORECASE,
)


def statement_before_unmarked_question(sentence: str) -> str:
    """The statement before a question asked without a question mark ("my rent is 540 how do I budget this" ->
    "my rent is 540."); "" when there is none, or the sentence was a question all along ("Do you think I can use my
    old ID or do I need to update it")."""
    m = _ASKING_UNMARKED.search(sentence)
    if not m or m.start() == 0:
        return ""
    head = sentence[: m.start()].strip(" ,;:—–-")
    if len(words(head)) < 3 or _OPENS_A_QUESTION.match(head):
        return ""
    return head if head.endswith((".", "!")) else f"{head}."


# the user naming themselves as a chat opens: "Hey, Rafael here", "yo its tom, need help", "this is Marta" (after a
# greeting: "its late" is no name)
_GREETING = (
    r"(?:hi+|hey+|hiya|heya|hello|yo|morning|evening|good\s+(?:morning|afternoon|evening)|howdy|g['’]?day|"
    r"aloha|servus|hola|ola|olá|ciao|salut|bonjour|hallo|moin|hej|hei|kia\s+ora|namaste|salaam|merhaba|ahoj)"
)
_INTRODUCTION = re.compile(
    rf"^\W*(?:(?P<greeted>{_GREETING})\b[\s,.!:;-]*)?"
    r"(?:(?:it['’]?s|its|this\s+is|soy|sou|sono|je\s+suis|ich\s+bin|ik\s+ben)\s+(?P<said>[a-z][a-z-]+)|"
    r"(?P<here>[a-z][a-z-]+)\s+here)"
    r"(?=\s*(?:[,.!;:—–-]|$))(?P<rest>.*)$",
    re.IGNORECASE,
)
_ONLY_GREETING = re.compile(rf"^\W*{_GREETING}(?:\s+there)?\W*$", re.IGNORECASE)
_NOT_NAMES = frozenset(
    re.findall(
        r"\w+",
        "me there again all everyone everybody guys folks team you friend buddy mate just "
        "so ok okay fine quick back another one someone somebody myself i the a "
        "an my our quite really very time late early done over true weird crazy "
        "hard easy nice good great bad cold hot raining snowing urgent important monday tuesday "
        "wednesday thursday friday saturday sunday today tonight tomorrow morning evening "
        "afternoon night midnight noon "
        "official confirmed settled happening final free finished same testing",
    )
)


def is_greeting(sentence: str) -> bool:
    """Whether a sentence only greets ("hello!", "Hey there.")."""
    return _ONLY_GREETING.match(sentence) is not None


def introduced_name(sentence: str, *, greeted: bool = False) -> tuple[str, str] | None:
    """The name a user opens a chat with and what they say after it ("Hey, Rafael here, quick one" -> ("Rafael",
    "quick one")), or None. They name the user only after a greeting (in the sentence, or
    `greeted` before it): "Same here." and "its late" name no one."""
    m = _INTRODUCTION.match(sentence)
    if m is None:
        return None
    name = m["said"] or m["here"]
    if name.lower() in _NOT_NAMES or not (m["greeted"] or greeted):
        return None
    return name[0].upper() + name[1:], m["rest"].lstrip(" ,.;:!—–-")


def marked_task(sentence: str) -> bool:
    """Whether a sentence sets a task down with a marker, however short: "TODO: buy milk.", "Don't forget the
    milk." ("Don't forget it." names no task: two words or more besides the marker)."""
    return (
        _SHORT_TASK_MARK.search(sentence) is not None
        and len(words(_SHORT_TASK_MARK.sub(" ", sentence))) >= 2
    )


def is_content_sentence(sentence: str, role: str = "user", people: Collection[str] = ()) -> bool:
    """True when one sentence may carry a durable fact or a task (not a question, filler or meta remark); `people`:
    the names of the user's own (see `opens_with_person`)."""
    if REMINDER_REQUEST.match(sentence.strip()):
        return role == "user"
    if sentence.rstrip().endswith("?"):
        # a question may follow what the user tells ("I moved my banking to Tide last week, what do I update?")
        head = statement_before_question(sentence.rstrip()) if role == "user" else ""
        return bool(head) and is_content_sentence(head, role, people)
    if role == "user" and (
        marked_task(sentence)
        or introduced_name(sentence)
        or ADVICE.match(sentence.strip())
        or (TEAM_RULE.search(sentence) and len(words(sentence)) >= 3)
    ):
        return True
    rest = _strip_filler(sentence)
    if role == "user":  # "btw the wedding budget is 15,000": what follows the opening
        rest = LEADING_FILLER.sub("", rest).strip()
    if not rest:
        return False
    if role == "assistant":
        return _is_assistant_content(rest)
    if standing_request(rest):  # "always pick an aisle seat, never window"
        return True
    # read as extraction reads it: shorthand said plainly, then opening on a capital
    said = plain(rest)
    return _is_user_content(said[:1].upper() + said[1:], people)


def is_noise(text: str, role: str = "user", people: Collection[str] = ()) -> bool:
    """True when no sentence of `text` carries durable content: greetings, thanks, questions, short filler."""
    if len(text.strip()) < 2:
        return True
    # a sentence is read only so far: a pasted blob costs no more than a statement
    return not any(
        is_content_sentence(s[:MAX_STATEMENT_CHARS], role, people) for s in split_sentences(text)
    )


def is_trivial_prompt(text: str) -> bool:
    """True for prompts not worth a memory lookup: empty, slash commands, greetings, acknowledgements."""
    stripped = text.strip()
    if not stripped or _SLASH_COMMAND.match(stripped):
        return True
    if not any(c.isalnum() for c in stripped):
        return True
    return all(not _strip_filler(s) for s in split_sentences(stripped))
