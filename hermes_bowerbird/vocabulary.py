"""Leaf module: the subject keys (profile slots) curation writes on memories and retrieval asks for.

A subject key names what a memory states the current value of ("user:diet", "project:database"); two current
memories of one scope with the same key and different content mean the newer supersedes the older. A key ending
in ':' is a family: "user:pet:" covers "user:pet:dog", "user:pet:cat", one slot per kind. Curation's rules
(curation/subjects.py), extraction's types (curation/extract.py), query hints (retrieval/query.py) and the model's
extraction prompt (curation/llm_batch.py) all use the keys declared here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .types import MemoryType

USER = "user:"  # keys about the user: they need a first-person (or the user's own name) statement or question
PROJECT = "project:"  # keys about the user's work and tools


@dataclass(frozen=True)
class Subject:
    """One declared subject key (or family of keys) and the memory type of a statement of it."""

    key: str
    type: MemoryType
    importance: float = 0.0  # the least importance a statement of it has (see VITAL)

    @property
    def is_family(self) -> bool:
        return self.key.endswith(":")

    def covers(self, key: str) -> bool:
        """Whether `key` is this key, or a member of this family."""
        return key.startswith(self.key) if self.is_family else key == self.key


def _subject(key: str, memory_type: MemoryType = MemoryType.FACT, importance: float = 0.0) -> str:
    _DECLARED.append(Subject(key, memory_type, importance))
    return key


# The user's health (allergies, conditions, medications): an assistant that loses sight of it can do harm, so a
# statement of it weighs as much as who the user is, leads the bulletin's facts and outranks small talk in recall.
VITAL = 0.9


_DECLARED: list[Subject] = []

# -- who the user is ---------------------------------------------------------------------------------------------
NAME = _subject("user:name", MemoryType.IDENTITY)
AGE = _subject("user:age", MemoryType.IDENTITY)
RESIDENCE = _subject("user:residence", MemoryType.IDENTITY)
HOME = _subject("user:home", MemoryType.IDENTITY)
ORIGIN = _subject("user:origin", MemoryType.IDENTITY)
FAITH = _subject("user:faith", MemoryType.IDENTITY)
JOB = _subject("user:job", MemoryType.IDENTITY)
EMPLOYER = _subject("user:employer", MemoryType.IDENTITY)
WORK_LOCATION = _subject("user:work-location")
MANAGER = _subject("user:manager")
CONTACTS = _subject("user:contact:")
# a drug's name: one the table knows, or a word with a pharmacological ending (metformin, lisinopril, sertraline,
# atorvastatin, omeprazole, levothyroxine); never "the bus" or "walks". The `MEDICATIONS` slots' words in a statement
# (curation/subjects.py) or as chat says it (curation/spoken.py)
DRUG = (
    r"(?:insulin|aspirin|ibuprofen|paracetamol|acetaminophen|melatonin|prednisone|warfarin|lithium|"
    r"adderall|ritalin|xanax|prozac|zoloft|lexapro|wellbutrin|synthroid|ozempic|wegovy|"
    r"[a-z]{2,}(?:formin|pril|sartan|statin|olol|azole|prazole|oxetine|aline|pine|zepam|azepam|done|"
    r"cillin|mycin|cycline|thyroxine|mab|tidine|triptan|profen|sone|lone|semide|zide|triptyline|azine|"
    r"amine|nicotine|caffeine|gliptin|glutide|gliflozin|imibe|lukast|parin|terol|sonide|pram|faxine|pion|xaban|gatran|"
    r"oxen|trexate|quine|prine|phenolate|purinol|limus|sporin|salazine|flunomide|spirone|colchicine))"
)
# a change to a drug the user takes, told of whoever prescribes it: "he bumped the metformin up to 1000 mg", "Dr. Romero
# is swapping the atorvastatin for rosuvastatin", "she stopped my omeprazole" (curation/noise.py, subjects.py)
PRESCRIBER_CHANGE = (
    r"\b(?:swapped|swapping|switched|switching|changed|changing|replaced|replacing|upped|upping|increased|"
    r"increasing|raised|raising|lowered|lowering|reduced|reducing|doubled|doubling|halved|halving|bumped|bumping|"
    rf"stopped|stopping|cut|cutting)\s+(?:up\s+|down\s+)?(?:the|my)\s+{DRUG}\b"
)
# the user, or the user and theirs, being or doing: "I'm", "I am", "we're", "we are"
I_OR_WE_ARE = r"(?:i|we)(?:['’]m|\s+am|['’]re|\s+are)"
# what the user does these days with a thing they name, a lasting doing: "I'm reading Middlemarch", "we're watching
# The Bear" (curation/extract.py keeps it, curation/changes.py reads a new thing done the same way)
DOINGS = (
    r"reading|re-?reading|learning|studying|watching|re-?watching|training|playing|using|taking|renovating|"
    r"building|writing|working|running|doing|listening|attending|teaching|practi[cs]ing|saving|coaching|"
    r"volunteering|knitting|painting|growing|brewing|fostering|collecting|coding|developing"
)
# the people and animals closest to the user, as "my ..." names them (curation/extract.py, subjects.py)
CLOSE_PEOPLE = (
    r"wife|husband|partner|fianc[eé]e?|boyfriend|girlfriend|son|daughter|kids?|child|children|mom|mum|dad|"
    r"mother|father|brother|sister|parents|dog|cat"
)
# a sentence about someone else's drugs: "Leo's paediatrician upped the Focalin", "my son's doctor stopped his
# ritalin", "her dose", "for my dad" (curation/subjects.py, given_up.py)
SOMEONE_ELSES_DRUG = (
    rf"\b(?:his|her|their)\s+(?:\w+\s+)?(?:{DRUG}|dose|meds|medication|prescription|pills)\b|"
    rf"\b(?!(?:it|that|he|she|there|what|who)['’]s)\w+['’]s\s+(?:\w+\s+)?(?:{DRUG}|dose|meds|medication|"
    r"prescription|pills|doctor|gp|consultant|specialist|\w+ologist|p(?:a)?ediatrician)\b|"
    rf"\bmy\s+(?:{CLOSE_PEOPLE})\b|\bfor\s+(?:him|her|them)\b"
)
# the roles of the people the user goes to, one `CONTACTS` slot each ("user:contact:dentist"), as words in a
# statement (curation/subjects.py) or a question (retrieval/query.py)
CONTACT_ROLES = (
    r"accountant|cpa|bookkeeper|childminder|dentist|doctor|gp|therapist|counsell?or|lawyer|solicitor|landlord|landlady|vet|hairdresser|"
    r"hairstylist|barber|personal trainer|trainer|tutor|physio(?:therapist)?|psychiatrist|psychologist|"
    r"dermatologist|financial (?:advisor|adviser)|mechanic|cleaner|nanny|babysitter|midwife|optician|"
    r"chiropractor|realtor|estate agent|p(?:a)?ediatrician|dietitian|nutritionist|property manager|"
    r"letting agent|cardiologist|gynaecologist|gynecologist|osteopath|acupuncturist|contractor|builder|plumber|"
    r"electrician|endocrinologist|rheumatologist|nephrologist|neurologist|oncologist|gastroenterologist|urologist|"
    r"ophthalmologist|pulmonologist|ha?ematologist|allergist|podiatrist|orthopaedic surgeon|orthopedic surgeon|"
    # the people a wedding, a build or a job hunt has the user go to
    r"photographer|photog|videographer|florist|caterer|celebrant|officiant|wedding planner|recruiter|carpenter|"
    r"chippy|joiner|tiler|painter|decorator|roofer|architect|surveyor|gardener|landscaper|handyman|sparky|sparkie"
)
RELATIONSHIP = _subject("user:relationship", MemoryType.IDENTITY)
CHILDREN = _subject("user:children", MemoryType.IDENTITY)
PETS = _subject("user:pet:", MemoryType.IDENTITY)
# -- how the user lives ------------------------------------------------------------------------------------------
DIET = _subject("user:diet", MemoryType.PREFERENCE)
ALLERGIES = _subject("user:allergy:", importance=VITAL)
HEALTH = _subject("user:health:", importance=VITAL)
# the conditions that decide what the user can eat, beside their diet (curation/subjects.py writes them)
# a food the user cannot eat without harm, one slot each ("user:health:intolerance:gluten"); a family of its own
# within health
INTOLERANCES = _subject(f"{HEALTH}intolerance:", importance=VITAL)
FOOD_CONDITIONS = (f"{HEALTH}lactose-intolerance", f"{HEALTH}celiac", INTOLERANCES)
MEDICATIONS = _subject("user:medication:", importance=VITAL)
WEIGHT = _subject("user:weight")
# a measure of the user's body or training, one slot each, so the newest reading is the current one
# ("user:metric:blood-pressure", "user:metric:squat-best")
METRICS = _subject("user:metric:")
# ...as a tracking user names them (curation/spoken.py, curation/subjects.py)
METRIC_NAMES = (
    r"blood\s+pressure|bp|resting\s+(?:heart\s+rate|hr|pulse)|heart\s+rate|hr|pulse|hrv|vo2\s?max|ftp|ldl|hdl|"
    r"cholesterol|triglycerides|(?:hb)?a1c|glucose|blood\s+sugar|ferritin|vitamin\s+d|b12|tsh|psa|bmi|"
    r"body\s?fat|body\s?weight|sleep|steps|squat|bench(?:\s+press)?|deadlift|overhead\s+press|ohp|"
    r"(?:5|10|21)\s?k|half(?:\s+marathon)?|marathon|pace|spo2|peak\s+flow"
)
# ...their short forms said in full
METRIC_WORDS = {
    "bp": "blood pressure",
    "hr": "heart rate",
    "hrv": "heart rate variability",
    "pb": "personal best",
    "pr": "personal record",
    "avg": "average",
    "ohp": "overhead press",
    "ftp": "FTP",
    "ldl": "LDL",
    "hdl": "HDL",
    "pulse": "heart rate",
}

# ...and what may follow the name: "10k pb", "sleep avg", "squat PR", "ftp retest"
METRIC_KIND = r"(?:\s+(?:pb|pr|personal\s+best|personal\s+record|best|record|avg|average|time|reading|score|retest))*"
# a blood pressure reading the user notes without naming it, in a sentence that speaks of readings ("152/94 this
# morning, pulse 78", "Readings this week averaged 141/88"), not of someone else's ("Edith's pressure is always
# perfect, 118/76"), not a score ("110/120 marks") (curation/noise.py, curation/subjects.py)
BP_READING = (
    r"^(?!.*\b(?:his|her|their|(?!(?:it|that|what|there)['’]s)\w+['’]s)\s+(?:blood\s+)?(?:pressure|bp|readings?)\b)"
    r"(?=.*\b(?:bp|pressure|readings?|average|avg|morning|evening|sitting|systolic|at\s+home|pulse|mmhg|today)\b)"
    r".*?(?<![\d/.])(?P<bp>(?:1\d{2}|[89]\d)/(?:[4-9]\d|1[0-4]\d))(?![\d/])"
)


def metric_name(said: str) -> str:
    """A measure's name as a tracking user said it, its short forms in full: "resting hr" -> "resting heart rate"."""
    return " ".join(METRIC_WORDS.get(w, w) for w in said.lower().split())


HABITS = _subject("user:habit:", MemoryType.PREFERENCE)
ROUTINES = _subject("user:routine:", MemoryType.PREFERENCE)
FAVOURITES = _subject("user:favourite:", MemoryType.PREFERENCE)
CAR = _subject("user:car")
VEHICLES = _subject("user:vehicle:")
PHONE = _subject("user:phone")
PHONE_NUMBER = _subject("user:phone-number")
BROWSER = _subject("user:browser")
OPERATING_SYSTEM = _subject("user:os")
MUSIC_APP = _subject("user:music-app")
EMAIL = _subject("user:email")
PASSWORD_MANAGER = _subject("user:password-manager")
# the language the user wants to be answered in ("from now on answer me in Portuguese", "you can go back to English")
REPLY_LANGUAGE = _subject("user:reply-language", MemoryType.PREFERENCE)
# the languages a user may ask to be answered in
LANGUAGES = (
    r"english|spanish|portuguese|french|german|italian|dutch|polish|czech|swedish|norwegian|danish|finnish|"
    r"greek|turkish|russian|ukrainian|arabic|hebrew|hindi|urdu|bengali|chinese|mandarin|cantonese|japanese|"
    r"korean|vietnamese|thai|indonesian|malay|tagalog|romanian|hungarian|catalan|basque|irish|welsh|swahili"
)
# what the user is studying, one slot per subject: a language, a course, a degree's field
STUDIES = _subject("user:study:")
# going back or switching to one: "go back to english", "switch back to answering in Spanish"
BACK_TO_LANGUAGE = (
    rf"(?:go\s+back\s+to|switch\s+(?:back\s+)?to)\s+(?:answering\s+in\s+)?(?:{LANGUAGES})\b"
)
# -- the user's projects and tools -------------------------------------------------------------------------------
DATABASE = _subject("project:database")
FRONTEND_FRAMEWORK = _subject("project:frontend-framework")
BACKEND_FRAMEWORK = _subject("project:backend-framework")
HOSTING = _subject("project:hosting")
TEST_FRAMEWORK = _subject("project:test-framework")
PACKAGE_MANAGER = _subject("project:package-manager")
CI = _subject("project:ci")
EDITOR = _subject("project:editor")
CHAT_APP = _subject("project:chat-app")
NOTES_APP = _subject("project:notes-app")
DEPLOY_TOOL = _subject("project:deploy-tool")
BUILD_TOOL = _subject("project:build-tool")
LINTER = _subject("project:linter")
FORMATTER = _subject("project:formatter")
MONITORING = _subject("project:monitoring")
ISSUE_TRACKER = _subject("project:issue-tracker")

SUBJECTS: tuple[Subject, ...] = tuple(_DECLARED)
"""Every declared key and family, in declaration order."""


def declared(key: str) -> Subject | None:
    """The declared key or family that covers `key` (an exact key before a family, the narrowest family before a
    wider one: user:health:intolerance: before user:health:), or None."""
    exact = next((s for s in SUBJECTS if not s.is_family and s.key == key), None)
    families = [s for s in SUBJECTS if s.is_family and s.covers(key)]
    return exact or max(families, key=lambda s: len(s.key), default=None)


def importance_floor(key: str | None) -> float:
    """The least importance a statement of `key` has (0 for most keys and for none)."""
    found = declared(key) if key else None
    return found.importance if found is not None else 0.0


def subject_type(key: str) -> MemoryType:
    """The memory type of a statement of `key`: who the user is, what they like, or (undeclared keys) a fact."""
    found = declared(key)
    return found.type if found is not None else MemoryType.FACT


def prompt_keys() -> list[str]:
    """The keys as a model is shown them: a family as "user:pet:<kind>"."""
    return [f"{s.key}<kind>" if s.is_family else s.key for s in SUBJECTS]
