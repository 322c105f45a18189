"""Subject keys (declared in vocabulary.py) for sentences that state the current value of a changing fact."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hermes_bowerbird import vocabulary as vocab
from hermes_bowerbird.curation.sentences import MAX_STATEMENT_CHARS, reported_spans
from hermes_bowerbird.curation.tool_names import CHOSEN_ONLY_WITH_A_CAPITAL, KNOWN_TOOLS, SLOT_OF
from hermes_bowerbird.text import DIGIT_WORDS, normalise_entity
from hermes_bowerbird.text import chat_words as words

_I = re.IGNORECASE
Key = Callable[[re.Match[str]], str | None]

# ---------------------------------------------------------------- vocabularies

# where someone is from, said as who they are ("I'm British", "I'm half Korean"): capitalised like a name, never one
_DEMONYMS = (
    r"British|English|Irish|Scottish|Welsh|Spanish|Danish|Swedish|Finnish|Polish|Turkish|Kurdish|Flemish|Cornish|"
    r"Chinese|Japanese|Vietnamese|Portuguese|Taiwanese|Lebanese|Sudanese|Senegalese|Nepalese|Maltese|Congolese|"
    r"Burmese|American|Canadian|Mexican|Brazilian|Argentin(?:e|ian)|Colombian|Chilean|Peruvian|Venezuelan|Cuban|"
    r"Italian|Russian|Ukrainian|Indian|Australian|Austrian|Belgian|Hungarian|Romanian|Bulgarian|Serbian|Croatian|"
    r"Norwegian|Nigerian|Kenyan|Ghanaian|Egyptian|Iranian|Syrian|Korean|German|Persian|Malaysian|Indonesian|"
    r"Algerian|Moroccan|Tunisian|Ethiopian|Estonian|Latvian|Lithuanian|Slovenian|Bosnian|Albanian|Macedonian|"
    r"Georgian|Armenian|Haitian|Jamaican|Dominican|Filipin[oa]|Thai|Greek|Dutch|French|Swiss|Czech|Slovak|"
    r"Pakistani|Bangladeshi|Israeli|Iraqi|Saudi|Emirati|Nepali|Kiwi|Scots?|Latin[oa]|Asian|African|European|"
    r"Hispanic|Arab|Texan|Californian|Puerto Rican|Sri Lankan|South African|New Zealander"
)
_DEMONYM = re.compile(rf"\b(?:{_DEMONYMS})\b")
# a faith or a way of life, capitalised like a name: "I'm Muslim" names no one
_FAITHS = (
    r"Muslim|Jewish|Catholic|Christian|Hindu|Buddhist|Sikh|Mormon|Protestant|Orthodox|Atheist|Agnostic|Quaker|"
    r"Jain|Pagan|Lutheran|Baptist|Methodist|Anglican|Evangelical"
)
_DIETS = (
    r"vegan|vegetarian|veggie|pescatarian|pescetarian|flexitarian|keto|ketogenic|paleo|carnivore|omnivore|"
    r"plant[- ]based|whole[- ]?food plant[- ]based|gluten[- ]free|dairy[- ]free|halal|"
    r"kosher|low[- ]carb|low[- ]fat|no[- ]carb|mediterranean|whole ?30|raw vegan|fruitarian|macrobiotic|"
    r"sugar[- ]free|meat[- ]eater|intermittent fasting"
)
_FOODS = r"meat|red meat|fish|seafood|pork|beef|chicken|poultry|dairy|cheese|eggs|gluten|sugar|animal products|carbs"
# foods that commonly disagree with people, as a user names them
_INTOLERABLE = (
    r"gluten|wheat|dairy|milk|cheese|eggs?|soy|soya|onions?|garlic|beans|pulses|spicy food|caffeine|coffee|alcohol|"
    r"red wine|sugar|fructose|histamine|fodmaps?|shellfish|pork|red meat|fried food|corn|nightshades|tomatoes"
)
_NUMBER_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_TEENS = {"eighteen": 18, "nineteen": 19}
_NUMBER_NAMES = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty"
)
_AGE = (
    r"(?:1[89]|[2-9]\d|1[01]\d|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|"
    r"four|five|six|seven|eight|nine))?|eighteen|nineteen)"
)
_DECADES = (
    r"(?:twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties|[2-9]0s|[2-9]0's)"
)
_JOB_NOUN = (
    r"[a-z-]*(?:er|or|ist|ian|ant|ent|ect|ive|eur|ic|man|woman|person|nurse|chef|line cook|"
    r"analyst|engineer|developer|designer|consultant|scientist|lawyer|doctor|teacher|professor|"
    r"student|intern|freelancer|founder|owner|manager|director|architect|artist|writer|"
    r"accountant|pilot|farmer|barista|clerk|dentist|surgeon|therapist|researcher|lead|head|cto|ceo|vp)"
)
# a job's title said without "a": "events manager", "head of sales", "senior grounds supervisor"
_TITLE = (
    r"(?:manager|director|engineer|developer|designer|consultant|analyst|coordinator|supervisor|lead|head\s+of\s+\w+|"
    r"officer|assistant|administrator|nurse|teacher|chef|editor|producer|buyer|trainer|technician|specialist|"
    r"associate|partner|executive|president|vp|cto|ceo|cfo|coo|founder|receptionist|secretary|clerk|foreman|"
    r"captain|principal|professor|lecturer|researcher|scientist|architect|accountant|paralegal)"
)
_NOT_JOBS = (
    r"(?:fan|member|mother|father|parent|dad|mom|mum|brother|sister|daughter|son|wife|husband|partner|"
    r"vegan|vegetarian|beginner|introvert|extrovert|perfectionist|optimist|pessimist|believer|"
    r"meditator|runner|swimmer|cyclist|climber|reader|gamer|lover|other|user|customer|member|"
    r"neighbou?r|owner of a \w+|person who|regular|smoker|drinker|sleeper|eater|dreamer|worrier|"
    r"night owl|morning person|people person|cat person|dog person|listener|learner|pleaser|"
    r"supporter|survivor|"
    r"fighter|follower|christian|catholic|muslim|buddhist|atheist|agnostic|democrat|republican|liberal|"
    r"conservative|libertarian|homeowner|renter|traveller|traveler|thinker|overthinker|planner|"
    r"procrastinator|achiever|natural|born|proud|lifelong|die-?hard|recovering|former|ex|wannabe|aspiring|"
    r"amateur|hobby|weekend|big|huge|total|good|great|bad|terrible|quick|fast|slow|light|heavy|early|late|"
    r"romantic|skeptic|sceptic|cynic|workaholic|alcoholic|diabetic|epileptic|fanatic|catholic|expert|hiker|biker|"
    r"skier|surfer|golfer|jogger|walker|camper|skater|birder|collector|hobbyist|enthusiast|nerd|geek)\b"
)
_PETS = (
    r"dogs?|cats?|pupp(?:y|ies)|kittens?|parrots?|hamsters?|rabbits?|bunn(?:y|ies)|horses?|turtles?|tortoises?|"
    r"guinea pigs?|snakes?|lizards?|chickens?|ferrets?|budgies?|goldfish"
)
_VEHICLES = (
    r"car|truck|pickup|van|minivan|suv|tesla|motorcycle|motorbike|scooter|e-bike|ebike|bike|bicycle"
)
# a car told by its make ("got a vw crafter", "bought a Honda"): the car slot; not makes that are words too (mini, ram,
# seat, smart)
_CAR_MAKES = (
    r"toyota|honda|ford|vw|volkswagen|bmw|audi|mercedes|merc|kia|hyundai|nissan|subaru|mazda|volvo|skoda|"
    r"peugeot|renault|citroen|citroën|fiat|jeep|chevy|chevrolet|dodge|gmc|lexus|porsche|rivian|polestar|opel|"
    r"vauxhall|mitsubishi|suzuki|dacia|cupra|byd|land rover|range rover|jaguar|buick|cadillac|chrysler|lincoln|"
    r"acura|infiniti|genesis|alfa romeo|lancia|saab"
)
# the body's parts an injury is named by (its key: user:health:<part>-injury)
_INJURED_PARTS = (
    "knee",
    "back",
    "shoulder",
    "ankle",
    "wrist",
    "hip",
    "elbow",
    "neck",
    "foot",
    "hamstring",
    "achilles",
    "acl",
    "meniscus",
)
_PARTS = "|".join(_INJURED_PARTS)
_CONDITIONS = (
    r"(?:type [12] )?diabetes|prediabetes|asthma|adhd|autism|depression|anxiety|panic attacks|ptsd|ocd|"
    r"bipolar(?: disorder)?|insomnia|sleep apnea|migraines?|c(?:o)?eliac(?: disease)?|ibs|crohn'?s(?: disease)?|"
    r"colitis|arthritis|high blood pressure|hypertension|high cholesterol|cancer|long covid|covid|burnout|"
    r"chronic pain|back pain|tendinitis|tinnitus|eczema|psoriasis|epilepsy|fibromyalgia|lupus|"
    r"(?:fructose|lactose|gluten|histamine)\s+(?:malabsorption|intolerance)|plantar fasciitis|bursitis|shin splints|"
    r"(?:patellar\s+|achilles\s+)?tendinopathy|a stress fracture|graves(?:['’])?\s+disease|hashimoto['’]?s|"
    r"hypothyroidism|anemia|gout|a heart condition|"
    rf"a (?:bad |torn |broken |sprained )(?:left |right )?(?:{_PARTS})(?: injury)?|"
    rf"an? (?:left |right )?(?:{_PARTS}) injury|an? (?:eating|sleep|anxiety) disorder"
)
_CONDITION_ADJECTIVES = {
    "diabetic": "diabetes",
    "asthmatic": "asthma",
    "epileptic": "epilepsy",
    "anemic": "anemia",
    "autistic": "autism",
    "pregnant": "pregnancy",
    "celiac": "celiac",
    "coeliac": "celiac",
    # beside a diet, not one: "I'm vegetarian" and "I'm lactose intolerant" both hold
    "lactose intolerant": "lactose-intolerance",
    "lactose-intolerant": "lactose-intolerance",
    "bipolar": "bipolar",
    "depressed": "depression",
    "burned out": "burnout",
    "burnt out": "burnout",
}
_CONDITION_SYNONYMS = {
    "high blood pressure": "hypertension",
    "migraines": "migraine",
    "panic attacks": "anxiety",
    "celiac disease": "celiac",
    "coeliac": "celiac",
    "coeliac disease": "celiac",
    "crohns": "crohn",
    "crohn's": "crohn",
    "crohn's disease": "crohn",
    "bipolar disorder": "bipolar",
    "long covid": "covid",
}

# (canonical activity, surface forms as nouns/gerunds, bare verbs that need a frequency to count as a routine)
_ACTIVITIES: tuple[tuple[str, str, str], ...] = (
    ("running", r"running|jogging|marathons?|5ks?|10ks?", r"run|jog"),
    ("swimming", r"swimming|laps", r"swim"),
    ("cycling", r"cycling|biking|mountain biking|bike rides?", r"cycle|bike"),
    ("yoga", r"yoga|hot yoga", ""),
    ("meditation", r"meditation|meditating|mindfulness", r"meditate"),
    ("climbing", r"climbing|rock climbing|bouldering", r"climb|boulder"),
    ("hiking", r"hiking|hikes|trail running", r"hike"),
    (
        "gym",
        r"the gym|gym|weightlifting|weight lifting|lifting(?: weights)?|strength training|working out|"
        r"crossfit|workouts?",
        r"lift|work out",
    ),
    ("pilates", r"pilates", ""),
    ("walking", r"walking|long walks|walks", r"walk"),
    ("tennis", r"tennis|padel|squash|badminton|pickleball|table tennis|ping pong", ""),
    ("golf", r"golf", ""),
    ("football", r"football|soccer|futsal", ""),
    ("basketball", r"basketball|hoops", ""),
    ("volleyball", r"volleyball", ""),
    (
        "martial-arts",
        r"martial arts|karate|judo|jiu[- ]jitsu|bjj|taekwondo|kung fu|muay thai|boxing|kickboxing|"
        r"fencing",
        r"box|spar",
    ),
    ("dancing", r"dancing|salsa|ballet|tango", r"dance"),
    ("rowing", r"rowing|kayaking|canoeing|paddleboarding", r"row|paddle"),
    ("surfing", r"surfing", r"surf"),
    ("skiing", r"skiing|snowboarding", r"ski|snowboard"),
    (
        "music",
        r"(?:the )?(?:acoustic |electric |classical |bass )?(?:guitar|piano|violin|cello|drums|bass|ukulele|"
        r"saxophone|sax|flute|trumpet|keyboard|clarinet|harp|banjo|mandolin|accordion|trombone|oboe|"
        r"harmonica)|"
        r"music lessons",
        "",
    ),
    ("singing", r"singing|choir", r"sing"),
    ("painting", r"painting|watercolou?rs?", r"paint"),
    ("drawing", r"drawing|sketching", r"draw|sketch"),
    ("pottery", r"pottery|ceramics", ""),
    ("gardening", r"gardening|the garden", r"garden"),
    ("cooking", r"cooking|meal prep(?:ping)?", r"cook"),
    ("baking", r"baking|sourdough", r"bake"),
    ("knitting", r"knitting|crochet(?:ing)?|sewing|quilting", r"knit|sew|crochet"),
    ("photography", r"photography|film photography", ""),
    ("journaling", r"journaling|journalling|a journal", r"journal"),
    ("reading", r"reading", r"read"),
    ("writing", r"writing|poetry", r"write"),
    ("chess", r"chess", ""),
    ("gaming", r"video games|gaming|board games", r"game"),
    ("woodworking", r"woodworking|carpentry", ""),
    ("fishing", r"fishing", r"fish"),
    ("birdwatching", r"birdwatching|birding", ""),
    ("volunteering", r"volunteering", r"volunteer"),
)
_ACTIVITY_NOUNS = "|".join(nouns for _, nouns, _ in _ACTIVITIES)
_ACTIVITY_VERBS = "|".join(verbs for _, _, verbs in _ACTIVITIES if verbs)
_FREQUENCY = (
    r"(?:every|each) (?:single )?(?:day|morning|night|evening|week|weekend|other day|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|daily|nightly|weekly|twice a|three times a|"
    r"\d+ (?:times|days) a|once a|on (?:weekends|weekdays|mondays|tuesdays|wednesdays|thursdays|fridays|"
    r"saturdays|sundays)|most (?:days|mornings|evenings|nights)|at (?:sunrise|dawn|lunch)|before work|"
    r"after work|for (?:an hour|\d+ (?:minutes|mins|hours|miles|km|k)|half an hour)|\d+ ?(?:k|km|miles)\b|"
    r"regularly|religiously|in the mornings?|in the evenings?|at \d{1,2}(?::\d\d)? ?(?:am|pm|a\.m\.|p\.m\.)"
)

# what follows "deploy on", "test with", "build for" without being a tool: a day, a month, an environment
_NOT_TOOLS = frozenset(
    f"{word}{plural}"
    for word in re.findall(
        r"\w+",
        "monday tuesday wednesday thursday friday saturday sunday weekend weekday january february march april "
        "may june july august september october november december production prod staging stage dev "
        "development preview test testing qa uat sandbox local localhost release demand merge push",
    )
    for plural in ("", "s")
)
_DRUG = vocab.DRUG
# when it is taken, or how much: "every morning", "daily", "twice a day", "at night", "with breakfast", "20mg"
_DOSING = (
    r"(?:every|each)\s+(?:day|morning|night|evening)|daily|nightly|(?:once|twice|three times)\s+a\s+day|"
    r"(?:one|two|three|four|[1-4])\s*(?:x|times)\s+(?:a|per)\s+day|"
    r"at\s+(?:night|bedtime)|in\s+the\s+(?:morning|evening)s?|with\s+(?:breakfast|dinner|food|meals)|"
    rf"\d+\s?(?:mg|mcg|ml)\b|for\s+(?:my\s+)?(?:{_CONDITIONS})"
)
_DOSE = r"\d+(?:\.\d+)?\s?(?:mg|mcg|ml|g)\b"
# what a dose was changed to, where the unit may go unsaid: "my metformin went up to 1000"
_NEW_DOSE = (
    rf"(?:{_DOSE}|\d{{2,4}}\b(?!\s*(?:%|percent|pounds|dollars|euros?|quid|bucks|people|times)))"
)
# "pounds" only after "weigh": "I'm down to 50 pounds" may be money
_WEIGHT = r"\d+(?:\.\d+)?\s?(?:kg|kgs|kilos?|kilograms?|lbs?|stone|st)\b"
_MANAGER = r"(?:manager|boss|supervisor|team lead|tech lead)"
# the people the user goes to for a service: one of each at a time ("my dentist is Dr. Okafor")
_CONTACT = rf"(?:{vocab.CONTACT_ROLES})"
# a person's name after "is": not a people's or a faith's ("my landlord is Greek")
_PERSON_NAME = (
    rf"(?:(?:(?-i:Dr|Mr|Mrs|Ms|Miss|Prof)\.?\s+)?(?!(?-i:{_DEMONYMS}|{_FAITHS})\b)(?-i:[A-Z])\w+|"
    # a title makes a name of a word typed in lowercase: "my gp is dr hollis"
    rf"(?:dr|doctor|mr|mrs|ms|miss|prof)\.?\s+(?!(?:who|that|said|says|is|was|and|but|or|about|at|in|on)\b)[a-z]\w+)"
)
_HOW_MANY = rf"(?:\d{{1,2}}|{_NUMBER_NAMES}|a couple of|a few|several)"
_ONE_MORE = r"(?:second|third|fourth|another|other|extra)\s+"
_ACTION_SUBJECT = {
    "deploy": vocab.DEPLOY_TOOL,
    "host": vocab.HOSTING,
    "test": vocab.TEST_FRAMEWORK,
    "build": vocab.BUILD_TOOL,
    "lint": vocab.LINTER,
    "format": vocab.FORMATTER,
    "monitor": vocab.MONITORING,
    "store": vocab.DATABASE,
}


def _clean(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", normalise_entity(name)).strip("-")


def _singular(word: str) -> str:
    word = word.lower()
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def spoken_number(text: str) -> int | None:
    """An age written as digits or English words ("41", "forty-one", "forty one") as an int, else None."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    if text in _TEENS:
        return _TEENS[text]
    parts = re.split(r"[- ]", text)
    tens = parts[0]
    unit = parts[1] if len(parts) > 1 else None
    if tens not in _NUMBER_WORDS or (unit is not None and unit not in DIGIT_WORDS):
        return None
    return _NUMBER_WORDS[tens] + (DIGIT_WORDS[unit] if unit else 0)


# ---------------------------------------------------------------- key builders


def _fixed(key: str) -> Key:
    return lambda m: key


def _grouped(family: str, group: int | str = 1) -> Key:
    def key(m: re.Match[str]) -> str | None:
        value = m.group(group)
        cleaned = _clean(value) if value else ""
        return f"{family}{cleaned}" if cleaned else None

    return key


def _tool_choice(m: re.Match[str]) -> str | None:
    action = (m.groupdict().get("action") or "").lower()
    tool = m.group("tool")
    if action in _ACTION_SUBJECT:
        # "we deploy with Ansible", "we host on Hetzner"; not "we deploy on Fridays" or "we deploy to production"
        name = normalise_entity(tool)
        named = name in KNOWN_TOOLS or (tool[0].isupper() and name not in _NOT_TOOLS)
        return _ACTION_SUBJECT[action] if named else None
    if tool.islower() and tool in CHOSEN_ONLY_WITH_A_CAPITAL:
        return None
    return SLOT_OF.get(normalise_entity(tool))


def _issue_tracker(m: re.Match[str]) -> str | None:
    key = _tool_choice(m)
    return key if key == vocab.ISSUE_TRACKER else None


# ---------------------------------------------------------------- rules

_PARTNER = r"(?:wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|gf|bf|hubby|wifey)"
# where an introduction ends: the clause does ("my partner, Jordan." "my wife Ana, who ...")
_INTRODUCED = r"(?=\s*(?:[.!?;:,)—–]|$))"
# what the couple is or did, after "my wife (Ana)": "and I have been married ten years", "moved in with me"
_COUPLE = (
    r"and i\s+(?:\w+\s+){0,3}?(?:married|engaged|together|divorc\w*|separat\w*|split|broke up|dating|"
    r"moved in|living together)\b|(?:just\s+)?(?:moved in|proposed|said yes|left me|broke up with me|dumped me)\b"
)
_ME = r"(?:i|we)"
_NOW = r"(?:(?:now|currently|still|finally|officially|just|recently|already|also|basically|mostly|pretty much)\s+)*"
# "I now ..." or "I'm ...": the user, then {_AM} for "am" or "'m" and what may stand between it and the verb
_I_NOW = rf"i(?:\s+|(?=['’]m\s)){_NOW}"
_AM = rf"(?:am|['’]m)\s+{_NOW}"
# what "working at" or "for" is said of that is no employer: a while ("at the moment", "for a few hours")
_WHILE = (
    r"the moment\b|the minute\b|the weekend\b|weekends\b|night\b|nights\b|"
    r"(?:a|an|one|two|three|four|five|six|a few|several|\d+)\s+(?:more\s+)?"
    r"(?:minutes?|hours?|days?|weeks?|months?|years?)\b"
)
# a practice or a business the user moved to, named: "We've moved to Parkside Dental" is no new home
_PRACTICE = (
    r"\s+(?:the\s+)?(?:(?-i:[A-Z])[\w'’&-]*\s+){1,3}(?-i:Dental|Dentists?|Vets?|Veterinary|Surgery|Clinic|Practice|"
    r"Pharmacy|Gym|Fitness|Bank|Medical|Health|Physio|Physiotherapy|Opticians?|Salon|Studios?|Nursery|Academy)\b"
)


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    key: Key


def _rules(*pairs: tuple[str, Key]) -> tuple[_Rule, ...]:
    return tuple(_Rule(re.compile(p, _I), k) for p, k in pairs)


def _study_any(m: re.Match[str]) -> str | None:
    found = _first_group(m, ("lang", "field", "subject"))
    return f"{vocab.STUDIES}{_clean(found)}" if found else None


# what follows "call me" when a call is asked for, not a name
_NOT_A_NAME = (
    r"later|back|tomorrow|tonight|today|now|soon|asap|again|anytime|sometime|whenever|when|if|after|before|once|"
    r"first|please|up|maybe|around|between|any|this|next|on|at|in|by|from|during|about|the|a|an|to|tmrw|tmr|l8r|"
    r"instead|right|straight|directly|only|urgently|quickly|whatever|ok|okay"
)


_RULES: tuple[_Rule, ...] = _rules(
    # "call me" as the user asks it ("Call me Jo", "please call me Jo"), not what others call them ("The kids call me
    # Madame Lolo": a nickname, not the name), nor a call asked for ("call me later", "call me when you land")
    (
        r"\b(?:my name is|my name's|i go by)\b|(?:^|[,.!;:]\s*|\b(?:please|just|you\s+can|you\s+may)\s+)call me\s+"
        rf"(?!(?:{_NOT_A_NAME})\b)[\w\"'“‘]",
        _fixed(vocab.NAME),
    ),
    (
        r"\bi(?:'m| am) (?!(?:a|an|the|so|not|just|really|very|still|now|from|in|at|on|going|getting|trying)\b)"
        rf"(?!(?-i:{_DEMONYMS}|{_FAITHS})\b)(?!(?:{_DIETS})\b)"
        r"(?-i:[A-Z][a-z]+)(?:\s(?-i:[A-Z][a-z]+))?(?:,|\.|$|\s+by the way|\s+and\b)",
        _fixed(vocab.NAME),
    ),
    (
        rf"\bi(?:'m| am)\s+{_NOW}(?:an?\s+)?(?:(?:devout|practicing|practising|observant|non-practicing|lapsed|"
        rf"born-again)\s+)?(?-i:{_FAITHS})\b|\bmy (?:religion|faith) is\b|"
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:converted|became)\s+(?:to\s+)?(?:an?\s+)?(?:(?-i:{_FAITHS})|Islam|Judaism|"
        rf"Catholicism|Christianity|Hinduism|Buddhism)\b",
        _fixed(vocab.FAITH),
    ),
    (
        # (not how old one feels: "I feel like I'm 80")
        rf"(?<!like\s)(?<!as\sif\s)\bi(?:'m| am)\s+{_NOW}(?:almost\s+|nearly\s+)?{_AGE}"
        rf"(?:\s+years?\s+old|\s+y/?o\b|(?=\s+(?:and|but|now|"
        rf"today|this year)\b)|(?=\s*[.,;!?—–-]|\s*$))|\bi(?:'ve)?\s+(?:just\s+)?turned\s+{_AGE}\b|"
        rf"\bi(?:'m| am)\s+{_NOW}in my (?:early |mid |late |mid-)?{_DECADES}|\bmy age is\b",
        _fixed(vocab.AGE),
    ),
    # diet
    (
        rf"\bi(?:'m| am)\s+{_NOW}(?:(?:a|an|fully|strictly|strict|full|completely|100%|mostly|mainly|largely|"
        rf"no longer|not|still|committed|practicing|practising|lifelong)\s+)*(?:{_DIETS})\b|"
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}(?:gone|went|switched|converted|transitioned|turned|become|became|"
        rf"decided to go|decided to become|committed to (?:being|going))\s+(?:back\s+)?(?:to\s+)?(?:being\s+)?"
        rf"(?:(?:a|an|fully|strictly|completely|100%|mostly|full)\s+)*(?:{_DIETS})\b|"
        rf"\b{_ME}\s+{_NOW}(?:only\s+|mainly\s+|mostly\s+)?eat\s+(?:(?:mostly|mainly|only|a|an|strictly|whatever|"
        rf"anything|everything|fish|meat)\b\s*)*(?:{_DIETS}|plants|whatever|anything|everything|fish|meat|junk|"
        rf"fast food)\b|"
        rf"\b{_ME}\s+(?:don't|do not|no longer|never)\s+eat\s+(?:{_FOODS})\b|"
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}(?:stopped|quit|given up|gave up|cut out|started) eating\s+(?:{_FOODS})\b|"
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}(?:started|begun) eating\s+(?:{_FOODS})\s+again\b|"
        rf"\b{_ME}(?:'m| am|'re| are)\s+{_NOW}(?:on|doing|following|eating)\s+(?:a|the)?\s*(?:(?:strict|"
        rf"mostly|fully)\s+)?(?:{_DIETS})(?:\s+diet)?\b|\bmy diet (?:is|has been|these days|now|consists)\b|"
        rf"^(?:(?:mostly|strictly|fully|still|now|not strictly|mainly)\s+(?:{_DIETS})|"
        rf"(?:{_DIETS})\s+(?:now|these days)\b)"
        rf"(?=[.!]?$|[,;]?\s*(?:but|though)\b|,[^.!?]*\b(?:i|i'm|me|my)\b)",
        _fixed(vocab.DIET),
    ),
    (
        r"\bi(?:'m| am) (?:now |also |severely |mildly )?allergic to (?:(?:all|most|raw|tree)\s+)?(?P<allergen>[a-z]+)|"
        # "I have a severe nut allergy", "my peanut allergy flared up"
        rf"\bi\s+{_NOW}have\s+(?:a|an)\s+(?:(?:severe|mild|bad|serious|life-threatening|slight)\s+)?(?:tree\s+)?"
        r"(?P<allergen2>[a-z]+)\s+allergy\b|\bmy\s+(?:(?:severe|mild)\s+)?(?P<allergen3>[a-z]+)\s+allergy\b|"
        # the allergen named first: "it's sulfa drugs I'm allergic to"
        r"\b(?:it['’]s|it\s+is)\s+(?P<allergen4>[a-z]+)(?:\s+drugs|\s+antibiotics)?\s+(?:that\s+)?i(?:'m|\s+am)\s+allergic"
        r"\s+to\b|"
        # ...or said not to be one, which ends the slot: "I'm not allergic to penicillin after all", "it's not
        # penicillin", "penicillin is fine" after an allergy was named
        r"\bi(?:'m|\s+am)\s+not\s+(?:actually\s+|really\s+)?allergic\s+to\s+(?P<allergen5>[a-z]+)|"
        r"\bnot\s+allergic\s+to\s+(?P<allergen6>[a-z]+)",
        lambda m: _allergy_any(m),
    ),
    # a food that disagrees with the user: "Gluten makes me ill", "I can't eat onions", "I'm wheat intolerant",
    # "garlic doesn't agree with me" (lactose has its own slot)
    (
        rf"^(?P<food>{_INTOLERABLE})\s+(?:always\s+|really\s+)?(?:makes?|made)\s+me\s+(?:really\s+|so\s+|feel\s+)?"
        r"(?:ill|sick|bloated|nauseous|unwell|poorly)\b|"
        rf"\bi\s+(?:can't|can’t|cannot|can\s+not)\s+(?:eat|have|tolerate|digest)\s+(?:any\s+)?(?P<food2>{_INTOLERABLE})\b"
        r"(?!\s+(?:after|before|at|until|till|past|tonight|today|this)\b)|"
        rf"\bi(?:'m|’m|\s+am)\s+(?P<food3>{_INTOLERABLE})[- ]intolerant\b|"
        rf"^(?P<food4>{_INTOLERABLE})\s+(?:doesn't|doesn’t|does\s+not|don't|don’t|do\s+not)\s+agree\s+with\s+me\b",
        lambda m: _intolerance_any(m),
    ),
    # residence, home, origin
    (
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}(?:moved|relocated)\s+(?:back\s+|out\s+)?(?:here\s+)?(?:to|into|from)\b"
        rf"(?!{_PRACTICE})|"
        rf"\b{_ME}\s+{_NOW}live\s+(?:in|near|outside|just outside|on|by)\b|"
        rf"\b{_ME}\s+(?:don't|do not|no longer)\s+live\s+in\b|"
        rf"\b(?:i'm|i am|we're|we are)\s+{_NOW}(?:living|based|settled|settling|staying long-term)\s+(?:in|near)\b|"
        rf"\bmy (?:home|house|apartment|flat|place) is (?:now )?in\b|\b(?:i|we) call (?-i:[A-Z])\w+ home\b|"
        rf"\bhome is (?:now )?(?-i:[A-Z])",
        _fixed(vocab.RESIDENCE),
    ),
    (
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}(?:bought|purchased|closed on|own|rent|are renting|am renting|"
        rf"sold|moved into)\s+(?:a|an|the|our|my)\s+(?:new\s+|little\s+|old\s+)?(?:[a-z]+\s+)?(?:house|home|"
        rf"apartment|flat|condo|farmhouse|cottage|cabin|townhouse|bungalow|studio)\b|"
        rf"\bthe (?:house|farmhouse|apartment|flat|place|condo|cottage) is (?:now )?"
        rf"(?:mine|ours|officially ours|sold)\b|"
        # where the user's home is, by its address: "my new address is 7 Lermontov St", "I live at 22 Baker Street",
        # "our new flat is at 12 Elm Road", "signed a lease: Hammerstrasse 68"
        rf"\b(?:my|our)\s+(?:new\s+|home\s+|current\s+)*address\s+(?:is|['’]s)\s+(?:now\s+)?(?:\d|(?-i:[A-Z]))|"
        rf"\b{_ME}\s+{_NOW}live\s+at\s+\d|"
        rf"\b(?:my|our)\s+(?:new\s+)?(?:home|house|apartment|flat|place)\s+is\s+(?:now\s+)?(?:at|on)\s+\S*\d|"
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}signed\s+(?:a|the|our|my)\s+(?:new\s+)?lease\b[^.!?]{{0,40}}\d",
        _fixed(vocab.HOME),
    ),
    (
        r"\bi(?:'m| am) (?:originally )?from\b|\bi grew up in\b|\bmy hometown\b|\bi was born in\b|"
        rf"\bi(?:'m| am) (?:originally\s+)?(?:half[- ])?(?-i:{_DEMONYMS})(?:,|\s+(?:and|but|by)\b|[\s.!;]*$)",
        _fixed(vocab.ORIGIN),
    ),
    # work
    (
        r"\bi (?:now )?work (?:from home|remotely|from a home office|from my home office|in an office|on-site|"
        r"hybrid|from the office)\b|\bi(?:'m| am) (?:now )?(?:fully )?remote\b|\bi(?:'m| am) back in the office\b|"
        r"\bi (?:now )?(?:commute|bike to work|cycle to work|walk to work|drive to work|take the (?:train|bus|subway|"
        r"tube) to work)\b|"
        # how they get there, whatever they ride: "I ride a Brompton to the office most days", "I get the bus to the
        # office"
        r"\b(?:i|we)\s+(?:(?:usually|mostly|normally|always|now|still)\s+)?(?:(?:ride|cycle|bike|walk|drive|run|scoot)"
        r"\s+(?:(?:a|an|the|my|our)\s+)?(?:[\w'’-]+\s+){0,2}?|(?:take|get|catch)\s+(?:a|an|the|my|our)\s+(?:[\w:.'’-]+\s+)?"
        r"(?:train|bus|tube|subway|tram|ferry|metro|boat|taxi|cab|coach|shuttle)\s+)to\s+(?:work|the\s+office"
        r"|my\s+office)\b|"
        r"\bi(?:'ve| have)?\s+(?:been\s+)?(?:getting|taking)\s+the\s+(?:train|bus|tube|subway|tram|ferry)\s+"
        r"to\s+work\b",
        _fixed(vocab.WORK_LOCATION),
    ),
    (
        rf"\b{_I_NOW}(?:work|{_AM}working)\s+(?:at|for)\s+(?!home\b|a living\b|{_WHILE})|"
        rf"\bi\s+(?:don't|do not|no longer)\s+work\s+(?:at|for)\b|"
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:joined|started (?:a new job |working )?at)\s+(?:(?-i:[A-Z])|"
        rf"(?:a|an)\s+(?:new\s+)?(?:startup|company|firm|agency|studio|lab|bank|hospital|school|consultancy|"
        rf"nonprofit|non-profit)\b|the (?:team|company|firm|staff|faculty) at\b)|"
        rf"\bmy (?:employer|company) is\b|\bi(?:'m| am) (?:now )?(?:employed|hired) (?:at|by)\b|"
        rf"\bi got (?:a|the) job (?:at|with)\b|"
        rf"\bi (?:accepted|took|signed) (?:an|the) (?:job )?offer (?:from|at|with)\b|"
        rf"\bi\s+have\s+a\s+new\s+job\s+(?:at|with|@)\s|"
        # "I'm with Tucson Electric Power now as a lineman apprentice"
        rf"\bi(?:'m| am)\s+(?:now\s+)?with\s+(?-i:[A-Z])[\w&'’-]*(?:\s+(?-i:[A-Z])[\w&'’-]*){{0,3}}\s+(?:now\s+)?as\s+"
        rf"(?:an?\s+)?\w|"
        rf"\bi\s+{_NOW}(?:run|own|started|founded|launched|opened)\s+(?:my own|a|an)\s+(?:[\w-]+\s+){{0,2}}?"
        rf"(?:practice|company|firm|business|startup|studio|consultancy|agency|shop|store|brand|label|bakery|"
        rf"restaurant|cafe|clinic|nonprofit|non-profit)\b|"
        rf"(?:^|\bi\s+(?:just\s+|also\s+)?)lost my job\b|"
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:resigned|quit my job|left my job|handed in my notice|gave my notice)\b|"
        rf"\bi(?:'ve| have)?\s+(?:just\s+)?(?:got|gotten|been|was)\s+(?:laid off|fired|let go)\b",
        _fixed(vocab.EMPLOYER),
    ),
    (
        rf"\bi(?:'m| am|'ve been| have been| work as| started as| became| got a job as)\s+{_NOW}(?:a|an)\s+"
        rf"(?!(?:[a-z-]+\s+){{0,3}}?{_NOT_JOBS})(?:[a-z-]+\s+){{0,3}}?{_JOB_NOUN}\b(?!\s+(?:of|to|in training)\b|'s)|"
        rf"\bi(?:'m| am)\s+{_NOW}working as (?:a|an)\b|"
        # a title said with where it is held, or given: "I'm now events manager at Soar Valley", "I'm the new head
        # of events at ...", "I've been made events manager!", "they made me team lead"
        rf"\bi(?:'m| am)\s+{_NOW}(?:the\s+(?:new\s+)?)?(?:(?![a-z-]*(?:ing|ed)\b)[a-z-]+\s+){{0,3}}?"
        rf"{_TITLE}\s+(?:at|for|with|in)\s+(?:the\s+)?(?-i:[A-Z])|"
        rf"\b(?:i(?:'ve| have)\s+been|i\s+was|i\s+got|(?:they|he|she)\s+(?:just\s+)?)\s*made\s+(?:me\s+)?"
        rf"(?:the\s+|a\s+|an\s+)?(?:(?![a-z-]*(?:ing|ed)\b)[a-z-]+\s+){{0,3}}?(?:{_TITLE}\b|redundant\b)|"
        # "I teach chemistry at Oakridge High": teaching somewhere is the job; "I teach yoga on weekends" is not
        rf"\bi\s+{_NOW}teach\s+(?:[\w-]+\s+){{0,3}}?(?:at|in)\s+(?:(?-i:[A-Z])|(?:a|an|the|our|my)\s+"
        rf"(?:[\w-]+\s+){{0,2}}?(?:school|college|university|academy|kindergarten|nursery|primary|secondary)\b)|"
        rf"\bmy (?:new )?(?:job|role|title|position|career|profession) is\b|\bmy new (?:job|role|position) as\b|"
        r"\b(?:pivoting|switching careers|changing careers|transitioning careers|making a career change) (?:in)?to\s+"
        r"(?:[a-z-]+\s+){0,3}?"
        r"(?:consulting|engineering|design|teaching|research|management|freelanc\w*|nursing|writing|sales|"
        r"marketing|law|medicine|tech|coaching|therapy)\b|"
        rf"\bi(?:'m| am)\s+{_NOW}(?:self-employed|freelancing|unemployed|retired|between jobs|out of work|job hunting|"
        rf"on sabbatical|on (?:parental|maternity|paternity) leave|a stay-at-home (?:mom|dad|parent))\b|"
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:retired|been promoted|got promoted|was promoted)\b|"
        # the job the user was offered and took: "i got the trainer job!!", "I landed the job at Figma"
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:got|landed|accepted|took)\s+the\s+(?:[\w-]+\s+){{0,3}}?(?:job|role|"
        r"position)\b(?!\s+(?:interview|application|ad|advert|listing|description)\b)",
        _fixed(vocab.JOB),
    ),
    # the language the user wants answers in: "from now on answer me in Portuguese", "you can go back to english
    # now", "please reply in German from now on" (not "write this email in French": that answer only)
    (
        rf"\b(?:always|from\s+now\s+on|going\s+forward|by\s+default|in\s+future),?\s+(?:please\s+|pls\s+)?"
        rf"(?:answer|reply|respond|speak|talk|write)(?:\s+to)?(?:\s+me)?\s+in\s+(?:{vocab.LANGUAGES})\b|"
        rf"\b(?:answer|reply|respond|speak|talk|write)(?:\s+to)?(?:\s+me)?\s+in\s+(?:{vocab.LANGUAGES})\b[^.!?]*"
        rf"\b(?:from\s+now\s+on|going\s+forward|by\s+default|always|please\s+always)\b|"
        rf"\b(?:you\s+can\s+|please\s+|pls\s+)?{vocab.BACK_TO_LANGUAGE}",
        _fixed(vocab.REPLY_LANGUAGE),
    ),
    # who the user reports to: "my manager is Priya", "my new boss is Sarah Okafor", "I report to Sam now"
    (
        rf"\bmy (?:new |current |line )?{_MANAGER}(?:'s name)? (?:is|'s) (?:now |still )?{_PERSON_NAME}|"
        rf"\bi\s+{_NOW}report (?:directly )?to (?-i:[A-Z])\w+|"
        rf"(?!(?:this|that|he|she|it|who|there|here|what)\b)(?-i:[A-Z])\w+ (?:is|'s) (?:now )?my "
        rf"(?:new |current |line )?{_MANAGER}\b",
        _fixed(vocab.MANAGER),
    ),
    # who the user goes to: "my dentist is Dr. Okafor", "our pediatrician is Dr. Alvarez", "I switched accountants,
    # it's now Julia Weber"
    (
        rf"\b(?:my|our) (?:new |current |regular |usual |family )?(?P<contact>{_CONTACT})(?:'s name)? (?:is|'s) "
        # ...named after what they are: "our landlord is a guy called Greg", "a company called Grainger"
        r"(?:now |still )?(?:an?\s+(?:\w+\s+)?(?:company|firm|agency|business|guy|bloke|chap|man|woman|lady|girl|lad"
        rf"|couple|family|place|practice|outfit)\s+(?:called|named)\s+)?{_PERSON_NAME}|"
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}(?:(?:switched|changed)\s+(?:to\s+a\s+new\s+)?|(?:registered with|signed up "
        rf"with|found|got|have|hired)\s+a\s+new\s+)(?P<contact2>{_CONTACT})s?\b|"
        rf"(?!(?:this|that|he|she|it|who|there|here|what)\b)(?-i:[A-Z])\w+ (?:is|'s) (?:now )?my "
        rf"(?:new |current |regular |usual )?(?P<contact3>{_CONTACT})\b|"
        # booked as one: "We booked Crispin Aldridge as our photographer"
        rf"\b(?:booked|hired|chose|picked|went with|got|signed)\s+{_PERSON_NAME}(?:\s+(?-i:[A-Z])\w+){{0,2}}\s+as\s+"
        rf"(?:my|our)\s+(?:new\s+)?"
        rf"(?P<contact5>{_CONTACT})\b|"
        # seen by one now: "I'm seeing dr hollis now", "I see Dr. Moreau for my back", "I've been moved to Dr. Nasseri"
        rf"\bi(?:'m| am|'ve been| have been)?\s+{_NOW}"
        rf"(?:seeing|see|going to|registered with|moved to|transferred to)\s+"
        rf"(?:a\s+new\s+(?P<contact4>{_CONTACT}),?\s+)?"
        rf"(?P<seen>(?:dr|doctor)\.?\s+(?!(?:who|that|about|at|in|on|and|or|but)\b)[a-z]\w+)",
        lambda m: _contact_any(m),
    ),
    # relationships and family
    (
        # who the partner is ("my wife is Ana", "my girlfriend Priya moved in with me"), not only what they do or
        # like ("my partner Jordan is gluten intolerant": see `_MENTIONS`)
        rf"\bmy (?:new )?{_PARTNER}(?:,)?\s+(?:(?-i:[A-Z])\w+(?:\s+(?-i:[A-Z])\w+)?(?:{_INTRODUCED}|"
        rf"\s+(?:{_COUPLE}))|(?:is|'s)\s+(?:(?:called|named)\s+)?(?-i:[A-Z])\w+{_INTRODUCED}|"
        rf"(?:is|'s)\s+(?:called|named)\b|{_COUPLE})|\bmy {_PARTNER}'s name is\b|"
        rf"\b(?:i'm|i am|we're|we are|we've been|i've been|we got|i got|getting|we just got|i just got)\s+{_NOW}"
        rf"(?:happily\s+|recently\s+|newly\s+|legally\s+)?(?:married|divorced|separated|separating|engaged|single|"
        rf"widowed|dating|splitting up|seeing each other|back together)\b|"
        rf"\b{_ME}\s+{_NOW}(?:agreed|decided) to (?:separate|divorce|split up|get married|get divorced)\b|"
        rf"\b{_ME}\s+(?:just\s+)?(?:broke up|split up|got back together|tied the knot|eloped)\b|"
        rf"\bi(?:'m| am)\s+{_NOW}(?:going through|in the middle of) (?:a|my|the) divorce\b|"
        rf"\b(?:my|our|the) divorce (?:is|was) (?:final|finali[sz]ed|through|official)\b|"
        rf"\bmy marriage (?:is|has been) (?:over|ending|falling apart|in trouble|done)\b|"
        rf"\bi(?:'m| am)\s+{_NOW}(?:in a relationship|seeing someone|dating someone|falling for|in love with "
        rf"(?:someone|a (?:woman|man|girl|guy|person)|her|him))\b|"
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}started (?:dating|seeing each other|going out)\b|"
        rf"\bi(?:'m| am|'ve been| have been)\s+{_NOW}(?:seeing|dating)\s+"
        rf"(?:someone|a (?:woman|man|girl|guy)|(?-i:[A-Z])\w+)|"
        rf"\bi have a (?:new\s+)?(?:girlfriend|boyfriend|partner|wife|husband)\b|"
        # a couple named: "Gaspard and I stopped seeing each other", "Teodor and I are officially together now"
        rf"\b(?:(?-i:[A-Z])\w+\s+and\s+i|i\s+and\s+(?-i:[A-Z])\w+|we)\s+(?:(?:have|had|just|finally|officially)\s+)*"
        r"(?:stopped (?:seeing each other|dating)|called it (?:off|quits)|ended things|broke up|"
        r"split up|separated)\b|"
        rf"\b(?-i:[A-Z])\w+\s+and\s+i\s+(?:are|'re)\s+{_NOW}(?:together(?!\s+(?:on|in|at|for|with|to)\b)|a couple|"
        r"dating|seeing each other|an item|engaged|married)\b|"
        r"\basked me to be (?:his|her|their) (?:girlfriend|boyfriend|partner)\b",
        _fixed(vocab.RELATIONSHIP),
    ),
    (
        r"\b(?:i|we) (?:now )?have (?:a|an|one|two|three|four|five|\d) (?:kids?|children|sons?|daughters?|"
        r"babies|baby)\b|\b(?:i|we) (?:just )?had (?:a|our|my) (?:first |second |third )?(?:baby|son|daughter)\b|"
        r"\b(?:i'm|i am|we're|we are) (?:now )?(?:expecting|having a baby)\b|"
        r"\bi (?:don't|do not) have (?:kids|children)\b",
        _fixed(vocab.CHILDREN),
    ),
    # pets and vehicles
    (
        # naming the pet ("my cat Miso.", "my dog Rex is a beagle", "my cat Miso is fourteen"), not only a story of
        # it ("my dog Biscuit loves the beach": see `_MENTIONS`)
        rf"\bmy (?:new\s+)?(?:little\s+)?(?P<pet>{_PETS}),?\s+(?:(?-i:[A-Z])[a-z]+(?:{_INTRODUCED}|"
        rf"\s+(?:is|'s)\s+(?:a|an|\d|{_NUMBER_NAMES})\b)|is (?:called|named)\b)|"
        rf"\bmy (?P<pet2>{_PETS})'s name is\b",
        lambda m: _pet_any(m),
    ),
    (
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}(?:got|gotten|adopted|rescued|bought|have|own|fostered|lost|rehomed)\s+"
        rf"(?:a|an|two|three|our|my|\d)\s+(?!{_ONE_MORE})(?:new\s+|little\s+|rescue\s+|old\s+)?(?:\w+\s+)?"
        rf"(?P<pet>{_PETS})\b|"
        rf"\b(?:my|our) (?P<pet2>{_PETS}) (?:\w+\s+)?(?:died|passed away|passed|was put down|had to be put down|"
        rf"ran away)\b",
        lambda m: _pet_any(m),
    ),
    (
        rf"\bi\s+{_NOW}drive\s+(?:a|an)\s+(?!(?:[\w-]+\s+){{0,3}}?(?P<vehicle4>{_VEHICLES})\b)|"
        rf"\bi\s+{_NOW}(?:drive|ride)\s+(?:a|an)\s+(?:[\w-]+\s+){{0,3}}?(?P<vehicle5>{_VEHICLES})\b|"
        rf"\bmy (?:new\s+)?(?P<vehicle>car|truck|motorcycle|bike|e-bike|van)"
        rf" is (?:a|an)\b|\b{_ME}(?:'ve| have)?\s+{_NOW}(?:bought|got|leased|sold|traded in|totaled|crashed|"
        rf"gave up|got rid of)\s+(?:a|an|my|our)\s+(?:new\s+|used\s+|electric\s+|old\s+)?(?:(?P<vehicle2>{_VEHICLES})|"
        rf"{_CAR_MAKES})\b|"
        # "I sold the Civic and bought a Tesla Model 3", "I sold the transit last week, got a vw crafter now"
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}(?:sold|traded in|got rid of|scrapped)\s+(?:[\w-]+\s+){{0,4}}?[\w-]+"
        rf"(?:,\s*(?:and\s+)?|\s+and\s+)(?:then\s+|just\s+)?(?:bought|got|leased)\s+(?:a|an)\s+(?:new\s+|used\s+|electric\s+)?"
        rf"(?:(?P<vehicle6>{_VEHICLES})|{_CAR_MAKES})\b|"
        rf"\bi (?:don't|do not|no longer) (?:have|own) a (?P<vehicle3>{_VEHICLES})\b|\bi(?:'m| am) (?:now )?car-free\b",
        lambda m: _vehicle_any(m),
    ),
    # the user's number: "my new number is 086 555 7710", "new number btw, switched to Telia: 482 19 337", "new
    # phone too, number's 07700 900461"
    (
        r"\bmy\s+(?:new\s+)?(?:phone\s+|mobile\s+|cell\s+|work\s+|business\s+)?(?:number|nr|no\.?)\s+(?:is|'s)\s+"
        r"(?:now\s+)?\+?\d|^(?:(?:my|a)\s+)?new\s+(?:phone\s+|mobile\s+|cell\s+)?(?:number|nr)\b[^.!?]{0,40}?\+?\d{2,}"
        r"|\bnew\s+(?:phone|mobile|cell)\b[^.!?]{0,30}?\b(?:number|nr)['’]?s?\s+(?:is\s+)?\+?\d{2,}",
        _fixed(vocab.PHONE_NUMBER),
    ),
    (
        r"\b(?:my (?:new )?phone is an?|i (?:use|have|got) an? (?:new )?(?=iphone|pixel|galaxy|android))",
        _fixed(vocab.PHONE),
    ),
    # health and habits
    (
        rf"\bi(?:'ve| have)?\s+(?:been\s+|was\s+|just\s+|recently\s+|finally\s+)*(?:diagnosed with|developed)\s+"
        rf"(?:(?:mild|severe|chronic|early)\s+)?(?P<cond>{_CONDITIONS})\b|"
        rf"\b{_I_NOW}(?:have|suffer from|live with|struggle with|deal with|manage|"
        rf"{_AM}(?:living with|being treated for))\s+(?:(?:mild|severe|chronic|bad|really bad)\s+)?"
        rf"(?P<cond2>{_CONDITIONS})\b|"
        rf"\bi(?:'m| am|'ve| have)\s+{_NOW}(?:fully\s+)?(?:recovering|recovered|in remission|healed|cured|over)\s+"
        rf"(?:from\s+)?(?:my\s+|the\s+)?(?P<cond3>{_CONDITIONS})\b|"
        rf"\bmy (?P<cond4>{_CONDITIONS}) (?:is|has been|got) (?:better|worse|under control|back|gone|in remission)\b|"
        r"\bi(?:'m| am) (?:now |still )?(?P<cond5>diabetic|asthmatic|epileptic|anemic|autistic|pregnant|c(?:o)?eliac|"
        r"bipolar|depressed|burned out|burnt out|lactose[- ]intolerant)\b|"
        # an injury told by how it happened: "I sprained my ankle", "I've torn my knee again"
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:sprained|broke|broken|twisted|tore|torn|pulled|injured|hurt|fractured|"
        r"dislocated|busted|wrecked|ruptured|damaged|smashed|knackered|messed\s+up)\s+my\s+(?:left\s+|right\s+)?"
        rf"(?P<cond6>{_PARTS})\b",
        lambda m: _condition_any(m),
    ),
    (
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:quit|stopped|gave up|given up|cut out|cut back on|started|took up)\s+"
        rf"(?:drinking\s+)?(?P<habit>smoking|vaping|drinking(?!\s+(?:coffee|tea|soda|water))|alcohol|caffeine|"
        rf"coffee|cigarettes)\b|"
        rf"\bi(?:'m| am)\s+{_NOW}(?P<habit2>sober|teetotal|a non-?smoker|a smoker)\b|"
        rf"\bi\s+(?:don't|do not|no longer)\s+(?P<habit3>smoke|drink|vape)\b|"
        # how much: "I drink about four coffees a day", "I've cut down to one coffee a day", "I smoke 10 a day"
        rf"\bi\s+{_NOW}(?:(?:usually|normally)\s+)?(?:drink|have|smoke)\s+(?:about\s+|around\s+|like\s+|maybe\s+)?"
        rf"{_HOW_MANY}\s+(?:cups?\s+of\s+)?(?P<habit4>coffees?|cigarettes)\s+(?:a|per|each)\s+day\b|"
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:cut|got|gotten)\s+(?:back\s+|down\s+)to\s+{_HOW_MANY}\s+(?:cups?\s+of\s+)?"
        rf"(?P<habit5>coffees?|cigarettes)\b",
        lambda m: _habit_any(m),
    ),
    (
        rf"\b{_I_NOW}(?:take|{_AM}taking|started taking|stopped taking|no longer take)\s+(?:a\s+|an\s+)?"
        rf"(?:daily\s+)?(?P<item>(?:vitamin\s+)?(?!(?:a|an|the|my|some|daily)\b)[\w-]+(?:\s+and\s+[\w-]+)?)\s+"
        rf"(?:supplements?|vitamins?|pills?|tablets?|capsules?)\b|"
        rf"\bi(?:'m| am)\s+{_NOW}on\s+(?P<item2>[a-z]+)(?:\s+\d+(?:\s?(?:mg|mcg))?)?\s+for\s+(?:my\s+)?"
        rf"(?:{_CONDITIONS})\b|"
        # "I take metformin every morning", "I'm on 20mg of lisinopril": a drug's name and a dose or schedule
        rf"\bi(?:'m| am)?\s+{_NOW}(?:take|taking|started taking|on)\s+(?:(?:\d+\s?(?:mg|mcg|ml|g)|a low dose)\s+of\s+)?"
        rf"(?P<item3>{_DRUG})\s+(?:{_DOSING})|"
        # a new dose: "I'm on 100mg of sertraline now", "my doctor upped my sertraline to 100mg", "my sertraline
        # dose went down to 50mg"
        rf"\bi(?:'m| am)\s+{_NOW}on\s+{_DOSE}\s+of\s+(?P<item4>{_DRUG})\b|"
        rf"\b(?:i|we|my (?:doctor|gp|psychiatrist|consultant|specialist|nurse)|they|she|he|"
        r"(?:dr|dra|doctor|prof)\.?\s+[\w-]+(?:\s+(?-i:[A-Z])[\w-]+)?)\s+"
        rf"{_NOW}(?:upped|increased|raised|lowered|reduced|cut|dropped|changed|doubled|halved|bumped(?:\s+up)?)\s+"
        r"(?:(?:my|the)\s+)?"
        rf"(?P<item5>{_DRUG})(?:\s+dose)?\s+(?:up\s+|down\s+|back\s+)?to\s+{_NEW_DOSE}|"
        rf"\bmy\s+(?P<item6>{_DRUG})(?:\s+dose)?\s+(?:was|has been|got|went|is going|is|'s)\s+"
        rf"(?:\w+\s+){{0,2}}?(?:up\s+|down\s+|back\s+)?to\s+{_NEW_DOSE}|"
        # on a drug as news, without a dose: "I'm on Ozempic now", "I'm now on insulin", "I take wegovy these days"
        rf"\bi(?:'m| am)\s+(?:now|currently)\s+(?:on|taking)\s+(?P<item7>{_DRUG})\b|"
        rf"\bi(?:(?:'m| am)\s+{_NOW}(?:on|taking)|\s+{_NOW}take)\s+(?P<item8>{_DRUG})\s+"
        rf"(?:now|these days|nowadays|again|instead)\b|"
        # a switch or a start: "I switched from metformin to Ozempic", "I started on insulin last week"
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:switched|changed|moved|gone|went)\s+(?:over\s+)?(?:from\s+[\w-]+\s+)?"
        rf"(?:to|onto)\s+(?P<item9>{_DRUG})\b|"
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:started|began|begun)\s+(?:on\s+)?(?P<item10>{_DRUG})\b|"
        # put on one by a doctor: "the doctor switched me from metformin to sitagliptin", "Nasseri put me on ezetimibe"
        rf"\b(?:put|putting|started|starting|switched|switching|moved|moving|changed|changing)\s+me\s+"
        rf"(?:from\s+[\w-]+\s+)?(?:on|onto|to)\s+(?:{_DOSE}\s+(?:of\s+)?)?"
        rf"(?P<item11>{_DRUG})\b|"
        # ...or taken off it: "my GP took me off sertraline", "I came off the lithium"
        rf"\b(?:took|taken|came|come|got|gone|went)\s+(?:me\s+)?off\s+(?:the\s+|my\s+)?(?P<item12>{_DRUG})\b|"
        # ...stopped, or swapped for another: "I had to stop the rosuvastatin too", "he's swapping the atorvastatin
        # for rosuvastatin 10 mg"
        rf"\bi(?:'ve| have)?\s+(?:had\s+to\s+)?{_NOW}(?:stop|stopped|quit)\s+(?:the\s+|my\s+)(?P<item13>{_DRUG})\b|"
        rf"\b(?:swapp(?:ed|ing)|switch(?:ed|ing)|chang(?:ed|ing)|replac(?:ed|ing))\s+(?:the\s+|my\s+)?[\w-]+\s+"
        rf"(?:for|with)\s+(?P<item14>{_DRUG})\b|"
        # ...or stopped by the doctor: "he stopped the omeprazole" (whose: see `_prescribed`)
        rf"\b(?:stopped|stopping|discontinued)\s+(?:the\s+|my\s+)(?P<item15>{_DRUG})\b|"
        # a drug and its dose: "I take naproxen 500 mg two times per day"
        rf"\bi\s+{_NOW}take\s+(?P<item16>{_DRUG})\s+{_DOSE}|"
        # ...or off it: "I'm off budesonide completely as of last week"
        rf"\bi(?:'m| am)\s+{_NOW}(?:completely\s+)?off\s+(?:the\s+|my\s+)?(?P<item17>{_DRUG})\b|"
        rf"\bi(?:'m| am)\s+{_NOW}(?:stopping|quitting|coming\s+off)\s+(?:the\s+|my\s+)?(?P<item18>{_DRUG})\b",
        lambda m: _medication_any(m),
    ),
    # body weight: "I weigh 82 kg", "I'm down to 78 kg", "Down to 88 kg now!" (the user's own, said in passing), "my
    # weight is 12 stone" (not "I weigh my flour", not "down to two coffees a day")
    (
        rf"^(?:(?:finally|now|already)\s+)?(?:down|up)\s+to\s+(?:about\s+|around\s+)?{_WEIGHT}(?!\s+of\b)|"
        rf"\bi\s+{_NOW}weigh\s+(?:in\s+at\s+)?(?:about\s+|around\s+|roughly\s+|almost\s+|nearly\s+|"
        rf"just\s+(?:over|under)\s+|over\s+|under\s+)?\d|"
        rf"\bi(?:'m| am|'ve| have)\s+{_NOW}(?:got\s+|gotten\s+|been\s+)?(?:back\s+(?:down\s+|up\s+)?|down\s+|"
        rf"up\s+)to\s+(?:about\s+|around\s+)?{_WEIGHT}(?!\s+of\b)|"
        rf"\bmy (?:current |body )?weight (?:is|'s|was) (?:now |currently |down to |up to )?(?:about |around )?\d|"
        # "I'm 62 kg now, 158 cm" (not "I'm 5 kg away from my goal", "I'm 3 kg lighter")
        rf"\bi(?:'m|’m| am)\s+{_NOW}(?:about\s+|around\s+|roughly\s+)?{_WEIGHT}"
        rf"(?!\s+(?:of|away|from|off|short|over|under|lighter|heavier|more|less|to go|left)\b)",
        _fixed(vocab.WEIGHT),
    ),
    # a measure of the user's body or training: "my resting heart rate is 60 now", "My 10k PB is 56:40", "my blood
    # pressure this morning at home is 126/80" (never someone else's: "my dad's blood pressure is 150/90")
    (
        rf"\bmy\s+(?:new\s+)?(?P<metric>(?:{vocab.METRIC_NAMES}){vocab.METRIC_KIND})\b(?:\s+[\w'’]+){{0,5}}?\s+"
        r"(?:is|was|'s)\s+(?:now\s+|currently\s+|up\s+to\s+|down\s+to\s+|back\s+to\s+|around\s+|about\s+|at\s+)*\d",
        lambda m: _metric_key(m["metric"]),
    ),
    (vocab.BP_READING, _fixed(f"{vocab.METRICS}blood-pressure")),
    # hobbies and routines
    (
        rf"\bi(?:'ve| have)?\s+{_NOW}(?:started|began|begun|took up|taken up|picked up|got into|gotten into|"
        rf"gave up|given up|quit|stopped|resumed|got back into|gotten back into)\s+(?:doing\s+|playing\s+|"
        rf"going\s+(?:to\s+)?(?:the\s+)?|learning\s+)?(?P<act>{_ACTIVITY_NOUNS})\b|"
        rf"\bi\s+{_NOW}(?:(?:usually|always|regularly|try to)\s+)?(?:go|do|practi[cs]e|play)\s+(?:to\s+)?(?:the\s+)?"
        rf"(?P<act2>{_ACTIVITY_NOUNS})\b|"
        rf"\bi\s+(?:no longer|don't|do not)\s+(?:go\s+|do\s+|play\s+)?(?P<act3>{_ACTIVITY_NOUNS}|{_ACTIVITY_VERBS})\b"
        rf"(?=[^.!?]*\b(?:anymore|any more)\b)|\bi\s+no longer\s+(?:go\s+|do\s+|play\s+)?(?P<act4>{_ACTIVITY_NOUNS}|"
        rf"{_ACTIVITY_VERBS})\b|"
        rf"\bi(?:'m| am)\s+{_NOW}(?:really\s+)?(?:into|learning|training for|doing)\s+(?:(?:the|a|an|my first)\s+)?"
        rf"(?P<act5>{_ACTIVITY_NOUNS})\b|"
        rf"\bi\s+{_NOW}(?:(?:usually|always|regularly|try to)\s+)?(?P<act6>{_ACTIVITY_VERBS})\b"
        rf"(?!\s+(?:my|the|a|an|our|their|his|her|this|that|it|them|up|out)\b)(?:\s+[\w-]+){{0,4}}?\s+(?:{_FREQUENCY})|"
        rf"\bi(?:'m| am|'ve been| have been)\s+{_NOW}(?P<act7>{_ACTIVITY_NOUNS})\b"
        rf"(?!\s+(?:my|the|a|an|our|their|his|her|this|that|it|them|up|out)\b)(?:\s+[\w-]+){{0,4}}?\s+(?:{_FREQUENCY})",
        lambda m: _activity_any(m),
    ),
    (
        r"\b(?:my|our) (?:new |current |all-time |absolute )?favou?rite ([a-z]+(?: [a-z]+)?)"
        r"(?: right now| these days| at the moment| lately)? (?:is|are)\b",
        _grouped(vocab.FAVOURITES),
    ),
    (
        r"\bis (?:now |still )?(?:my|our) (?:new |current |all-time |absolute )?favou?rite ([a-z]+(?: [a-z]+)?)\b",
        _grouped(vocab.FAVOURITES),
    ),
    # tools
    (
        r"\b(?:we|i)(?:'ll| will)? (?:(?:always|usually|normally|mostly|now|still|currently|just) )?"
        r"(?P<action>deploy|host|test|build|lint|format|monitor)(?:s|ing)? "
        r"(?:\w+ ){0,3}?(?:with|on|using|via|to) (?P<tool>[A-Za-z][\w.+-]*)",
        _tool_choice,
    ),
    # "Deploys now go through ArgoCD", "builds run on Buildkite"
    (
        r"\b(?P<action>deploy|build|test)(?:s|ments)? (?:now |all |still )?(?:go|goes|run|runs|happen|happens) "
        r"(?:\w+ ){0,2}?(?:through|via|on|with|in|using) (?P<tool>[A-Za-z][\w.+-]*)",
        _tool_choice,
    ),
    (
        r"\b(?:switch(?:ed|ing)? (?:\w+ ){0,3}?(?:over )?to|migrat(?:e|ed|ing) to|go(?:ing)? with|settled on|chose|"
        r"picked|use|using|moved (?:\w+ ){0,3}?(?:over )?to|upgraded (?:\w+ ){0,3}?to|"
        # "we're on Postgres 15", "I'm running on Ubuntu": only a known tool (not "we're on a deadline")
        r"(?:we're|we are|i'm|i am) (?:now |still |currently )?(?:running )?on) "
        r"(?P<tool>[A-Za-z1][\w.+-]*(?: code| actions| ci| music| mail| issues)?)\b",
        _tool_choice,
    ),
    # "I listen to everything on Spotify": only a known music app (not "I listen to podcasts on my commute")
    (
        rf"\b{_ME}\s+{_NOW}(?:(?:mostly|usually|always|normally)\s+)?(?:listen|stream)\s+(?:to\s+)?(?:[\w-]+\s+){{0,3}}?"
        r"(?:on|with|via|using|through)\s+(?P<tool>[A-Za-z][\w.+-]*(?: music)?)\b",
        _tool_choice,
    ),
    # "we track tickets in Linear", "I track bugs with Jira": only a known tracker (not "I track my runs in Strava")
    (
        r"\b(?:we|i) (?:(?:always|usually|now|still|currently|just) )?track (?:\w+ ){0,3}?(?:in|with|on|using|via) "
        r"(?P<tool>[A-Za-z][\w.+-]*(?: issues)?)",
        _issue_tracker,
    ),
    # what the user studies: a language ("I'm learning Japanese"), a course or degree and its field ("I'm doing a
    # part-time MSc in data science", "I'm studying law at UCL")
    (
        rf"\bi(?:'m| am)\s+{_NOW}(?:(?:learning|studying)\s+(?P<lang>{vocab.LANGUAGES})\b"
        r"|(?:doing|taking|studying\s+for|studying|in\s+the\s+(?:first|second|third|final|last)\s+year\s+of)\s+"
        r"(?:an?\s+|my\s+)?(?:(?:part|full)[- ]time\s+|online\s+|evening\s+|distance\s+)?"
        r"(?P<course>msc|ma|mba|mphil|bsc|ba|llb|phd|masters?|master's|doctorate|degree|diploma|certificate|course"
        r"|a[- ]levels?|apprenticeship|bootcamp)\s+(?:in|on)\s+(?P<field>[a-z][\w -]{2,40}?)"
        r"(?=\s*(?:$|[,.;!?]|\s+(?:at|on|in|from|for|with|through|via|online|part|full|and|so|because|but)\b))"
        r"|studying\s+(?P<subject>[a-z][\w -]{2,30}?)\s+at\s+(?-i:[A-Z]))",
        _study_any,
    ),
)

# What the user says of their partner, a pet, their manager or someone they go to ("my partner Jordan is gluten
# intolerant", "my dog Biscuit loves the beach", "my husband is a doctor", "my manager Priya wants a weekly update",
# "my dentist Dr. Okafor says I grind my teeth"), and one more pet ("we adopted a second cat"): filed under the slot
# so a question about them finds it, but it replaces nothing there (see `only_mentions`): the next thing said of
# Jordan adds to what is known of him.
_MENTIONS: tuple[_Rule, ...] = _rules(
    (
        rf"\bmy (?:new )?{_PARTNER},?\s+(?:(?-i:[A-Z])\w+|is\b|and i (?:have been|are|got|just)\b)",
        _fixed(vocab.RELATIONSHIP),
    ),
    (rf"\bmy (?:new |current |line )?{_MANAGER},?\s+{_PERSON_NAME}", _fixed(vocab.MANAGER)),
    (
        rf"\b(?:my|our) (?:new |current |regular |usual )?(?P<contact>{_CONTACT}),?\s+{_PERSON_NAME}",
        lambda m: _contact_any(m),
    ),
    (
        rf"\bmy (?:new\s+)?(?:little\s+)?(?P<pet>{_PETS}),?\s+(?-i:[A-Z])[a-z]+\b|"
        # one more pet is not a new value: "we adopted a second cat, Byte" leaves "we have a cat called Pixel"
        rf"\b{_ME}(?:'ve| have)?\s+{_NOW}(?:got|gotten|adopted|rescued|bought|fostered)\s+(?:a\s+|an\s+)?"
        rf"{_ONE_MORE}(?:\w+\s+)?(?P<pet2>{_PETS})\b",
        lambda m: _pet_any(m),
    ),
)


def _first_group(m: re.Match[str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = m.groupdict().get(name)
        if value:
            return value
    return None


# a contact's role as chat says it -> the role's slot ("new sparky is Bronwyn Teale" replaces the electrician)
_CONTACT_SYNONYMS = {
    "sparky": "electrician",
    "sparkie": "electrician",
    "chippy": "carpenter",
    "photog": "photographer",
}


def _contact_any(m: re.Match[str]) -> str | None:
    found = _first_group(m, ("contact", "contact2", "contact3", "contact4", "contact5"))
    if found is None and m.group("seen"):  # seen by a doctor whose role goes unsaid
        found = "doctor"
    if found is None:
        return None
    return f"{vocab.CONTACTS}{_clean(_CONTACT_SYNONYMS.get(found.lower(), found))}"


def _allergy_any(m: re.Match[str]) -> str | None:
    found = _first_group(m, ("allergen", *(f"allergen{i}" for i in range(2, 7))))
    cleaned = _clean(found) if found else ""
    return (
        f"{vocab.ALLERGIES}{cleaned}" if cleaned and cleaned not in ("food", "seasonal") else None
    )


def _intolerance_any(m: re.Match[str]) -> str | None:
    found = _first_group(m, ("food", "food2", "food3", "food4"))
    cleaned = _clean(found) if found else ""
    return f"{vocab.INTOLERANCES}{cleaned}" if cleaned else None


def _pet_any(m: re.Match[str]) -> str | None:
    kind = _first_group(m, ("pet", "pet2"))
    return _pet_kind(kind) if kind else None


def _metric_key(name: str) -> str:
    """The slot of a measure, its short forms said in full and a best said one way: "10k PB", "10k personal best"
    and "10k best" -> "user:metric:10k-best"; "half" is the half marathon."""
    said = vocab.metric_name(name)
    said = re.sub(r"\b(?:personal\s+(?:best|record)|record)\b", "best", said)
    said = re.sub(r"\b(best)(?:\s+best)+\b", r"\1", said)
    said = re.sub(r"^half\b(?!\s+marathon)", "half marathon", said)
    return f"{vocab.METRICS}{_clean(said)}"


def _pet_kind(kind: str) -> str:
    kind = _singular(kind)
    kind = {
        "puppy": "dog",
        "puppie": "dog",
        "kitten": "cat",
        "bunny": "rabbit",
        "bunnie": "rabbit",
    }.get(kind, kind)
    return f"{vocab.PETS}{kind}"


def _vehicle_any(m: re.Match[str]) -> str | None:
    kind = _first_group(m, ("vehicle", "vehicle2", "vehicle3", "vehicle5", "vehicle6"))
    return _vehicle_kind(kind) if kind else vocab.CAR


def _vehicle_kind(kind: str) -> str:
    kind = kind.lower()
    if kind in ("car", "truck", "pickup", "van", "minivan", "suv", "tesla"):
        return vocab.CAR
    return vocab.VEHICLES + {"motorbike": "motorcycle", "ebike": "e-bike", "bicycle": "bike"}.get(
        kind, kind
    )


def _condition_any(m: re.Match[str]) -> str | None:
    found = _first_group(m, ("cond", "cond2", "cond3", "cond4", "cond5", "cond6"))
    return _condition_key(found) if found else None


def _condition_key(found: str) -> str:
    found = re.sub(r"\s+", " ", found.lower())
    if found in _CONDITION_ADJECTIVES:
        return f"{vocab.HEALTH}{_CONDITION_ADJECTIVES[found]}"
    found = re.sub(r"^(?:an?|the) ", "", found)
    found = re.sub(r"^(?:type [12]|bad|torn|broken|sprained) ", "", found)
    found = re.sub(r"^(?:left|right) ", "", found)
    found = _CONDITION_SYNONYMS.get(found, found)
    found = re.sub(r" injury$", "", found)
    if found in _INJURED_PARTS:
        return f"{vocab.HEALTH}{found}-injury"
    return f"{vocab.HEALTH}{_clean(found)}"


def _habit_any(m: re.Match[str]) -> str | None:
    found = _first_group(m, ("habit", "habit2", "habit3", "habit4", "habit5"))
    if not found:
        return None
    found = found.lower()
    for name, pattern in (
        ("smoking", r"smok\w*|vap\w*|cigarettes|a non-?smoker|a smoker"),
        ("drinking", r"drink\w*|alcohol|sober|teetotal"),
        ("caffeine", r"caffeine|coffees?"),
    ):
        if re.fullmatch(pattern, found):
            return f"{vocab.HABITS}{name}"
    return None


def _medication_any(m: re.Match[str]) -> str | None:
    found = _first_group(m, ("item", *(f"item{i}" for i in range(2, 19))))
    return f"{vocab.MEDICATIONS}{_clean(found)}" if found else None


def _activity_any(m: re.Match[str]) -> str | None:
    found = _first_group(m, tuple(f"act{i}" if i else "act" for i in range(8)))
    if not found:
        return None
    found = re.sub(r"\s+", " ", found.lower())
    for name, nouns, verbs in _ACTIVITIES:
        if re.fullmatch(nouns, found, _I) or (verbs and re.fullmatch(verbs, found, _I)):
            return f"{vocab.ROUTINES}{name}"
    return None


# ---------------------------------------------------------------- guards: only the user's own, current, asserted facts

_THIRD_PERSON = re.compile(r"\b(?:she|he|they|her|his|their|she's|he's|they're|it's)\b", _I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|we|we're|we've|our|us)\b", _I)
_CLAUSE_BREAK = re.compile(
    r"[,;:—–()]|\s-\s|\b(?:and|but|so|or|because|then|plus)\b(?=\s+(?:i|we|i'm|we're|"
    r"i've|we've|my|our|now|these days|nowadays|she|he|they|you|it)\b)",
    _I,
)
_IRREALIS = re.compile(
    r"\b(?:if|unless|whether|what if|suppose|supposing|imagine|imagining|pretend|pretending|wish|would|could|"
    r"might|should|maybe|perhaps|someday|one day|thinking (?:about|of)|think about|considering|consider|"
    r"want(?:s|ed)? to|wanna|'d like to|like to|hop(?:e|ing) to|dream(?:ing)? (?:of|about)|plan(?:ning|s)? to|"
    r"used to|when i was|back when|before i|until|in case|as if|trying to|try to|afraid|worried|scared|"
    r"not sure|no idea|wonder|wondering|rather|instead of|than|fake|joke|kidding|ask(?:ed|s)? (?:me )?if|"
    r"asked whether|doubt|when|whenever|why|how)\b|'d\b",
    _I,
)
_FUTURE = re.compile(
    # "going to" as a plan, not a habit started or stopped ("I stopped going to yoga")
    r"\b(?:will|(?<!started )(?<!stopped )(?<!quit )(?<!began )going to|gonna|about to|soon|next (?:week|month|year|"
    r"spring|summer|fall|autumn|winter)|tomorrow|in (?:a|two|three|\d+) (?:weeks?|months?|years?))\b|'ll\b",
    _I,
)
_SELF_TAIL = re.compile(
    r"(?:^|\b(?:i|we|i've|we've|i'm|we're)\b)(?:\s+(?:\w+ly|just|now|finally|also|still|been|"
    r"have|am|are|already|then|even|gone|went|pretty much|kind of|sort of|these days|"
    r"nowadays))*\s*$",
    _I,
)


def _clause_start(sentence: str, pos: int) -> int:
    start = 0
    for m in _CLAUSE_BREAK.finditer(sentence, 0, pos):
        start = m.end()
    return start


def _asked(sentence: str, end: int) -> bool:
    """Whether the clause holding the match ends in a question mark with no clause break before it."""
    tail = sentence[end:]
    stop = re.search(r"[.!?]", tail)
    if not stop or stop.group() != "?":
        return False
    return not _CLAUSE_BREAK.search(tail[: stop.start()])


def _about_user(sentence: str, m: re.Match[str], prefix: str) -> bool:
    """Whether a match outside anything reported (see `_asserted`) speaks about the user, not about someone
    described or reported."""
    if _FIRST_PERSON.search(m.group(0)):
        return not re.search(
            r"\b(?:you|she|he|they|him|her|them)\s+(?:said|says|thinks?|told me|asked|wrote|"
            r"texted|believes?|claims?)\s+(?:that\s+)?$",
            prefix,
            _I,
        )
    if _THIRD_PERSON.search(sentence[: m.start()]):
        return False
    return bool(_SELF_TAIL.search(prefix)) and (
        bool(_FIRST_PERSON.search(sentence)) or len(words(sentence)) <= 10
    )


# who changes the user's drugs, said before the change: "he's", "Dr. Romero is", "the cardiologist", "my GP just"
_PRESCRIBER = re.compile(
    r"\s*(?:(?:so|and|then|but|today|also|now|anyway|apparently)\s+)*(?:he|she|they|dr\.?\s+\w+|"
    r"(?:the|my)\s+(?:doc|doctor|gp|consultant|specialist|nurse|pharmacist|psychiatrist|\w+ologist)|"
    r"(?-i:[A-Z])\w+)(?:['’]s|['’]ve|\s+(?:is|has|had|have|just|finally|already|then))*\s*",
    _I,
)
_SOMEONE_ELSES = re.compile(vocab.SOMEONE_ELSES_DRUG, _I)


def _prescribed(key: str, sentence: str, prefix: str) -> bool:
    """Whether a medication match is a change to the user's own drug told of whoever prescribes it ("he's swapping
    the atorvastatin for rosuvastatin"): the clause opens with that person, and nothing says the drug is another's."""
    return (
        key.startswith(vocab.MEDICATIONS)
        and _PRESCRIBER.fullmatch(prefix) is not None
        and _SOMEONE_ELSES.search(sentence) is None
    )


def _asserted(
    key: str, sentence: str, m: re.Match[str], reported: Sequence[tuple[int, int]]
) -> bool:
    """Whether a match states the current value, rather than asking, supposing, quoting or looking back.

    `reported` are the sentence's spans of words or beliefs that are not the speaker's (`sentences.reported_spans`).
    """
    start = _clause_start(sentence, m.start())
    prefix = sentence[start : m.start()]
    if any(a <= m.start() < b for a, b in reported) or _asked(sentence, m.end()):
        return False
    if _IRREALIS.search(prefix) or _IRREALIS.search(m.group(0)):
        return False
    clause_end = _CLAUSE_BREAK.search(sentence, m.end())
    clause = sentence[start : clause_end.start() if clause_end else len(sentence)]
    if key.startswith(vocab.USER) and _FUTURE.search(clause):
        return False
    if key.startswith(vocab.USER) and not (
        _about_user(sentence, m, prefix) or _prescribed(key, sentence, prefix)
    ):
        return False
    if key in (vocab.RESIDENCE, vocab.ORIGIN):
        return _names_a_place(sentence[m.end() :]) or _DEMONYM.search(m.group(0)) is not None
    return True


def _names_a_place(tail: str) -> bool:
    """Whether the words after "moved to" / "live in" hold a capitalised name that is not a software tool."""
    name = re.search(r"\b[A-Z][\w.]*[a-z]", tail)
    return name is not None and name.group().lower() not in KNOWN_TOOLS


# ---------------------------------------------------------------- third person about "the user" -> first person

_USER_VERB = re.compile(
    r"(?:^|(?<=[.!?]\s)|\bthe\s+)(?:user|User)(?:'s\b|\s+(?P<verb>[a-z']+)\b)", _I
)
_IRREGULAR = {"is": "am", "was": "was", "has": "have", "does": "do", "'s": "am", "goes": "go"}


def first_person_view(text: str) -> str:
    """Rewrite statements about "the user" ("The user lives in Porto") in the first person ("I live in Porto")."""
    return _USER_VERB.sub(_to_first_person, text)


def _to_first_person(m: re.Match[str]) -> str:
    verb = m.group("verb")
    if verb is None:
        return "my"
    lower = verb.lower()
    if lower in _IRREGULAR:
        return f"I {_IRREGULAR[lower]}"
    if re.fullmatch(
        r"[a-z]+ed|now|just|recently|also|no|still|currently|got|went|had|never|always|usually|"
        r"became|bought|sold|left|quit|can't|cannot|can|doesn't|does not|won't|will|didn't",
        lower,
    ):
        return f"I {lower.replace('doesn', 'don')}"
    if lower.endswith("ies") and len(lower) > 4:
        return f"I {lower[:-3]}y"
    if re.search(r"(?:sh|ch|x|ss|o)es$", lower):
        return f"I {lower[:-2]}"
    if lower.endswith("s") and not lower.endswith("ss"):
        return f"I {lower[:-1]}"
    return m.group(0)


def subject_of(sentence: str) -> str | None:
    """The subject key of a sentence stating the current value of something that changes over time, or None.

    Only the sentence's first `MAX_STATEMENT_CHARS` are read: each match is checked against the clause before it,
    so a sentence of many matches that are not statements ("She said I am a designer, " over and over, with no full
    stop) would cost time quadratic in its length.
    """
    view = _view(sentence)
    return _stated(view, _RULES) or _stated(view, _MENTIONS)


def only_mentions(sentence: str) -> bool:
    """Whether a sentence's slot comes only from what it says of someone already in it (`_MENTIONS`: "my partner
    Jordan is gluten intolerant", "we adopted a second cat"): it names no new value, so it replaces nothing there."""
    view = _view(sentence)
    return _stated(view, _RULES) is None and _stated(view, _MENTIONS) is not None


def _view(sentence: str) -> str:
    return first_person_view(re.sub(r"(?<=\w)’(?=\w)", "'", sentence[:MAX_STATEMENT_CHARS]))


def _stated(view: str, rules: Sequence[_Rule]) -> str | None:
    """The key of the first of `rules` the sentence (in `first_person_view`) asserts, or None."""
    reported: list[tuple[int, int]] | None = None  # found once, when a rule first matches
    for rule in rules:
        for m in rule.pattern.finditer(view):
            key = rule.key(m)
            if not key:
                continue
            if reported is None:
                reported = reported_spans(view)
            if _asserted(key, view, m, reported):
                return key
    return None
