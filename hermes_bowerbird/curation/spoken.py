"""Chat shorthand said plainly, so extraction reads what the user meant: "im allergic to peanuts" is "I'm allergic to
peanuts", "switched physio to Dr. Khan" is "I switched physio to Dr. Khan", and "contractor is Bill Novak" or
"budget is $45k" speaks of the user's own contractor and budget.

Only the speaker is filled in, and an "'s" that stands for "is" said in full ("my car's a Skoda" is "my car is a
Skoda"); the words the user chose stay theirs. A sentence is taken as it comes from the user's
message, its first letter as they typed it. A thing named without "my" is the user's only when it is one of the
things or people a user has (a budget, a van, a contractor) and typed in lowercase (a capital may open a name:
"Meridian meetings are on Zoom"); a price or a fact of the world stays no one's ("copper is like 14 euro a metre").
The same holds after a comma ("kate left, new manager is Lou"), and a drug whose dose changed is the user's
("metformin went up to 1000"). A note typed as notes are ("boss: Imogen Tate", "rent 1450", "allergic: penicillin")
is said as the sentence it stands for ("My boss is Imogen Tate").
"""

from __future__ import annotations

import re

from ..vocabulary import CONTACT_ROLES, DRUG, METRIC_KIND, METRIC_NAMES, metric_name

_I = re.IGNORECASE
# "im", "ive", "u" and a lone "i" are the user and the assistant; "id" and "ill" are words of their own, "U." an initial
_SHORTHAND = (
    (re.compile(r"\bim\b", _I), "I'm"),
    (re.compile(r"\bive\b", _I), "I've"),
    (re.compile(r"\bu\b(?!\.)"), "you"),
    # a "not" typed without its apostrophe: "i dont eat meat anymore" ("cant" and "wont" too: as words they are rare)
    (
        re.compile(
            r"\b(?P<verb>do|does|did|is|was|are|were|have|has|had|ca|wo|could|would|should)nt\b", _I
        ),
        r"\g<verb>n't",
    ),
)
_LONE_I = re.compile(r"\bi\b")
# "my car's a Skoda", "my mum's in Galway", "my bank's Monzo.", "our GP's Dr Okafor": "'s" said for "is" after the
# user's own thing or person, where what follows is no thing of theirs ("my daughter's name", "my sister's Honda broke
# down" stay possessive); a name or number only where the clause ends with it
_HEAD_WORD = (
    r"(?!(?:for|to|at|on|in|of|with|and|or|but|from|by|about|like)\b)(?-i:[a-z][\w-]*|[A-Z]{2,4}\b)"
)
_IS_CONTRACTED = re.compile(
    rf"\b(?P<head>(?:my|our)\s+(?:{_HEAD_WORD}\s+){{0,2}}?{_HEAD_WORD})['’]s\s+"
    r"(?=(?:a|an|the|called|named|from|in|now|still|really|very|so|due|off|away|back|home|based|"
    r"allergic|pregnant|retired|married|vegan|vegetarian)\b|"
    r"(?:(?:dr|mr|mrs|ms|prof)\.?\s+)?(?-i:[A-Z])[\w’'-]*(?:\s+(?-i:[A-Z])[\w’'-]*){0,2}\s*(?:[.!]|$)|"
    r"[£$€]?\d[\d,.]*\s*(?:[.!]|$))",
    _I,
)
# the user's parent called as a name is, with "'s" for "is" or "has": "Mum's in hospital again", "Dad's been
# unwell" (not "Mum's car": what follows is no thing of theirs)
_PARENT_IS = re.compile(
    r"(?P<who>Mum|Mom|Mam|Dad|Mummy|Daddy|Nan|Nana|Gran|Granny|Grandma|Grandad|Grandpa)['’]s\s+"
    r"(?=(?P<has>been|got|had|gone)\b|(?:in|at|home|back|off|away|not|still|due|now|having|getting|doing|feeling|"
    r"staying|moving|coming|going|retiring|retired|unwell|poorly|ill|sick|better|worse|fine|okay|ok)\b)"
)
# ...or does, said of them by that name: "Mum lives with us now", "Dad works nights" (a present verb of one's life)
_PARENT_DOES = re.compile(
    r"(?P<who>Mum|Mom|Mam|Dad|Mummy|Daddy|Nan|Nana|Gran|Granny|Grandma|Grandad|Grandpa)\s+"
    r"(?=(?:lives|works|stays|uses|drives|volunteers|cares\s+for|looks\s+after|owns|runs)\b)"
)
# what the user did, said without "I": these verbs open a sentence of theirs, not someone's name
DONE_VERBS = (
    "switched|moved|started|finished|booked|bought|sold|cancell?ed|quit|joined|left|got|signed|changed|adopted|found"
    "|dropped|lost|won|passed|failed|sent|paid|ordered|picked|decided|registered|enrolled|applied|accepted|declined"
    "|took|landed|rescheduled|upgraded|downgraded|renewed|hired|met|went|visited|tried|spoke|called|emailed|texted|traded"
    "|told|gave|had|saw|ran|swam|rode|cycled|raced|walked|hiked|lifted|benched|squatted|deadlifted"
)
# a past-tense verb opening a sentence with no one before it: the user did it ("moved to Berlin last week")
_DONE = re.compile(
    rf"(?:(?:finally|just|also|already)\s+)?(?:{DONE_VERBS})\s+\S+\s+\S"
    # ...or what they do, said as few imperatives are: "live in lubbock texas", "work at a cafe on weekends", "take
    # lisinopril 10mg mornings"
    r"|(?:live|grew\s+up)\s+in\s+\S|work\s+(?:at|as|for|in|nights|days|weekends)\b|take\s+\S+\s+\d",
    _I,
)
# ...with theirs: "Changed our minds on the living room", "Sold our car" ("We changed our minds")
_OURS_DONE = re.compile(r"(?:(?:finally|just|also|already)\s+)?\S+\s+our\b", _I)
# what the user is doing now, "I'm" or "I've" left unsaid: "now on escitalopram 10 mg", "moving into a share house in
# brunswick", "been seeing someone" (not a doing that is the sentence's subject: "Living in Berlin is expensive")
_DOING = re.compile(
    r"(?:(?:now|currently|still)\s+(?:on|taking|doing|working|living|seeing|using|reading|watching|learning|"
    r"studying|playing|listening\s+to)\s+\S"
    r"|taking\s+[a-z]+\s+\d+\s*(?:mg|mcg|g|iu|ml)\b"
    r"|(?:moving|starting|working|living|staying)\s+(?:to|into|in|at|as|with|on|for|a|my)\s+\S"
    r"|(?:flying|heading|travell?ing|driving)\s+(?:home|back|out|up|down)?\s*(?:to|for)\s+\S"
    rf"|(?:stopping|quitting|coming\s+off)\s+(?:the\s+|my\s+)?{DRUG}\b)"
    r"(?![^,.;!?]*\b(?:is|was|are|were)\b)",
    _I,
)
# a state of the user's, "I'm" left unsaid: "allergic to bees me not her", "lactose intolerant af so no dairy",
# "also on buspirone 10mg 2x day", "vegan since 2019", "based in brisbane" (not "vegan options are limited")
_STATE = re.compile(
    r"(?:(?:also|still|now|currently|severely|very|super|mildly|deathly|badly)\s+)*"
    r"(?:allergic\s+to\s+\S|(?:lactose|gluten|fructose|histamine)[\s-]+intolerant\b|"
    r"(?:vegan|vegetarian|veggie|pescatarian|coeliac|celiac|diabetic|pregnant|teetotal|sober)"
    r"(?=\s*(?:$|[,.!;]|(?:now|since|btw|af|so|but|and|too|lol|for|again|these\s+days)\b))|"
    r"on\s+[a-z][a-z-]+\s+\d+(?:\.\d+)?\s*(?:mg|mcg|µg|ml|iu|units)\b|based\s+(?:in|out\s+of)\s+\S)",
    _I,
)
# a diagnosis told without "I was": "diagnosed w graves disease today"
_DIAGNOSED = re.compile(
    r"(?:just\s+|finally\s+|officially\s+)?(?:got\s+)?diagnosed\s+(?:w/?|with)\s+(?=\S)", _I
)
# a drug's new dose noted tersely: "dose down again, carbimazole 10mg now"
_DOSE_NOTE = re.compile(
    rf"(?:(?:dose|doses)\s+(?:down|up|lowered|raised|cut|changed)(?:\s+again)?\s*[,:;-]?\s*)?(?P<drug>{DRUG})\s+"
    r"(?P<dose>\d+(?:\.\d+)?\s*(?:mg|mcg|µg|ml|units|iu))\s+now\b",
    _I,
)
_BEEN = re.compile(r"been\s+(?:seeing|dating|working|living|taking|doing|going)\s+\S", _I)
# a thing named without "my" and given a value: "contractor is Bill Novak", "budget is $45k total", "new manager is
# Tom Becker"; the thing's words in lowercase as typed (a capital may open a name: "Meridian meetings are on Zoom"),
# the last of them one of the user's people (vocabulary.CONTACT_ROLES and family) or things (`_OWN_THINGS`): a price
# or a fact of the world is no one's ("copper is like 14 euro a metre now", "customers boiler is a worcester bosch")
_OWN_THINGS = (
    r"budget|rent|salary|pay|wage|rate|fee|deadline|flight|train|appointment|meeting|standup|shift|shifts|schedule|"
    r"address|number|phone|email|wifi|car|van|bike|lease|mortgage|loan|savings|target|goal|weight|office|desk|team|"
    r"project|plan|commute|hours|class|lesson|lessons|exam|exams|thesis|major|school|job|landlord|boss|manager|"
    r"supervisor|insurance|visa|contract|notice|birthday|anniversary|wedding|date|start date|due date|checkup|"
    r"check-up|follow-up|infusion|scan|mri|surgery|operation|procedure|dose|jab|injection|bloods|blood test|"
    r"consultation|session|therapy|treatment|"
    r"partner|wife|husband|boyfriend|girlfriend|son|daughter|mum|mom|dad|sister|brother|kids|children|twins"
)
# the user's children opening a sentence, its capital the sentence's own ("Kids are 7 and 10."; a thing's word with
# a capital may open a name: "Budget is $45 a day")
_OWN_THING_FIRST = re.compile(r"(?:Kids|Children|Twins)\s+are\b")
# ...or, with "the" or without, where they go to school: "The kids go to St Mary's primary", "Kids are at Hillcrest"
_CHILDREN_SCHOOLED = re.compile(
    r"(?:the\s+)?(?P<who>kids|children|twins)\s+(?=(?:go\s+to|attend|are\s+(?:at|in)|started\s+at)\s+(?-i:[A-Z]))",
    re.IGNORECASE,
)
_BARE_THING = re.compile(
    rf"(?:[a-z][a-z-]*\s+){{0,2}}(?:{_OWN_THINGS}|{CONTACT_ROLES})\s+(?:is|are)\s+(?:now\s+)?(?!like\b)"
    r"(?:\S+\s+){0,3}?[^\s\d]{0,2}(?:\d|[A-Z][a-z]|(?:dr|mr|mrs|ms|prof)\.?\s+[a-z])"
)
# one of the user's contacts named with "the": "the landlady is Montserrat Puig", "the landlord is a guy called
# Réjean Thibodeau" (a name follows, or someone "called" one)
_THE_CONTACT = re.compile(
    rf"(?:the\s+)?(?:new\s+)?(?:{CONTACT_ROLES})\s+(?:is|['’]s)\s+(?:(?:a|an|this)\s+(?:guy|man|woman|lady|bloke|chap|"
    r"fella|girl)\s+(?:called|named)\s+\S|(?:(?:dr|mr|mrs|ms|miss|mx|prof|frau|herr|me|madame|monsieur)\.?\s+)?"
    r"(?-i:[A-Z])[\w'’-]+)",
    _I,
)
# an amount of the user's money named with "the": "The wedding budget is 15,000 pounds all in", "the rent is 1,150 a
# month" (a sum of theirs; "the price is $12" may be anyone's)
_THE_AMOUNT = re.compile(
    r"the\s+(?:[a-z][a-z-]*\s+){0,2}?(?:budget|rent|salary|mortgage|deposit)\s+(?:is|['’]s)\s+(?:now\s+)?"
    r"(?:about\s+|around\s+|roughly\s+)?[£$€]?\d",
    _I,
)
# a drug named without "my" whose dose changed: "metformin went up to 1000", "sertraline dose is down to 50mg"
_BARE_DOSE = re.compile(
    rf"{DRUG}(?:\s+dose)?\s+(?:was|has been|got|went|is|is going)\s+(?:\w+\s+){{0,2}}?(?:up|down|back)?\s*to\s+\d",
    _I,
)
# notes as a terse user types them, said as the sentence they stand for: "boss: Imogen Tate" (a label and its
# value), "rent 1450" and "salary 78k" (one of the user's things and an amount), "allergic: penicillin", "new job at
# Lumen Studio starting march", "cat named Pickle", "gf Juno moving in may"
# (a label of a pasted form, "Name: ...", "Date: ...", "Goal: ...", "Email: ...", is no note of the user's)
_NOTE_LABELS = (
    rf"{CONTACT_ROLES}|boss|manager|supervisor|team lead|work|job|shift|shifts|school|kid|kids|son|daughter"
    r"|cat|dog|pet|vet|gym|address|budget|rent|salary|mortgage|commute|weight|car|van|bike"
    r"|(?:day\s+|hourly\s+)?rate|fees?|nursery|daycare|coworking|clients|subs|subscriptions|insurance"
)
# "kid's school: Harrow Lane Primary", "boss there: Anand Ferreira", "kid = Milo"
_NOTE_LABEL = re.compile(
    rf"(?P<thing>(?:(?:new|current|regular|main|retainer|active)\s+)?(?:(?:kid|son|daughter|cat|dog|partner)(?:['’]s)?\s+)?"
    rf"(?:{_NOTE_LABELS}))"
    r"(?:\s+(?:there|now|right\s+now|rn|atm|change|changed))?\s*[:=]\s*(?P<value>[^\s:=]\S*(?:\s+[^\s:=]+){0,20})",
    _I,
)
_NOTE_AMOUNT = re.compile(
    rf"(?P<thing>(?:[a-z][a-z-]*\s+)?(?!pay\b|number\b)(?:{_OWN_THINGS}))\s+"
    r"(?P<value>(?:now\s+)?(?:[$£€~]|about\s+|around\s+|approx\.?\s+)?\d.*)"
)
# a measure of the user's body or training and its value, as a tracking user notes it: "bp this morning at home
# 126/80", "resting hr 60 now", "ferritin up to 34!!", "SQUAT PR 150kg today!!!", "bodyweight 83", after a label of
# its own: "checkup with dra benavides: LDL now 128!!" (not "pulse of the city is 5 stars", "mile 3 was hard")
_NOTE_METRIC = re.compile(
    r"(?P<label>[^:\d]{1,50}:\s+)?"
    rf"(?P<thing>(?:new\s+)?(?:{METRIC_NAMES}){METRIC_KIND})"
    r"(?P<when>(?:\s+(?:this|last|today|tonight|yesterday|morning|evening|night|week|month|at|home|the|clinic|"
    r"gym|surgery|again|finally|officially|still))*)"
    r"(?P<link>(?:\s*[:=]|\s+(?:is|was|now|currently|up\s+to|down\s+to|back\s+to|around|about|at))*)\s+"
    r"(?P<value>\d[\d.,:/]*(?:\s?(?:kg|kgs|kilos?|lbs?|w|watts|bpm|ms|mg/dl|mmol/l|mmol|%|h\d*|hrs?|hours?|mins?|"
    r"k|km|steps|ng/ml|nmol/l|iu)\b)?)"
    r"(?P<rest>(?:\s*(?:[!.,;)]|$)|\s+(?:now|today|tonight|this|last|again|at|on|in|for|since|from|after|before|"
    r"and|but|so|lol|yay|finally|wow)\b).*)",
    _I,
)
_NOTE_ALLERGY = re.compile(r"allerg(?:ic|ies|y)\s*:\s*(?P<value>\S.*)", _I)
_NOTE_NEW_JOB = re.compile(r"new\s+(?:job|position|role|gig)\s+(?:at|with|as|@)\s*\S", _I)
_NOTE_PET = re.compile(
    r"(?P<pet>dog|cat|puppy|kitten|rabbit|bunny|parrot|hamster|horse)\s+(?:named|called)\s+(?P<name>[A-Z]\w*)"
)
# one of the user's people noted by role and name: "Childminder Gail Urquhart.", "GP Dr Rennie, Culloden Medical
# Practice" (the name capitalised, and what follows a comma only where they are)
_NOTE_CONTACT = re.compile(
    rf"(?P<role>{CONTACT_ROLES})\s+(?P<name>(?:(?:dr|mr|mrs|ms|miss|prof)\.?\s+)?(?-i:[A-Z])[\w'’-]+"
    r"(?:\s+(?-i:[A-Z])[\w'’-]+){0,2})(?P<rest>,\s+(?:at\s+|in\s+)?(?-i:[A-Z])[^,.!?]*)?[.!]?",
    _I,
)
# one of the user's people by role and name, opening what is said of them without "my": "Sometimes babysitter Chloe
# come, she is UVic student, $18 per hour", "wife Morag is doing it with me"
_ROLE_OPENING = re.compile(
    rf"(?:(?:sometimes|usually|often|normally|also)\s+)?(?:the\s+)?(?P<role>{CONTACT_ROLES}|husband|wife|partner|son|"
    r"daughter|boss|manager|flatmate|roommate)\s+"
    r"(?!(?-i:Who|What|Which|When|Where|How|Why|The|This|That|It|Is|Are|I|You|He|She|We|They|"
    r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|Today|Tomorrow)\b)(?=(?-i:[A-Z])[\w'’-]+\s*(?:,\s*)?[a-z])",
    _I,
)
# a child or partner named without "my": "Son is Ren, 7 years old", "Daughter is Mio" (no name opens with these)
_NOTE_FAMILY = re.compile(
    r"(?:(?:older|younger|oldest|youngest|eldest|little)\s+)?(?:son|daughter|husband|wife|partner|kids|children)"
    r"\s+(?:is|are)\s+(?-i:[A-Z])",
    _I,
)
# a body weight noted alone: "84kg.", "176 lbs"
_NOTE_WEIGHT = re.compile(r"(?P<value>\d{2,3}(?:\.\d)?\s?(?:kg|kgs|lbs?|st))[.!]?", _I)
_NOTE_PARTNER = re.compile(
    r"(?:gf|bf|hubby|wifey|wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?)\s+(?=[A-Z][a-z])"
)
# words that open a sentence about something other than the user's own thing
_NOT_A_THING = re.compile(
    r"(?:a|an|the|this|that|these|those|it|its|it's|there|here|he|she|they|we|you|i|my|our|your|his|her|their"
    r"|what|which|who|where|when|why|how|everything|something|nothing|anything|everyone|someone|nobody|anyone"
    r"|each|every|all|both|some|any|no|one|today|tomorrow|tonight|yesterday|weather|traffic)",
    _I,
)
# the same after a comma, once something else was said first: "kate left, new manager is Lou"
_BARE_THING_AFTER = re.compile(
    rf"(?<=,\s)(?>(?:(?:and|so|but)\s+)?)(?!(?i:{_NOT_A_THING.pattern})\b)(?={_BARE_THING.pattern})"
)


def plain(sentence: str, *, speaking: bool = True) -> str:
    """`sentence` (filler already taken off, as typed) with chat shorthand said plainly; unchanged otherwise. A verb
    opening it is the user's only while they are `speaking` of themselves: after "Mateo got home." a sentence "Went
    to his room." is his."""
    for pattern, word in _SHORTHAND:
        sentence = pattern.sub(word, sentence)
    sentence = _LONE_I.sub("I", sentence)
    sentence = _IS_CONTRACTED.sub(r"\g<head> is ", sentence)
    if parent := _PARENT_IS.match(sentence):
        verb = "has" if parent["has"] else "is"
        sentence = f"My {parent['who'].lower()} {verb} {sentence[parent.end() :]}"
    elif parent := _PARENT_DOES.match(sentence):
        sentence = f"My {parent['who'].lower()} {sentence[parent.end() :]}"
    if speaking and _DONE.match(sentence):
        speaker = "We" if _OURS_DONE.match(sentence) else "I"
        return f"{speaker} {sentence[0].lower()}{sentence[1:]}"
    if speaking and (_DOING.match(sentence) or _STATE.match(sentence)):
        return f"I'm {sentence[0].lower()}{sentence[1:]}"
    if speaking and (diagnosed := _DIAGNOSED.match(sentence)):
        return f"I was diagnosed with {sentence[diagnosed.end() :]}"
    if speaking and (dose := _DOSE_NOTE.match(sentence)):
        return (
            f"My {dose['drug'].lower()} dose is down to {dose['dose']} now{sentence[dose.end() :]}"
        )
    if speaking and _BEEN.match(sentence):
        return f"I've {sentence[0].lower()}{sentence[1:]}"
    if speaking and (_THE_CONTACT.match(sentence) or _THE_AMOUNT.match(sentence)):
        role = re.sub(r"^the\s+", "", sentence, flags=_I)
        return f"My {role[0].lower()}{role[1:]}"
    first = sentence.split(maxsplit=1)[0] if sentence.strip() else ""
    if speaking and (schooled := _CHILDREN_SCHOOLED.match(sentence)):
        return f"My {schooled['who'].lower()} {sentence[schooled.end() :]}"
    noted = _noted(sentence) if speaking and not _NOT_A_THING.fullmatch(first) else None
    if noted is not None:
        return noted
    if not _NOT_A_THING.fullmatch(first):
        # a drug's capital is no name's: "Metformin went up" -> "My metformin"
        if _BARE_DOSE.match(sentence):
            return f"My {sentence[0].lower()}{sentence[1:]}"
        if _BARE_THING.match(sentence):
            return f"My {sentence}"
        # ...and the user's children opening the sentence in its capital: "Kids are 7 and 10."
        if _OWN_THING_FIRST.match(sentence) and _BARE_THING.match(
            lowered := f"{first.lower()}{sentence[len(first) :]}"
        ):
            return f"My {lowered}"
    return _BARE_THING_AFTER.sub(_own, sentence, count=1)


def _noted(sentence: str) -> str | None:
    """The sentence a note stands for ("rent 1450" -> "My rent is 1450"), or None when `sentence` is no note."""
    if m := _NOTE_ALLERGY.fullmatch(sentence):
        return f"I'm allergic to {m['value']}"
    if m := _NOTE_LABEL.fullmatch(sentence) or _NOTE_AMOUNT.fullmatch(sentence):
        thing = _as_noted(m["thing"])
        return f"My {thing} {'are' if re.search(r'[^s]s$', thing) else 'is'} {m['value']}"
    if m := _NOTE_METRIC.fullmatch(sentence):
        thing = metric_name(m["thing"])
        link = re.sub(r"^\s*[:=]?\s*|\b(?:is|was)\b\s*", "", m["link"]).strip()
        said = f"my {thing}{m['when']} is {link + ' ' if link else ''}{m['value']}{m['rest']}"
        return f"{m['label']}{said}" if m["label"] else f"M{said[1:]}"
    if _NOTE_NEW_JOB.match(sentence):
        return f"I have a {sentence[0].lower()}{sentence[1:]}"
    if m := _NOTE_PET.match(sentence):
        return f"My {m['pet']} is named {m['name']}{sentence[m.end() :]}"
    if _NOTE_PARTNER.match(sentence):
        return f"My {sentence}"
    if m := _NOTE_CONTACT.fullmatch(sentence):
        return f"My {_as_noted(m['role'])} is {m['name']}{m['rest'] or ''}."
    if m := _ROLE_OPENING.match(sentence):
        return f"My {_as_noted(m['role'])} {sentence[m.end() :]}"
    if _NOTE_FAMILY.match(sentence):
        return f"My {sentence[0].lower()}{sentence[1:]}"
    if m := _NOTE_WEIGHT.fullmatch(sentence):
        return f"My weight is {m['value']}."
    return None


def _as_noted(label: str) -> str:
    """A note's label inside a sentence: lowercase, but an acronym ("GP", "CPA")."""
    return label if label.isupper() else label.lower()


def _own(m: re.Match[str]) -> str:
    """The user's thing named after a comma: "new manager is Lou" -> "my new manager is Lou"."""
    return f"{m.group()}my "
