"""Heuristic extraction of typed memory candidates from one turn, without a language model."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from hermes_bowerbird.curation.entities import find_entities, normalise_entity
from hermes_bowerbird.curation.noise import is_content_sentence
from hermes_bowerbird.curation.sentences import split_sentences, words
from hermes_bowerbird.types import DEFAULT_IMPORTANCE, Candidate, MemoryType

_I = re.IGNORECASE
_MAX_CONTENT_CHARS = 600
_MIN_WORDS = 5

# ---------------------------------------------------------------- subjects: keys for facts that change over time

_DIETS = (r"vegan|vegetarian|pescatarian|flexitarian|keto|paleo|carnivore|omnivore|plant[- ]based|gluten[- ]free|"
          r"dairy[- ]free|lactose[- ]intolerant|halal|kosher|low[- ]carb|intermittent fasting")
_JOB_NOUN = (r"[a-z-]*(?:er|or|ist|ian|ant|ent|ect|ive|eur|man|woman|person|nurse|chef|cook|"
             r"analyst|engineer|developer|designer|consultant|scientist|lawyer|doctor|teacher|professor|"
             r"student|intern|freelancer|founder|owner|manager|director|architect|artist|writer|"
             r"accountant|pilot|farmer|barista|clerk|dentist|surgeon|therapist|researcher|lead|head|cto|ceo|vp)")
_TOOL_CATEGORIES: dict[str, str] = {
    **dict.fromkeys(("postgres", "postgresql", "mysql", "mariadb", "sqlite", "mongodb", "redis", "dynamodb",
                     "supabase", "firebase", "snowflake", "bigquery"), "database"),
    **dict.fromkeys(("react", "vue", "svelte", "angular", "next.js", "nextjs"), "frontend-framework"),
    **dict.fromkeys(("django", "flask", "fastapi", "rails", "spring", "express"), "backend-framework"),
    **dict.fromkeys(("vim", "neovim", "emacs", "vscode", "vs code", "pycharm", "intellij", "xcode", "zed",
                     "sublime"), "editor"),
    **dict.fromkeys(("aws", "gcp", "azure", "heroku", "vercel", "netlify", "fly.io", "cloudflare",
                     "digitalocean", "render"), "hosting"),
    **dict.fromkeys(("pytest", "unittest", "jest", "mocha", "vitest"), "test-framework"),
    **dict.fromkeys(("npm", "pnpm", "yarn", "pip", "poetry", "uv", "conda"), "package-manager"),
    **dict.fromkeys(("github actions", "jenkins", "circleci", "gitlab ci", "travis"), "ci"),
    **dict.fromkeys(("slack", "discord", "telegram", "whatsapp", "signal", "teams"), "chat-app"),
    **dict.fromkeys(("notion", "obsidian", "evernote", "logseq"), "notes-app"),
}
_ACTION_SUBJECT = {"deploy": "deploy-tool", "host": "hosting", "test": "test-framework", "build": "build-tool",
                   "lint": "linter", "format": "formatter", "monitor": "monitoring", "store": "database"}


def _clean(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", normalise_entity(name)).strip("-")


@dataclass(frozen=True)
class _SubjectRule:
    pattern: re.Pattern[str]
    key: Callable[[re.Match[str]], str | None]


def _fixed(key: str) -> Callable[[re.Match[str]], str | None]:
    return lambda m: key


def _grouped(prefix: str, group: int = 1) -> Callable[[re.Match[str]], str | None]:
    def key(m: re.Match[str]) -> str | None:
        value = _clean(m.group(group))
        return f"{prefix}:{value}" if value else None
    return key


def _tool_choice(m: re.Match[str]) -> str | None:
    action = (m.groupdict().get("action") or "").lower()
    if action in _ACTION_SUBJECT:
        return f"project:{_ACTION_SUBJECT[action]}"
    tool = normalise_entity(m.group("tool"))
    category = _TOOL_CATEGORIES.get(tool)
    return f"project:{category}" if category else None


_SUBJECT_RULES: tuple[_SubjectRule, ...] = tuple(_SubjectRule(re.compile(p, _I), k) for p, k in (
    (r"\b(?:my name is|call me|my name's)\b", _fixed("user:name")),
    (r"\bi(?:'m| am) (?!(?:a|an|the|so|not|just|really|very|still|now|from|in|at|on|going|getting|trying)\b)"
     r"(?-i:[A-Z][a-z]+)(?:\s(?-i:[A-Z][a-z]+))?(?:,|\.|$|\s+by the way|\s+and\b)",
     _fixed("user:name")),
    (r"\bi(?:'m| am| just turned| turned)\s+(?:\d{1,3}|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty)"
     r"(?:-\w+)?)(?:\s+years?\s+old|\s+y/?o\b|(?=\s+and\b)|(?=[.,!]|$))", _fixed("user:age")),
    (rf"\b(?:i(?:'m| am)(?: now)?(?: a| an)?|i eat|my diet is|go(?:ing)?(?: fully| full| completely)?|"
     rf"went|switched to|becoming|become|mostly|strictly|eating)\s+(?:a\s+)?(?:{_DIETS})\b|\bmy diet\b|"
     rf"\bi (?:don't|do not|no longer) eat (?:meat|fish|pork|beef|dairy|eggs|animal products)\b",
     _fixed("user:diet")),
    (r"\bi(?:'m| am) allergic to ([a-z]+(?: [a-z]+)?)", _grouped("user:allergy")),
    (r"\b(?:i|we)(?:'ve| have)? (?:just )?(?:moved|relocated) (?:back )?to\b|\b(?:i|we) (?:now )?live in\b|"
     r"\b(?:i'm|i am|we're|we are) (?:now )?(?:living|based|settled) in\b|\bmy (?:home|house|apartment|flat) is in\b|"
     r"\b(?:i|we) (?:now )?live (?:near|outside|just outside)\b", _fixed("user:residence")),
    (r"\bi(?:'m| am) (?:originally )?from\b|\bi grew up in\b|\bmy hometown\b|\bi was born in\b",
     _fixed("user:origin")),
    (r"\bi (?:work|am working|'m working) (?:at|for)\b|\bi(?:'ve| have)? (?:just )?joined\b|"
     r"\bmy (?:employer|company) is\b|\bi(?:'m| am) (?:employed|hired) (?:at|by)\b|\bi got (?:a|the) job at\b|"
     r"\bmy own (?:practice|company|firm|business)\b",
     _fixed("user:employer")),
    (rf"\bi(?:'m| am|'ve been| have been| was| work as| started as|'m now| am now| became)\s+(?:a|an)\s+"
     rf"(?:[a-z-]+\s+){{0,3}}?{_JOB_NOUN}\b(?!\s+(?:of|to)\b)|\bmy (?:job|role|title|position|career) is\b|"
     r"\b(?:pivoting|switching|transitioning) (?:careers? )?(?:in)?to\s+(?:[a-z-]+\s+){0,3}?"
     r"(?:consulting|engineering|design|teaching|research|management|freelanc\w*)\b|"
     r"\bi(?:'m| am) (?:now )?(?:self-employed|freelancing|unemployed|retired)\b|\bi got promoted\b",
     _fixed("user:job")),
    (r"\bmy (?:wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?)\b|"
     r"\b(?:i'm|i am|we're|we are|we've been|i've been|got|getting|just got) (?:happily |recently )?"
     r"(?:married|divorced|separated|separating|engaged|single|widowed|dating)\b|\bwe (?:agreed|decided) to separate\b|"
     r"\b(?:falling for|in a relationship with|seeing someone|started dating|broke up)\b",
     _fixed("user:relationship")),
    (r"\bmy (dog|cat|puppy|kitten|parrot|hamster|rabbit|bunny|horse|turtle|fish|pet)\b|"
     r"\b(?:i|we) (?:just )?(?:got|adopted|have) an? (dog|cat|puppy|kitten|parrot|hamster|rabbit|horse)\b",
     lambda m: f"user:pet:{(m.group(1) or m.group(2)).lower()}"),
    (r"\b(?:i|we) (?:just |finally )?(?:bought|purchased|closed on|own|rent|are renting|am renting) "
     r"(?:a|an|the|our|my) (?:new |little |old )?(?:[a-z]+ )?(?:house|home|apartment|flat|condo|farmhouse|cottage|"
     r"cabin)\b|\bthe (?:house|farmhouse|apartment|flat|place|condo|cottage) is (?:mine|ours|officially ours)\b",
     _fixed("user:home")),
    (r"\bi (?:now )?work (?:from home|remotely|from a home office|in an office|on-site|hybrid)\b",
     _fixed("user:work-location")),
    (r"\b(?:i drive an?|my car is an?|i (?:just )?bought an? (?:new |used )?car|my new car)\b", _fixed("user:car")),
    (r"\b(?:my (?:new )?phone is an?|i (?:use|have|got) an? (?:new )?(?=iphone|pixel|galaxy|android))",
     _fixed("user:phone")),
    (r"\bmy (?:favou?rite) ([a-z]+(?: [a-z]+)?) (?:is|are)\b", _grouped("user:favourite")),
    (r"\b(?:we|i)(?:'ll| will)? (?P<action>deploy|host|test|build|lint|format|monitor)(?:s|ing)? "
     r"(?:\w+ ){0,3}?(?:with|on|using|via|to) (?P<tool>[A-Za-z][\w.+-]*)", _tool_choice),
    (r"\b(?:switch(?:ed|ing)? to|migrat(?:e|ed|ing) to|go(?:ing)? with|settled on|chose|picked|use|using|"
     r"moved to) (?P<tool>[A-Za-z][\w.+-]*(?: code)?)\b", _tool_choice),
))


_THIRD_PERSON = re.compile(r"\b(?:she|he|they|her|his|their|she's|he's|they're|it's)\b", _I)
_FIRST_PERSON_ANY = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|we|we're|we've|our|us)\b", _I)
_NEEDS_PLACE_NAME = ("user:residence", "user:origin")


def _about_user(sentence: str, m: re.Match[str]) -> bool:
    """Whether a user:* match speaks about the user, not about someone quoted or described."""
    if re.search(r"[.!?,][\"'’”]$", sentence) and not re.search(r"(?:^|\s)[\"'‘“]", sentence):
        return False  # the tail of a quotation split off by the sentence splitter
    if _FIRST_PERSON_ANY.search(m.group(0)):
        return True
    if _THIRD_PERSON.search(sentence[:m.start()]):
        return False
    return bool(_FIRST_PERSON_ANY.search(sentence)) or len(words(sentence)) <= 10


def _subject_plausible(key: str, sentence: str, m: re.Match[str]) -> bool:
    if not key.startswith("user:"):
        return True
    if not _about_user(sentence, m):
        return False
    if key in _NEEDS_PLACE_NAME:
        return re.search(r"\b[A-Z][a-z]", sentence[m.end():]) is not None
    return True


def subject_of(sentence: str) -> str | None:
    """The subject key of a sentence about something that changes over time, or None."""
    for rule in _SUBJECT_RULES:
        for m in rule.pattern.finditer(sentence):
            key = rule.key(m)
            if key and _subject_plausible(key, sentence, m):
                return key
    return None


# ---------------------------------------------------------------- types

_TYPE_RULES: tuple[tuple[MemoryType, re.Pattern[str]], ...] = tuple((t, re.compile(p, _I)) for t, p in (
    (MemoryType.TODO, r"\bremind me\b|\bdon'?t (?:let me )?forget\b|\btodo\b|\bto-do\b|\bdeadline\b|"
                      r"\bi (?:need|have|must|ought) to\b|\bi(?:'ve| have)? got to\b|\bi gotta\b|\bdue (?:on|by)\b"),
    (MemoryType.DECISION, r"\b(?:we|i)(?:'ve| have)? (?:decided|agreed|chosen|chose|settled on|committed to)\b|"
                          r"\blet'?s (?:go with|use|stick with|switch to)\b|\b(?:we|i)(?:'ll| will) (?:use|go with)\b|"
                          r"\b(?:we're|i'm|we are|i am) going with\b|\bdecision:|\bfrom now on\b|\bgoing forward\b"),
    (MemoryType.PROCEDURE, r"^(?:to|in order to) [a-z]+[^,]{0,60}, (?:run|use|type|open|click|go|do|call|set|add|"
                           r"first)\b|\bthe steps are\b|\bstep \d\b|\balways run\b.*\bbefore\b|"
                           r"\bmake sure (?:to|you) (?:run|set|use)\b|\bthe (?:command|way) to\b"),
    (MemoryType.GOAL, r"\bi (?:want|wanna|hope|plan|intend|aim) to\b|\bi'd (?:like|love) to\b|\bmy goal\b|"
                      r"\bi(?:'m| am) (?:trying|planning|hoping|aiming|saving up) to\b|\bplanning to\b|"
                      r"\bmy (?:dream|plan) is\b|\bi(?:'m| am) working (?:on|toward)\b|\bi(?:'m| am) thinking about\b"),
    (MemoryType.PREFERENCE, r"\bi (?:really |absolutely |kind of |kinda |totally )?(?:love|like|enjoy|adore|prefer|"
                            r"hate|dislike|despise|detest|can'?t stand|don'?t like|avoid)\b|\bi'd rather\b|"
                            r"\bmy favou?rite\b|\bi (?:always|never|usually|rarely)\b|\b(?:always|never) use\b|"
                            r"\bi(?:'m| am) (?:a fan of|into|not a fan of)\b|\bi stay out of\b"),
    (MemoryType.IDENTITY, r"\bmy name\b|\bi(?:'m| am) (?:a|an) \w+|\bi(?:'m| am) \d{1,3}\b|"
                          r"\bi (?:live|grew up|was born)\b|\bi(?:'m| am) (?:originally )?from\b|"
                          r"\bmy (?:wife|husband|partner|son|daughter|kids|children|mom|dad|mother|father|brother|"
                          r"sister|parents|family|dog|cat|heritage)\b|\bi have (?:two|three|four|\d) (?:kids|children|"
                          r"sons|daughters)\b"),
    (MemoryType.EVENT, r"\byesterday\b|\blast (?:night|week|weekend|month|year|monday|tuesday|wednesday|thursday|"
                       r"friday|saturday|sunday)\b|\bthis (?:morning|afternoon|evening)\b|\btonight\b|"
                       r"\btoday\b|\b(?:i|we) just (?:got|came|finished|started|bought|signed|moved|left|"
                       r"met|had)\b|\bi (?:went|visited|met|finished|started|bought|sold|signed|quit|resigned|"
                       r"got back|spoke|ran|won|lost)\b|\bwe (?:went|visited|met|finished|bought|sold|signed|had|"
                       r"moved|made it)\b|\b(?:on|in) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
                       r"january|february|march|april|may|june|july|august|september|october|november|december)\b"),
))
_SUBJECT_TYPES = {"user:name": MemoryType.IDENTITY, "user:age": MemoryType.IDENTITY,
                  "user:residence": MemoryType.IDENTITY, "user:origin": MemoryType.IDENTITY,
                  "user:job": MemoryType.IDENTITY, "user:employer": MemoryType.IDENTITY,
                  "user:relationship": MemoryType.IDENTITY, "user:diet": MemoryType.PREFERENCE,
                  "user:home": MemoryType.IDENTITY}
_NOT_A_MEMORY = re.compile(
    r"^(?:what|how|why|when|where|who|which|can|could|would|should|is|are|do|does|did|will|shall)\b.*\?$|"
    r"\bi (?:want|need|'d like|would like) (?:you )?to (?:know|ask|understand|check|see if|make sure|thank)\b|"
    r"^(?:if|what if|suppose|imagine|hypothetically)\b|\b(?:can|could|would|will) you\b|^please\b", _I)
_EXPLICIT = re.compile(r"\b(?:remember|don'?t forget|note that|for the record|fyi|keep in mind|important:)\b", _I)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|probably|might|i think|i guess|not sure|kind of|sort of)\b", _I)
_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|forty|fifty|"
                     r"hundred|thousand)\b", _I)
_DATE = re.compile(r"\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|"
                   r"nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th) of [a-z]+)\b", _I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b", _I)
_LEADING_FILLER = re.compile(r"^(?:(?:so|well|yeah|yes|ok(?:ay)?|honestly|actually|anyway|oh|also|and|but|"
                             r"btw|by the way|plus|right)\b[\s,.!-]*)+", _I)
_RELATIVE_DAYS = ((re.compile(r"\byesterday\b|\blast night\b", _I), 1), (re.compile(r"\btoday\b|\btonight\b|"
                  r"\bthis (?:morning|afternoon|evening)\b", _I), 0), (re.compile(r"\blast week(?:end)?\b", _I), 7))
_ASSISTANT_CONCLUSION = re.compile(
    r"\b(?:we decided|you decided|you(?:'ve| have) decided|the decision is|in summary|to summari[sz]e|"
    r"the (?:fix|solution|root cause|answer|plan|steps?) (?:is|are|was)|you(?:'ll| will) need to|"
    r"(?:always|never) (?:run|use|deploy)|make sure to|remember to|to [a-z]+ [^,]{0,50}, run)\b", _I)
_TECHNICAL_STEP = re.compile(r"`|\$ |\b(?:run|install|deploy|configure|restart|build|commit|push|ssh|sudo|pip|npm|"
                             r"git|docker|kubectl|make|export|chmod|systemctl|migrate)\b", _I)
_PAST_TENSE = re.compile(r"\b(?:i|we|he|she|they|[A-Z][a-z]+) (?:just |finally |also |actually )?"
                         r"(?:[a-z]+ed|went|made|took|"
                         r"sat|said|had|got|came|saw|met|ran|told|found|left|bought|sold|ate|drove|spoke|gave|"
                         r"wrote|began|brought|thought|felt|kept|won|lost|paid|sent|spent|did|was|were)\b")
_NUMBERED_LINE = re.compile(r"^\s*(?:\d{1,2}[.)]|step \d{1,2}:?|[-*•])\s+\S", _I | re.MULTILINE)


def _type_of(sentence: str, subject: str | None) -> MemoryType | None:
    for mtype, pattern in _TYPE_RULES:
        if pattern.search(sentence):
            if mtype in (MemoryType.EVENT, MemoryType.IDENTITY) and subject in _SUBJECT_TYPES:
                return _SUBJECT_TYPES[subject]
            return mtype
    if subject is not None:
        return _SUBJECT_TYPES.get(subject, MemoryType.FACT)
    return None


def _importance(mtype: MemoryType, sentence: str, entities: tuple[str, ...]) -> float:
    score = DEFAULT_IMPORTANCE[mtype]
    if _EXPLICIT.search(sentence):
        score += 0.2
    if entities:
        score += 0.05
    if _NUMBER.search(sentence) or _DATE.search(sentence):
        score += 0.05
    if _HEDGE.search(sentence):
        score -= 0.1
    return round(min(1.0, max(0.0, score)), 3)


def _with_date(content: str, mtype: MemoryType, now: float | None) -> str:
    """Anchor relative time words of events to a calendar date so they stay meaningful later."""
    if now is None or mtype != MemoryType.EVENT:
        return content
    for pattern, days_back in _RELATIVE_DAYS:
        if pattern.search(content):
            day = time.strftime("%Y-%m-%d", time.gmtime(now - days_back * 86400))
            return f"{content} ({'around ' if days_back == 7 else ''}{day})"
    return content


def _with_context(sentences: list[str], i: int) -> str:
    """A short sentence plus the following ones until the text stands on its own (>= 8 words)."""
    parts = [sentences[i]]
    j = i + 1
    while len(words(" ".join(parts))) < 8 and j < len(sentences) and not sentences[j].endswith("?"):
        parts.append(sentences[j])
        j += 1
    return " ".join(parts)


def _candidate(sentence: str, content: str, role: str, now: float | None) -> Candidate | None:
    if _NOT_A_MEMORY.search(sentence):
        return None
    subject = subject_of(sentence)
    mtype = _type_of(sentence, subject)
    if mtype is None:
        mtype = _fallback_type(sentence, role)
        if mtype is None:
            return None
    if subject is None and not is_content_sentence(sentence, role):
        return None
    if subject is None and len(words(content)) < _MIN_WORDS:
        return None
    entities = tuple(name for name, _ in find_entities(content))
    confidence = 0.9 if _EXPLICIT.search(sentence) else 0.6 if role == "assistant" or _HEDGE.search(sentence) else 0.75
    content = _with_date(content, mtype, now)[:_MAX_CONTENT_CHARS]
    return Candidate(type=mtype, content=content, importance=_importance(mtype, sentence, entities),
                     confidence=confidence, subject=subject, entities=entities, role=role)


def _fallback_type(sentence: str, role: str) -> MemoryType | None:
    """A durable user statement with a name or number is a fact; anything else is left to the episodes."""
    if role != "user" or not _FIRST_PERSON.search(sentence):
        return None
    has_name = any(kind != "thing" for _, kind in find_entities(sentence))
    if not (has_name or _NUMBER.search(sentence)):
        return None
    return MemoryType.EVENT if _PAST_TENSE.search(sentence) else MemoryType.FACT


def _is_question(sentence: str) -> bool:
    """A question, unless it opens with a first-person statement ("I'm 41 and ... is this it?")."""
    if not sentence.endswith("?"):
        return False
    return not re.match(r"(?:i|i'm|i've|my|we|we're|we've)\b[^?,]{8,}", sentence, _I)


def _user_candidates(text: str, now: float | None) -> list[Candidate]:
    sentences = [_LEADING_FILLER.sub("", s).strip() or s for s in split_sentences(text)]
    found = []
    for i, sentence in enumerate(sentences):
        if _is_question(sentence):
            continue
        content = _with_context(sentences, i) if len(words(sentence)) < _MIN_WORDS else sentence
        candidate = _candidate(sentence, content, "user", now)
        if candidate:
            found.append(candidate)
    return found


def _procedure_block(text: str) -> str | None:
    """A list of >= 2 numbered or bulleted steps with the line that introduces them."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    steps = [i for i, ln in enumerate(lines) if _NUMBERED_LINE.match(ln)]
    if len(steps) < 2:
        return None
    start = max(0, steps[0] - 1)
    return "\n".join(ln.strip() for ln in lines[start:steps[-1] + 1])[:_MAX_CONTENT_CHARS]


def _assistant_candidates(text: str, now: float | None) -> list[Candidate]:
    found = []
    block = _procedure_block(text)
    if block and _TECHNICAL_STEP.search(block):
        found.append(Candidate(type=MemoryType.PROCEDURE, content=block,
                               importance=DEFAULT_IMPORTANCE[MemoryType.PROCEDURE], confidence=0.6,
                               entities=tuple(n for n, _ in find_entities(block)), role="assistant"))
    for sentence in split_sentences(text):
        if _NUMBERED_LINE.match(sentence) or sentence.endswith("?") or not _ASSISTANT_CONCLUSION.search(sentence):
            continue
        candidate = _candidate(sentence, sentence, "assistant", now)
        if candidate and candidate.type in (MemoryType.DECISION, MemoryType.PROCEDURE, MemoryType.TODO,
                                            MemoryType.FACT, MemoryType.PREFERENCE):
            found.append(candidate)
    return found


def extract_candidates(user: str, assistant: str, *, now: float | None = None) -> list[Candidate]:
    """Typed memory candidates from one turn: the user's own statements and the assistant's conclusions."""
    found = _user_candidates(user, now) + _assistant_candidates(assistant, now)
    kept: list[int] = []
    for i in sorted(range(len(found)), key=lambda k: -len(found[k].content)):
        text = found[i].content.lower()
        if not any(text in found[k].content.lower() for k in kept):
            kept.append(i)
    return [found[i] for i in sorted(kept)]
