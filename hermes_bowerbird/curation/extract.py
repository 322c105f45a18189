"""Heuristic extraction of typed memory candidates from one turn, without a language model."""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Callable, Collection

from hermes_bowerbird import vocabulary as vocab
from hermes_bowerbird.curation import pasted
from hermes_bowerbird.curation.changes import says_changed
from hermes_bowerbird.curation.completion import (
    says_closed,
    says_dropped,
    says_happened,
    says_settled,
)
from hermes_bowerbird.curation.entities import find_entities
from hermes_bowerbird.curation.given_up import says_given_up
from hermes_bowerbird.curation.gone import says_gone
from hermes_bowerbird.curation.noise import (
    ADVICE,
    LET_UNIT,
    NAMED_FACT,
    PERSON_TRAIT,
    PROCEDURE_OPENING,
    REMINDER_REQUEST,
    TEAM_RULE,
    TECHNICAL_VALUE,
    TODO_MARK,
    introduced_name,
    is_content_sentence,
    is_greeting,
    marked_task,
    opens_with_person,
    people_named,
    says_when_it_happens,
    statement_before_question,
    statement_before_unmarked_question,
)
from hermes_bowerbird.curation.redact import without_secrets
from hermes_bowerbird.curation.sentences import (
    LEADING_FILLER,
    MAX_STATEMENT_CHARS,
    own_words,
    split_sentences,
)
from hermes_bowerbird.curation.spoken import DONE_VERBS, plain
from hermes_bowerbird.curation.standing import standing_request
from hermes_bowerbird.curation.subjects import first_person_view, spoken_number, subject_of
from hermes_bowerbird.text import MONTHS_BUT_MAY, WEEKDAY_STEMS
from hermes_bowerbird.text import chat_words as words
from hermes_bowerbird.timestamps import DAY
from hermes_bowerbird.types import Candidate, MemoryType, type_spec
from hermes_bowerbird.vocabulary import subject_type

__all__ = ["extract_candidates", "subject_of"]

_I = re.IGNORECASE
_MAX_CONTENT_CHARS = 600
_MIN_WORDS = 5

# ---------------------------------------------------------------- types

_CLOSE = vocab.CLOSE_PEOPLE
_CLOSE_MENTION = re.compile(rf"\b(?:my|our) (?:{_CLOSE})\b", _I)
# a verb in the past: a regular form ("moved", not "need" or "feed") or a common irregular one
_PAST_VERB = (
    r"\w+[^e\W]ed|went|had|was|were|got|did|saw|made|took|thought|knew|said|told|came|felt|found|left|met|ran|"
    r"wrote|bought|sold|ate|drank|drove|heard|understood|gave|kept|sat|spoke|became|began|brought|won|lost|"
    r"paid|sent|spent"
)
# what a fear "of" names when it is a fear of how things may go, not of a thing: "I'm afraid of failing", "of what
# happens next" (a preference or a trait is a thing feared: "I'm terrified of flying")
_FEAR_OF_HOW = r"(?:what|how|whether|if|that|when|where|who|it|this|losing|failing|getting|being|messing|screwing)"
_TYPE_RULES: tuple[tuple[MemoryType, re.Pattern[str]], ...] = tuple(
    (t, re.compile(p, _I))
    for t, p in (
        (
            MemoryType.TODO,
            # "remind me if I forget" asks to be told a fact again, sets no task
            r"\bremind me\b(?! (?:of it )?(?:if|when|in case) (?:i|we) forget\b)|"
            # "Don't forget I'm vegan" reminds of a fact, not a task, as "the pin is 4821, dont let me forget it" does
            r"\bdon'?t (?:let me )?forget\b(?!,? (?:that )?(?:i'm|i’m|i am|we're|we’re|we are|"
            r"my [\w'’]+(?: [\w'’]+)? (?:is|are))\b)(?!,? (?:it|this|that|them)\b[\s.!]*$)|"
            # (someone else's deadline is theirs: "her deadline is 1 September")
            r"\btodo\b|\bto-do\b|(?<!her )(?<!his )(?<!their )(?<!['’]s )\bdeadline\b|"
            # "I need to remember that my sister is allergic" states a fact, not a task
            r"\bi (?:still |really |also |just |definitely |urgently )?(?:need|have|must|ought) to\b"
            r"(?! (?:remember|keep in mind|bear in mind|not forget) that\b)|"
            r"\bi(?:'ve| have)? got to\b|\bi gotta\b|\bdue (?:on|by)\b|\bnote to self\b",
        ),
        (
            MemoryType.DECISION,
            r"\b(?:we|i)(?:'ve| have)? (?:decided|agreed|chosen|chose|settled on|committed to)\b|"
            r"\blet'?s (?:go with|use|stick with|switch to)\b|\b(?:we|i)(?:'ll| will) (?:use|go with)\b|"
            r"\b(?:we're|i'm|we are|i am) going with\b|\bdecision:|\bfrom now on\b|\bgoing forward\b",
        ),
        (
            MemoryType.PROCEDURE,
            rf"{PROCEDURE_OPENING.pattern}|{TEAM_RULE.pattern}|\bthe steps are\b|\bstep \d\b|"
            r"\balways run\b.*\bbefore\b|"
            r"\bmake sure (?:to|you) (?:run|set|use)\b|\bthe (?:command|way) to\b",
        ),
        (
            MemoryType.GOAL,
            r"\bi (?:want|wanna|hope|plan|intend|aim) to\b|\bi'd (?:like|love) to\b|\bmy goal\b|"
            r"\bi(?:'m| am) (?:trying|planning|hoping|aiming|saving up) to\b|\bplanning to\b|"
            # saving for something: "I'm saving for a house deposit"
            r"\b(?:i'm|i am|we're|we are) saving (?:up )?for (?:a|an|the|my|our)\b|"
            r"\bmy (?:dream|plan) is\b|\bi(?:'m| am) working (?:on|toward)\b|\bi(?:'m| am) thinking about\b",
        ),
        (
            MemoryType.PREFERENCE,
            r"\bi (?:(?:really|absolutely|kind of|kinda|totally|personally|honestly|genuinely|seriously|also|still|"
            r"just|do|definitely|actually|much|far|generally|strongly) )*(?:love|like|enjoy|adore|prefer|"
            r"hate|dislike|despise|detest|can'?t stand|don'?t like|avoid)\b|\bi'd rather\b|"
            # "I only drink oat milk", "I'm scared of heights", "I'm terrified of flying"
            r"\bi (?:only|mostly|mainly) (?:drink|eat|wear|use|buy|fly|drive|read|watch|listen to)\b|"
            # how they take a drink: "I take my tea black with no sugar", "I have my coffee with oat milk"
            r"\bi (?:take|have|drink|like) my (?:tea|coffee|latte|cuppa|brew|gin|whisky|whiskey|steak|eggs) "
            r"(?:black|white|strong|weak|milky|sweet|neat|rare|medium|well[- ]done|runny|with|without|no)\b|"
            r"\bi(?:'m| am) (?:(?:really|so|very|absolutely|quite|a bit|kind of|kinda|also) )*(?:scared|afraid|"
            rf"terrified|frightened|petrified) of\b(?! {_FEAR_OF_HOW}\b)|"
            # "I never eat meat", not a past "I never went" or "I always used to"
            # ...nor what happens to them: "I always forget it", "I never get a seat"
            rf"\bmy favou?rite\b|\b(?:i|we) (?:always|never|usually|rarely)\b(?! (?:{_PAST_VERB}|forget|lose|miss|get"
            r"|mix up|run late|oversleep)\b)|"
            r"\b(?:always|never) use\b|"
            r"\bi(?:'m| am) (?:a fan of|into|not a fan of)\b|\bi stay out of\b",
        ),
        (
            MemoryType.IDENTITY,
            r"\b(?:my (?:full |first |last |middle |real )?name(?:'s| is)|changed my (?:last |first |full )?name)\b|"
            r"\bi(?:'m| am) (?:a|an) \w+|"
            r"\bi(?:'m| am) (?:[\w-]+[ -])?(?:colou?r[ -]?blind|dyslexic|deaf|hard of hearing|autistic|"
            r"partially sighted|visually impaired)\b|"
            r"(?<!like )\bi(?:'m| am) \d{1,3}\b|"
            r"\bi (?:live|grew up|was born)\b|\bi(?:'m| am) (?:originally )?from\b|"
            # someone close introduced by name or by who they are ("my wife Ana", "my son is 7"), not every
            # mention of them ("my mom keeps asking")
            rf"\bmy (?:{_CLOSE})(?:,? (?-i:[A-Z][a-z]+)\b|'s name is\b| (?:is|was) (?:called|named)\b|"
            r" (?:is|'s) (?:a|an|\d{1,2})\b)|\bmy (?:heritage|family (?:is|are|was|were) from)\b|"
            r"\bi have (?:a|an|one|two|three|four|\d) (?:kids?|children|child|sons?|daughters?|"
            r"brothers?|sisters?|siblings?|dogs?|cats?)\b",
        ),
        (
            MemoryType.EVENT,
            r"\byesterday\b|\blast (?:night|week|weekend|month|year|monday|tuesday|wednesday|thursday|"
            r"friday|saturday|sunday)\b|\bthis (?:morning|afternoon|evening)\b|\btonight\b|"
            r"\btoday\b|\b(?:i|we) just (?:got|came|finished|started|bought|signed|moved|left|"
            r"met|had)\b|\bi (?:went|visited|met|finished|started|bought|sold|signed|quit|resigned|"
            r"got back|spoke|ran|won|lost)\b|\bwe (?:went|visited|met|finished|bought|sold|signed|had|"
            r"moved|made it)\b|\b(?:on|in) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
            r"january|february|march|april|may|june|july|august|september|october|november|december)\b",
        ),
    )
)
_NOT_A_MEMORY = re.compile(
    r"^(?:what|how|why|when|where|who|which|can|could|would|should|is|are|do|does|did|will|shall)\b.*\?$|"
    # what someone says of a thing the sentence does not name: "my neighbor Bill says it is" (after a question)
    r"\b(?:says?|said|thinks?|thought|reckons?|claims?|claimed|told me)\s+(?:so|it\s+(?:is|was|does|did|will|can|"
    r"isn't|wasn't|doesn't|didn't|won't|can't))[\s.!]*$|"
    r"\bi (?:want|need|'d like|would like) (?:you )?to (?:know|ask|understand|check|see if|make sure|thank)\b|"
    r"^(?:if|what if|suppose|imagine|hypothetically)\b|\b(?:can|could|would|will) (?:you|u)\b|^please\b|"
    # a request for this answer only: "answer this one in hindi pls, my mom wants to read it"
    r"^(?:answer|reply|respond|write|explain|translate|say|give|make|do|put)\b[^.!?]{0,40}\b(?:this one|this time|"
    r"for this|just this once|for now)\b|"
    # a request to look at what follows: "compare these two search results for me:", "can you summarise this:"
    r"^(?:can you |could you |please )?(?:compare|summari[sz]e|translate|explain|check|review|proofread|rewrite"
    r"|reword|analy[sz]e|read|look at|fix|edit|improve|shorten|format|convert|answer|reply to)\b[^.!?]*:\s*$|"
    # a request to the assistant: "Give me 5 lunch ideas I can prep on Sunday", "help me plan mornings around
    # hearings at 9", "Find me a flight to Lisbon on the 12th" (the turn keeps what it tells)
    r"^(?:(?:pls|plz|please)\s+)?(?:help|give|write|find|make|draft|suggest|recommend|show|tell|send|create|compose|"
    r"rewrite|proofread|summari[sz]e|translate|explain|list|plan|generate|calculate|compare|check|get|book)\s+"
    r"(?:me|us)\b(?!\s+(?:remember|know|when|if|whenever)\b)|"
    # asking to be told something again is a question, not a task: "Remind me what we decided"
    r"^remind me (?:again )?(?:what|which|who|whom|whose|where|when|how|why|if|whether|of|about)\b|"
    r"^i(?:'m| am| was)? (?:just )?(?:wondering|curious)\b|^i wonder\b|^any (?:idea|ideas|tips|thoughts)\b",
    _I,
)
_EXPLICIT = re.compile(
    r"\b(?:remember|don'?t forget|note that|for the record|fyi|keep in mind|important:)\b", _I
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|might|i think|i guess|not sure|kind of|sort of)\b", _I
)
_NUMBER = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|forty|fifty|"
    r"hundred|thousand)\b",
    _I,
)
_DATE = re.compile(
    r"\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|"
    r"nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th) of [a-z]+)\b",
    _I,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b", _I)
# a day or a month names a when as plainly as a number: "now I have them every wednesday night"
_DAY_OR_MONTH = re.compile(
    rf"\b(?:{WEEKDAY_STEMS})days?\b|\b(?:{MONTHS_BUT_MAY})\b|"
    # a month as a terse user writes it: "in sept", "19 dec", "nov 2027"
    r"\b(?:in|by|until|till|from|since)\s+(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b|"
    r"\b\d{1,2}\s+(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b|"
    r"\b(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\s+\d{1,4}\b",
    _I,
)
# a plan of the user's, its when said relative to today: "We're painting the living room dusty blue this weekend",
# "I'm hiking with some buddies this weekend" (not what they look for or think of doing: "I'm looking for date ideas
# for this weekend", "I'm thinking of baking again this weekend")
_PLANNED = re.compile(
    rf"^{vocab.I_OR_WE_ARE}\s+(?:(?:also|just|finally|actually)\s+)?"
    r"(?!(?:looking|thinking|considering|wondering|trying|hoping|going|getting|feeling|having\s+trouble|struggling)\b)"
    r"[a-z]+ing\b",
    _I,
)
_SOON = re.compile(
    r"\b(?:tomorrow|tonight|(?:this|next)\s+(?:coming\s+)?(?:weekend|week|month|year|summer|autumn|fall|winter|"
    r"spring))\b",
    _I,
)
# what sets off the user's condition: "Hot weather and skipping lunch make me dizzy", "sun makes everything worse",
# "things that set me off: popcorn, raw salad", "stress triggers my eczema"
_TRIGGERS = re.compile(
    r"\b(?:makes?|made|making)\s+(?:me|my\s+[\w-]+|everything|it|things)\s+(?:\w+\s+)?(?:worse|dizzy|sick|ill|"
    r"nauseous|nauseated|faint|lightheaded|flare|itchy|itch|wheezy|wheeze|sneeze|break\s+out)\b"
    r"|\bsets?\s+me\s+off\b|\btriggers?\s+my\s+\w",
    _I,
)
# what the user is doing these days, with something named: "I'm reading Middlemarch at the moment", "I'm learning
# Japanese on Duolingo" (a lasting doing; not "I'm considering Headspace", "I'm having trouble with Netflix")
_DOING_NOW = re.compile(
    rf"^{vocab.I_OR_WE_ARE}\s+(?:currently\s+|still\s+|now\s+|also\s+)?(?:{vocab.DOINGS})\b",
    _I,
)
# a thing of the user's named by its make or its club, after a verb of having or using it, is named as plainly as a
# person: "I ride a Brompton to the office most days", "I've had a Celtic season ticket since I was fifteen" (the entity
# spotter calls such a name a thing)
_OWN_NAMED_THING = re.compile(
    r"^(?:i|we)(?:['’]ve|\s+have)?\s+(?:(?:usually|mostly|mainly|always|still|also|now)\s+)?"
    r"(?:ride|drive|own|use|support|follow|wear|fly|shop\s+at|bank\s+with|subscribe\s+to|(?:had|got)(?=\s+(?:a|an)\s))"
    r"\s+(?:(?:a|an|the|my|our)\s+)?(?-i:[A-Z])[\w'’&+-]+",
    _I,
)
# a medicine the user takes is named as plainly as a person: "I take metformin and atorvastatin every morning", "the
# doctor switched my atorvastatin to rosuvastatin" (after a verb of taking it: a drug's family ending alone names
# "magazine" and "adrenaline" too)
_DRUG_NAMED = re.compile(
    r"\b(?:take|takes|taking|took|prescribed|started|stopped|switched|upped|lowered|increased|reduced|(?:mg|dose)\s+of)"
    rf"\s+(?:(?:my|the|a|some|daily)\s+)?{vocab.DRUG}\b",
    _I,
)
# someone named by a title, or said to be called something, however cased: "dr tamar kvaratskhelia", "dra
# benavides", "a guy called levan"
_NAMED_PLAINLY = re.compile(
    r"\b(?:dr|dra|mr|mrs|(?-i:ms|Ms)|prof)\.?\s+[a-z]{2,}|"
    r"\b(?:called|named)\s+(?!(?:in|out|off|up|back|to|for|it|me|him|her|them|us|the|a|an|my|our|his|her|their|"
    r"after|by|on|at|as|and|but|so|again)\b)[a-z]{2,}",
    _I,
)
# what a thing of the user's is about or where it is, or who: "My thesis is on coral bleaching recovery in the Red
# Sea", "My office is in the old town", "my doctor is dr patel" (not how it is: "my back is killing me"); where the
# user lives or works: "I work at a cafe in brunswick on weekends"
_OWN_THING = re.compile(
    r"^(?:(?:my|our)\s+(?:[\w'’-]+\s+){0,2}?(?:is|are)\s+(?:(?:on|about|in|at|near|with|from|for|called|named)\s+"
    r"(?:\S+\s+){1,}\S|(?:dr|mr|mrs|ms|prof)\.?\s+\w)|(?:i|we)\s+(?:live|work|study)\s+(?:at|as|in|for)\s+\S)",
    _I,
)
# a change to what the user has, named however plainly: "I cancelled my gym membership", "I switched gyms to la
# fitness", "I found a new place in roncesvalles", "we changed banks" (not "I changed my mind", "I left my keys")
_OWN_CHANGE = re.compile(
    r"\b(?:i|we)(?:['’](?:ve|m|re)|\s+(?:have|am|are))?\s+(?:(?:also|just|finally|already|now|recently)\s+)*(?:"
    r"(?:cancell?ed|quit|sold|got\s+rid\s+of|traded\s+in|gave\s+up)\s+(?:my|our|the)\s+\w"
    r"|(?:switched|changed|moved)\s+(?:[a-z]+s\s+)?(?:to|into|over\s+to)\s+\w|(?:switched|changed)\s+(?:[a-z]+s)\b"
    r"|(?:found|got|bought|rented|signed\s+for|started)\s+a\s+new\s+(?:place|flat|apartment|house|home|room|job|"
    r"position|role|car|van|bike|phone|number|plan|gym|doctor|dentist|gp|therapist|physio|school|class|team)\b"
    r"|joined\s+(?:a|an|the)\s+\w"
    # a tool or service the team dropped or went back to: "we dropped launchdarkly", "we're dropping argocd for flux",
    # "we're back on jest", "we migrated off heroku"
    r"|(?:dropped|dropping|ditched|ditching|dumped|retired|retiring|sunset(?:ted|ting)?)\s+(?:the\s+)?+"
    r"(?!(?:him|her|them|it|me|us|out|by|in|off|kids?|children|son|daughter)\b)[a-z][\w.-]++(?!\s+(?:off|by|at|in)\b)"
    r"|back\s+(?:on|to)\s+(?:using\s+)?(?!(?:square|normal|work|school|the|home|bed|sleep|it|business|basics|life|"
    r"reality|being|where|my|our)\b)[a-z][\w.-]+"
    r"|(?:moved|moving|migrated|migrating)\s+(?:off|away\s+from|from|out\s+of)\s+\w"
    r"|(?:moving|moved)\s+(?:in)?to\s+(?:a|an|the|my|our)\s+(?:new\s+)?(?:share\s+)?(?:place|flat|apartment|house|home"
    r"|room|condo|studio)\b)",
    _I,
)
# the user or "we" say when they do something ("now I have them every wednesday night"), not a fragment opening
# with the day ("Friday of my first full week of notice.")
_WHEN_DONE = re.compile(rf"^(?!\W*(?:\w+\s+)?(?:{WEEKDAY_STEMS})day)(?=.*\b(?:i|we)\b)", _I)
# a sentence that takes back the one before it in the same message: "I moved to 260 Wellington Crescent... no wait,
# sorry, 260 is my sister's building", "Dinner is at 7. Scratch that, 8." (not "I mean, the food alone!", which
# insists)
_RETRACTING = re.compile(
    r"^\W*(?:oh\s+)?(?:scratch\s+that|no\s+wait|wait\s*,?\s+no|sorry\s*,?\s+(?:i\s+mean(?:t)?|my\s+(?:mistake|bad)|wrong)|"
    r"i\s+meant\s*,|actually\s*,?\s+no\b|no\s*,\s+sorry)\b",
    _I,
)
# a value said again, right, after one said wrongly: "My flat number is 112. No wait, 118.", "Dinner is at 7. Scratch
# that, 8.", "112, no wait, 118" (the value alone; a sentence of its own takes the whole one back)
_VALUE = r"[£$€]?\d(?:[\d,.:]*\d)?(?:\s*(?:am|pm|k)\b)?"
_VALUE_AGAIN = (
    r"(?:(?:oh\s+)?(?:scratch\s+that|no\s+wait|wait\s*,?\s+no|sorry|make\s+that|i\s+mean(?:t)?|actually)"
    rf"[\s,.:;!-]*)+(?P<value>{_VALUE})"
)
_VALUE_RETOLD = re.compile(rf"^\W*{_VALUE_AGAIN}[\s.!]*$", _I)
_VALUE_RETOLD_INSIDE = re.compile(rf"{_VALUE}\s*,?\s*{_VALUE_AGAIN}", _I)
_A_VALUE = re.compile(_VALUE, _I)
# a statement of the user's own opens with one of these
_OWN_OPENING = r"(?:i|i'm|i’m|i've|i’ve|i am|my|we|we're|we’re|our)\b"
# a sentence opening with someone other than the user: a pronoun, or a capitalised word that is no common opening
_OTHER_OPENING = re.compile(
    r"\W*(?:(?i:he|she|they|his|her|their|him|them)\b|(?!(?:I|I'm|I’m|Im|I've|My|We|Our|Me|Us|The|This|That|It|"
    r"It's|So|And|But|Also|Then|Now|Today|Yesterday|Tomorrow|Just|Finally|Ok|Okay|Oh|Well|Yeah|Yes|No|Hi|Hey|Hello"
    rf"|Thanks|Update|News|Btw|Anyway|Sadly|Luckily|Apparently|(?i:{DONE_VERBS}))\b)[A-Z][a-z]+\b)"
)
_OWN_STATEMENT = rf"(?:and\s+|but\s+)?{_OWN_OPENING}"
# "Please remember that ...", "Please don't suggest pork, I'm Muslim": a request around a statement of the user's
# own, kept without the "please"
_PLEASE = re.compile(
    r"^please[,\s]+(?=(?:remember|note|keep in mind|bear in mind|don'?t forget|do not forget|make a note|"
    rf"remind me|be aware|know)\b|[^,;]*[,;]\s*{_OWN_STATEMENT})",
    _I,
)
# asking the assistant to keep something is telling it: "Can you remember that my locker code is 4512?"
_KEEP_REQUEST = re.compile(
    r"^(?:can|could|would|will) you (?:please )?(?:remember|note|keep in mind|make a note of|bear in mind)"
    rf"(?: that)?\s+(?P<fact>{_OWN_OPENING}[^?]*[^?\s.!])[\s?.!]*$",
    _I,
)
# a liking said in a few words, of a thing named: "I hate cilantro.", "I love sushi." (not "I love it!", "I hate this")
_SHORT_LIKING = re.compile(
    r"^(?:i|we)\s+(?:really\s+|absolutely\s+|just\s+|totally\s+)?(?:love|hate|like|dislike|prefer|adore|detest|"
    r"can't stand|cannot stand|can’t stand)\s+(?!(?:it|this|that|these|those|them|him|her|you|me|us|when|how|what|"
    r"to|the way|the idea|everything|anything|nothing)\b)[a-z]",
    _I,
)
# a value of the user's own thing, however short: "My rent is £1,200.", "Our landlord is Greg Hale.", "My work email
# is sam@acme.com."
_OWN_VALUE = re.compile(
    r"^(?:my|our)\s+(?:[\w'’-]+\s+){0,3}?(?:is|are)\b(?:\s+now)?[^?]*?"
    r"(?:\d|\s(?-i:[A-Z])[a-z]|[\w.+-]@[\w-]|https?://|\s(?-i:A|B|AB|O)\s*(?:positive|negative|pos|neg|[+-]))",
    _I,
)
# what the user does or is with something named, however short: "I bank with Barclays.", "I'm with Vodafone.", "I
# take metformin.", "I speak Polish.", "I wake at 6." (a present-tense verb of their own, then within two words a
# name, a number or a drug; not "I'll try Rust.", "I did it!")
_SHORT_OWN_FACT = re.compile(
    r"^(?:i|we)(?:['’]m|\s+am|['’]re|\s+are)?\s+"
    r"(?!(?:think|guess|hope|wonder|mean|meant|know|see|agree|love|hate|like|miss|bet|suppose|asked|said|told|did|was|"
    r"were|had|will|would|could|should|can|might|must|not|also|just|need|needs|get|got|getting|considering|planning|"
    r"thinking|looking|trying|wondering|recently|discovered|found|remember|forgot|tried|want|wanted)\b)"
    r"(?:[a-z]+\s+){1,2}?"
    rf"(?:(?-i:[A-Z])[\w’'-]+|\d[\w:.]*|{vocab.DRUG})\W*$",
    _I,
)
# what the user is for good, however short: a condition of body or mind ("I'm colour blind", "I'm left-handed"), or a
# fear ("I'm terrified of flying"); not a passing state ("I'm tired", "I'm scared")
_TRAIT = re.compile(
    rf"^{vocab.I_OR_WE_ARE}\s+(?:(?:also|really|so|very|quite|totally|completely|partially|mildly|severely|a\s+bit)\s+)?"
    r"(?:(?:colou?r|red[- ]green)[- ]?blind|left[- ]handed|right[- ]handed|ambidextrous"
    r"|(?:short|long|near|far)[- ]sighted|dyslexic|dyspraxic|dyscalculic|autistic|deaf|hard\s+of\s+hearing"
    r"|blind\s+in\s+one\s+eye|deaf\s+in\s+one\s+ear|asthmatic|epileptic|anaemic|anemic|an?\s+insomniac|insomniac"
    r"|claustrophobic|agoraphobic"
    # a fear of a thing, not of how things may go: "I'm afraid of failing"
    rf"|(?:terrified|scared|afraid|frightened|petrified|phobic)\s+of\s+(?!{_FEAR_OF_HOW}\b)\w)",
    _I,
)
# what one of the user's people is or has, however short: "Sam is pescatarian now.", "Maddie has a nut allergy."
_PERSON_STATE = re.compile(r"^\S+(?:['’]s\s+\w+)?\s+(?:is|are|has|was)\s+\S+", _I)
# "Save this for me so I don't forget it: my wifi is Casa-5G": a request to keep what follows, no task
_SAVE_THIS = re.compile(
    r"^(?:please\s+)?(?:save|note|write|keep|jot|remember)\s+(?:this|that|it)(?:\s+down)?(?:\s+for\s+me)?"
    r"(?:\s*,?\s*so\s+(?:i|we)\s+(?:don't|do\s+not|won't|don’t)\s+forget(?:\s+it)?)?\s*[:–-]\s*",
    _I,
)
# "Please forget that I'm vegetarian, I eat meat now.": only what follows the request holds
_PLEASE_FORGET = re.compile(
    rf"^please\s+(?:forget|ignore|disregard|scratch)\b[^,;]*[,;]\s*(?P<rest>{_OWN_STATEMENT}.+)$",
    _I,
)
# a face or an emoji closing a sentence: "I'm 41 :)", "I'm Brian 🙂" (read in its last three characters)
_FACE_AT_END = re.compile(
    r"(?:[:;=]-?[()DPp/|]|<3|[\u2600-\u27BF\U0001F300-\U0001FAFF\uFE0F\u200D])$"
)
_INNER_FILLER = re.compile(r"\s*,?\s*\b(?:so yeah|yeah so|lol|haha+|hehe)\b[,;]?(?=\s|[.!]|$)", _I)
# ", and we never ..." / "; my ...": a second statement about the user joined to the first
_COMPOUND = re.compile(
    r"\s*(?:,\s*|\s)(?:and|but|plus|also)\s+(?=(?:i|we|i'm|we're|i've|we've|i'll|we'll|"
    r"my|our)\b)|;\s+(?=(?:i|we|i'm|we're|i've|we've|i'll|we'll|my|our)\b)",
    _I,
)
# a clause that only takes up what was offered: "The chickpea one sounds good", "That looks great", "Sounds lovely"
_ACKNOWLEDGED = re.compile(
    r"^(?:(?:that|this|it|those|these|both|the\s+(?:[\w'’-]+\s+){0,3}?(?:one|ones|idea|option|recipe|plan|"
    r"suggestion|list|draft))\s+)?(?:sounds?|looks?|seems?)\s+(?:really\s+|very\s+|so\s+)?(?:good|great|nice|"
    r"fine|lovely|tasty|delicious|perfect|interesting|helpful|useful|amazing|ok(?:ay)?)[\s,.!]*$",
    _I,
)
_SUBORDINATE = re.compile(
    r"^(?:when|whenever|if|because|since|after|before|although|though|while|as|once|until|"
    r"unless|whether)\b",
    _I,
)
# a fragment that names what the sentence before it told of: "A cocker spaniel called Pickle, 10 weeks old"
# the user turning down what the sentence before offered: "I said no", "Felt off, I passed.", "I turned it down"
_REFUSAL = re.compile(
    r"^(?:[\w'’]+,?\s+){0,3}?(?:but\s+|so\s+|and\s+)?(?:i|we)\s+(?:said\s+no|passed(?=\s*(?:[.,;!]|$))|declined(?:\s+it)?|turned\s+(?:it|them|that)\s+down|"
    r"didn['’]?t\s+take\s+it|won['’]?t\s+take\s+it|rejected\s+it|walked\s+away)\b",
    _I,
)
_NAMING_FRAGMENT = re.compile(r"^(?:a|an)\s+(?:[\w-]+\s+){0,3}?(?:called|named)\s+(?-i:[A-Z])", _I)
_CLAUSE_MIN_WORDS = 4
# a statement of the user's whose second part leaves its subject unsaid: "I live in Leeds and work at Deloitte", "I'm 34
# and work as a nurse", "I'm vegetarian and allergic to shellfish"
_SUBJECT_UNSAID = re.compile(
    r"^(?P<head>(?P<who>i|we)(?P<be>['’]m|['’]re|\s+am|\s+are)?\s+.+?)\s*,?\s+and\s+"
    r"(?P<rest>(?!(?:i|we|my|our|the|a|an|then|so|also|that|this|it|to)\b)(?-i:[a-z])[\w'’-]*\s+.+)$",
    _I,
)
# "Expense report submitted!" closes a todo; "All done!" names nothing to close
_CLOSING_MIN_WORDS = 3
_RELATIVE_DAYS = (
    (re.compile(r"\byesterday\b|\blast night\b", _I), 1),
    (
        re.compile(
            r"\btoday\b|\btonight\b|"
            r"\bthis (?:morning|afternoon|evening)\b",
            _I,
        ),
        0,
    ),
    (re.compile(r"\blast week(?:end)?\b", _I), 7),
    (re.compile(r"\btomorrow\b", _I), -1),
    (re.compile(r"\bnext week(?:end)?\b", _I), -7),
)
# "last month" / "next month": the calendar month before or after, by name
_RELATIVE_MONTHS = ((re.compile(r"\blast month\b", _I), -1), (re.compile(r"\bnext month\b", _I), 1))
_ASSISTANT_CONCLUSION = re.compile(
    r"\b(?:we decided|you decided|you(?:'ve| have) decided|the decision is|in summary|to summari[sz]e|"
    r"the (?:fix|solution|root cause|answer|plan|steps?) (?:is|are|was)|you(?:'ll| will) need to|"
    r"(?:always|never) (?:run|use|deploy)|make sure to|remember to|to [a-z]+ [^,]{0,50}, run)\b",
    _I,
)
_TECHNICAL_STEP = re.compile(
    r"`|\$ |\b(?:run|install|deploy|configure|restart|build|commit|push|ssh|sudo|pip|npm|"
    r"git|docker|kubectl|make|export|chmod|systemctl|migrate)\b",
    _I,
)
# someone did something: a pronoun in any case ("I drove") or a name ("Anna moved"), then a past verb
_PAST_TENSE = re.compile(
    rf"\b(?:(?i:i|we|he|she|they)|[A-Z][a-z]+) (?:just |finally |also |actually )?(?:{_PAST_VERB})\b"
)
_AGE_WORDS = re.compile(
    r"\b(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|"
    r"five|six|seven|eight|nine))?\b|\b(?:eighteen|nineteen)\b",
    _I,
)
_SELF_DESCRIPTION = re.compile(r"(?:^|[:;—–]\s*)(?:i am|i'm)\s+(?:a|an)\s+[\w -]+[.!]?$", _I)
_NOUN_FRAGMENT = re.compile(r"^(?:a|an)\s+[\w-]+(?:\s+[\w-]+){0,2}[.!]?$", _I)
_NUMBERED_LINE = re.compile(r"^\s*(?:\d{1,2}[.)]|step \d{1,2}:?|[-*•])\s+\S", _I | re.MULTILINE)


def _type_of(sentence: str, subject: str | None) -> MemoryType | None:
    for mtype, pattern in _TYPE_RULES:
        if pattern.search(sentence):
            if mtype in (MemoryType.EVENT, MemoryType.IDENTITY) and subject is not None:
                return subject_type(subject)
            return mtype
    return subject_type(subject) if subject is not None else None


def _importance(
    mtype: MemoryType, sentence: str, entities: tuple[str, ...], subject: str | None
) -> float:
    score = type_spec(mtype).importance
    if _EXPLICIT.search(sentence):
        score += 0.2
    if entities:
        score += 0.05
    if _NUMBER.search(sentence) or _DATE.search(sentence):
        score += 0.05
    if _HEDGE.search(sentence):
        score -= 0.1
    return round(min(1.0, max(vocab.importance_floor(subject), score)), 3)


def _with_date(content: str, now: float | None) -> str:
    """Anchor relative time words ("yesterday", "tomorrow at 9", "next week") to a calendar date, and "last month"
    or "next month" to the month's name, so they stay meaningful later, whatever the memory's type: "I have a vet
    appointment tomorrow at 9" is read days later."""
    if now is None:
        return content
    for pattern, days_back in _RELATIVE_DAYS:
        if pattern.search(content):
            day = time.strftime("%Y-%m-%d", time.gmtime(now - days_back * DAY))
            return f"{content} ({'around ' if abs(days_back) == 7 else ''}{day})"
    for pattern, step in _RELATIVE_MONTHS:
        if pattern.search(content):
            today = time.gmtime(now)
            year, month = divmod(today.tm_year * 12 + today.tm_mon - 1 + step, 12)
            return f"{content} ({calendar.month_name[month + 1]} {year})"
    return content


def _with_age(content: str, subject: str | None) -> str:
    """Spell a stated age in digits too ("I'm forty-one" -> "... (age 41)") so both forms match later."""
    if subject != vocab.AGE or re.search(r"\d", content):
        return content
    for m in _AGE_WORDS.finditer(content):
        age = spoken_number(m.group())
        if age is not None:
            return f"{content} (age {age})"
    return content


def _with_context(sentences: list[str], i: int) -> str:
    """A short sentence plus the following ones until the text stands on its own (>= 8 words)."""
    parts = [sentences[i]]
    j = i + 1
    while len(words(" ".join(parts))) < 8 and j < len(sentences) and not sentences[j].endswith("?"):
        parts.append(sentences[j])
        j += 1
    return " ".join(parts)


def _candidate(
    sentence: str, content: str, role: str, now: float | None, people: Collection[str] = ()
) -> Candidate | None:
    if _NOT_A_MEMORY.search(sentence):
        return None
    subject = subject_of(sentence)
    view = first_person_view(sentence)
    # what the speaker says in their own words: "He said 'I need to ...'" is no todo of theirs, "she asked if we've
    # decided" no decision, and "my mom thinks I live in a dump" not where they live
    own = own_words(view)
    named = role == "user" and subject is None and NAMED_FACT.match(sentence) is not None
    mtype = (
        MemoryType.FACT
        if named or (role == "user" and subject is None and ADVICE.match(sentence))
        else _type_of(own, subject) or _fallback_type(own, view, role, people)
    )
    if mtype is None and role == "user" and _TRAIT.match(own):
        mtype = MemoryType.IDENTITY  # "I'm left-handed."
    if mtype is None:
        # what someone else believes ("the realtor thinks they'll counter at $370") is a fact about them at most
        said = own_words(view, beliefs=False)
        if (
            said == own
            or (_type_of(said, subject) or _fallback_type(said, view, role, people)) is None
        ):
            return None
        mtype = MemoryType.FACT
    # a task set down with a marker ("TODO: buy milk.", "Don't forget the milk.") is one however short, given a
    # task of two words or more ("Don't forget it." names none)
    marked = mtype is MemoryType.TODO and marked_task(sentence)
    if subject is None and not (
        (mtype is MemoryType.TODO and TODO_MARK.search(sentence))
        or is_content_sentence(sentence, role, people)
    ):
        return None
    # short, but a task marked as one, a value that stands on its own ("Prod DB is db-prod-1.internal."), a thing
    # the user gave up ("I cancelled Crunchyroll."), what they like or hate ("I hate cilantro."), a value of their
    # own ("My rent is £1,200.") or what they tell of one of their people ("Sam is pescatarian now.")
    if (
        subject is None
        and len(words(content)) < _MIN_WORDS
        and not marked
        and not (
            role == "user"
            and (
                TECHNICAL_VALUE.search(sentence)
                or says_given_up(sentence)
                or (mtype is MemoryType.PREFERENCE and _SHORT_LIKING.match(sentence))
                or _OWN_VALUE.match(sentence)
                or _SHORT_OWN_FACT.match(sentence)
                or _TRAIT.match(sentence)  # "I'm colour blind."
                or says_when_it_happens(sentence)  # "Date night is Fridays."
                or _TRIGGERS.search(sentence)  # "Gluten makes me ill."
                or (_PERSON_STATE.match(sentence) and opens_with_person(sentence, people))
                or PERSON_TRAIT.match(sentence)
            )
        )
    ):
        return None
    entities = _entity_names(content)
    confidence = (
        0.9
        if _EXPLICIT.search(sentence)
        else 0.6
        if role == "assistant" or _HEDGE.search(sentence)
        else 0.75
    )
    content = _with_age(_with_date(content, now), subject)[:_MAX_CONTENT_CHARS]
    return Candidate(
        type=mtype,
        content=content,
        importance=_importance(mtype, sentence, entities, subject),
        confidence=confidence,
        subject=subject,
        entities=entities,
        role=role,
    )


def _entity_names(text: str) -> tuple[str, ...]:
    return tuple(name for name, _ in find_entities(text))


def _fallback_type(
    own: str, sentence: str, role: str, people: Collection[str] = ()
) -> MemoryType | None:
    """A durable user statement with a name or number, or an impersonal one with an address, a path or code, is a
    fact; anything else is left to the episodes. `own` is the sentence in the user's own words
    (`sentences.own_words`: no quotations, no one else's questions or beliefs): the user speaks of themselves
    there, while a quoted title is a name. `people`: the names of those the user called by a role before, whom a
    statement may speak of as the user does of themselves."""
    if role != "user":
        return None
    if not _FIRST_PERSON.search(own):
        # a thing the user gave up, said without "I": "cancelled Adobe CC and moved everything to Affinity"
        if says_given_up(own):
            return MemoryType.EVENT
        # what the user tells of one of their people by name ("Meera moved to Vancouver."), or of anyone what they
        # like, eat or are ("Giedre is vegan")
        if PERSON_TRAIT.match(own) or LET_UNIT.match(own):
            return MemoryType.FACT
        if opens_with_person(own, people):
            return MemoryType.EVENT if _PAST_TENSE.search(own) else MemoryType.FACT
        # when a thing of the user's life happens: "The team offsite is in Manchester on the 14th.", "Bins go out on
        # Tuesday nights here."
        if says_when_it_happens(own):
            return MemoryType.FACT
        # unless it gives an address, a path or code: "Staging lives at staging.acme.dev."
        return MemoryType.FACT if TECHNICAL_VALUE.search(own) else None
    # someone close ("my sister") is named as plainly as by a name
    has_name = (
        _CLOSE_MENTION.search(own) is not None
        or any(kind != "thing" for _, kind in find_entities(sentence))
        or (_DOING_NOW.match(own) is not None and bool(find_entities(sentence)))
        or bool(people_named(own, people))
        or says_given_up(own)  # "I cancelled Crunchyroll": the thing is named
        or _NAMED_PLAINLY.search(own) is not None
        or _DRUG_NAMED.search(own) is not None  # "I take metformin and atorvastatin every morning"
        or _OWN_NAMED_THING.match(own) is not None  # "I ride a Brompton to the office"
    )
    when = (
        (_DAY_OR_MONTH.search(sentence) is not None and _WHEN_DONE.match(own) is not None)
        or (_SOON.search(sentence) is not None and _PLANNED.match(own) is not None)
        or says_when_it_happens(own)  # "Our cleaner comes on Thursdays."
    )
    if not (
        has_name
        or _NUMBER.search(sentence)
        or when
        or _OWN_THING.match(own)
        or _OWN_VALUE.match(own)  # "My bank is Barclays.": a name the entity spotter calls a thing
        or _SHORT_OWN_FACT.match(own)  # "I bank with Barclays.", "I take metformin."
        or _OWN_CHANGE.search(own)
        or _TRIGGERS.search(own)
    ):
        return None
    return MemoryType.EVENT if _PAST_TENSE.search(own) else MemoryType.FACT


def _is_question(sentence: str) -> bool:
    """A question, unless it opens with a first-person statement ("I'm 41 and ... is this it?")."""
    if not sentence.endswith("?"):
        return False
    return not re.match(r"(?:i|i'm|i've|my|we|we're|we've)\b[^?,]{3,}", sentence, _I)


# "I'm Vikram, night manager at ...", "I'm Yuki, a UX researcher in Copenhagen", "I'm Dana, I work as a nurse"
_NAME_AND_MORE = re.compile(
    r"^i(?:'m|’m| am)\s+(?P<name>(?-i:[A-Z])[a-z]+(?:\s+(?-i:[A-Z])[a-z]+)?),\s+(?P<rest>\S.{4,})$",
    _I,
)


def _clauses(sentence: str) -> list[str]:
    """A compound statement split into statements that stand on their own ("I deploy with Ansible, and we never
    deploy on Fridays." -> two); kept whole when a part hangs on a subordinate clause, or is short, unless every
    part fills a profile slot ("I'm vegetarian, and my partner Jordan is gluten intolerant"): "I'm 32, and I'm
    trying to understand the green card process" keeps the age with what it was said for. An opening part that
    only takes up what the assistant offered is left out: "The chickpea one sounds good but my son is allergic to
    nuts" keeps what the user told. A name given with what the user does is two: "I'm Vikram, night manager at the
    Grange Court Hotel" -> "My name is Vikram." and "I'm night manager at the Grange Court Hotel.", so a new job
    replaces the old without unsaying the name."""
    if told := _NAME_AND_MORE.match(sentence):
        rest = told["rest"].rstrip(" .!")
        more = rest if re.match(r"i\b", rest, _I) else f"I'm {rest}"
        if subject_of(more) in (vocab.JOB, vocab.EMPLOYER, vocab.RESIDENCE):
            return [f"My name is {told['name']}.", f"{more[0].upper()}{more[1:]}."]
    joint = _COMPOUND.search(sentence)
    if joint and _ACKNOWLEDGED.match(sentence[: joint.start()].strip()):
        rest = sentence[joint.end() :].strip()
        sentence = f"{rest[0].upper()}{rest[1:]}"
    parts = [p.strip() for p in _COMPOUND.split(sentence)]
    if len(parts) < 2 and (both := _both_said_of_self(sentence)):
        parts = both
    if len(parts) < 2 or _SUBORDINATE.match(sentence):
        return [sentence]
    short = any(len(words(p)) < _CLAUSE_MIN_WORDS for p in parts)
    if short and not all(subject_of(p) for p in parts):
        return [sentence]
    end = sentence[-1] if sentence[-1] in ".!" else "."
    return [f"{p[0].upper()}{p[1:]}" + ("" if p[-1] in ".!" else end) for p in parts]


def _both_said_of_self(sentence: str) -> list[str] | None:
    """The two slots a statement of the user's fills when its second part leaves the subject unsaid, each said
    whole: "I live in Leeds and work at Deloitte" -> "I live in Leeds", "I work at Deloitte"; None unless each part
    fills a profile slot of its own, so "I love cooking and baking bread" and "I live and work in Leeds" stay one."""
    m = _SUBJECT_UNSAID.match(sentence.rstrip(" .!"))
    if m is None:
        return None
    head, rest = m["head"], m["rest"]
    first = subject_of(head)
    said = [f"{m['who']} {rest}"] + ([f"{m['who']}{m['be']} {rest}"] if m["be"] else [])
    second = next((s for s in said if subject_of(s) not in (None, first)), None)
    return [head, second] if first is not None and second is not None else None


def _without_faces(sentence: str) -> str:
    """`sentence` without the faces and emoji that close it, each cut in time of its own length."""
    bare = sentence.rstrip()
    while face := _FACE_AT_END.search(bare[-3:]):
        bare = bare[: len(bare) - len(face.group())].rstrip()
    return bare


def _without_filler(sentence: str, *, speaking: bool = False) -> str:
    """A sentence without its opening greeting or filler ("Hi,", "Big news:", "btw", "Just so you know,"), closing
    face (":)", an emoji) or inner "so yeah", "lol", its chat shorthand said plainly (`spoken.plain`: "im", a dropped
    "my", and a dropped "I" when the user is `speaking` of themselves), and without a polite request around a
    statement: "Please remember that my wife's birthday is June 3rd" keeps "Remember that ...", "Please don't suggest
    pork recipes, I'm Muslim" all but the "Please", "Please forget that I'm vegetarian, I eat meat now" only "I eat
    meat now"."""
    bare = LEADING_FILLER.sub("", _without_faces(sentence)).strip() or sentence
    bare = _SAVE_THIS.sub("", bare).strip() or bare
    if forget := _PLEASE_FORGET.match(bare):
        bare = forget["rest"]
    bare = _PLEASE.sub("", bare)
    bare = _INNER_FILLER.sub(
        lambda m: "," if re.match(r"\s+\w", bare[m.end() :]) else "", bare
    ).strip()
    bare = plain(bare, speaking=speaking)
    return bare[0].upper() + bare[1:] if bare else sentence


def _statements(text: str, now: float | None, people: Collection[str] = ()) -> list[str]:
    """The user's statements in their own words: no greetings or filler, no questions, and compounds split when
    every part is a memory on its own."""
    out: list[str] = []
    speaking = True  # of themselves, until a sentence opens with someone else ("Mateo got home.")
    opening = True  # only greetings so far: the user may name themselves ("hello! this is Marta")
    # the sentence before, and whom it named by pointing back
    before: tuple[str, str | None] = ("", None)
    last = 0  # how many statements `out` held before the last sentence gave its own
    for n, raw in enumerate(split_sentences(text)):
        raw = _VALUE_RETOLD_INSIDE.sub(lambda m: m["value"], raw[:MAX_STATEMENT_CHARS])
        if (retold := _VALUE_RETOLD.match(raw)) and out[last:] and _A_VALUE.search(out[-1]):
            # "My flat number is 112. No wait, 118.": the statement before, with its value said right
            values = list(_A_VALUE.finditer(out[-1]))
            out[-1] = out[-1][: values[-1].start()] + retold["value"] + out[-1][values[-1].end() :]
            continue
        if _RETRACTING.match(raw):
            del out[last:]
        last = len(out)
        raw, before = _named_for_pronoun(raw, before)
        if opening and (introduced := introduced_name(raw, greeted=n > 0)):
            name, raw = introduced
            out.append(f"My name is {name}.")
            if not words(raw):
                continue
        opening = opening and is_greeting(raw)
        sentence = _without_filler(raw, speaking=speaking)
        speaking = not (_OTHER_OPENING.match(raw) or opens_with_person(raw, people))
        if request := REMINDER_REQUEST.match(sentence):
            sentence = f"Remind me to {request['task']}."
        elif request := _KEEP_REQUEST.match(sentence):
            sentence = f"Remember that {request['fact']}."
        if sentence.endswith("?"):
            if _is_question(sentence):
                continue
            sentence = statement_before_question(sentence)
            if not sentence:
                continue
        elif head := statement_before_unmarked_question(sentence):
            sentence = head
        if out and (
            _NAMING_FRAGMENT.match(sentence)
            or _detail_fragment(sentence, out[-1])
            or _REFUSAL.match(sentence)
        ):
            # "We adopted a dog! A cavapoo called Biscuit, he's 2": the name belongs to what came before, and so
            # do the days and the rate a note gives after a name ("Childminder Gail Urquhart. Tue + Thu. £5.80/hr."),
            # and a no to what was offered ("Nordwing offered me 2,300 a month. I said no, it was mostly dashboards")
            out[-1] = f"{out[-1]} {sentence}"
            continue
        parts = _clauses(sentence)
        standalone = len(parts) == 1 or all(
            _candidate(part, part, "user", now) is not None for part in parts
        )
        out.extend(parts if standalone else [sentence])
    return out


# a sentence that opens by pointing back at someone: "he takes Flixotide ...", "his GP just started him on ...", "she
# upped Casimir's Flixotide", "he's in second grade"
_PRONOUN_OPENING = re.compile(
    r"^(?P<pronoun>he|she)(?P<is>['’]?s)?\b|^(?P<owner>his|her)\b(?=\s+\w)", _I
)


# a note's detail standing alone after a short statement: a few words with a day, a price, a rate or a date, and no
# one doing anything ("Tue + Thu.", "£5.80/hr.", "Back 14th."; not a list's number or a video's "0:02")
_DETAIL = re.compile(
    r"(?:\b(?:mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)\b|[$£€]\s?\d|\d+(?:st|nd|rd|th)\b|"
    r"\d\s*(?:/\s?(?:hr|h|hour|wk|week|mo|month)|am|pm|kg|km)\b)",
    _I,
)
_DETAIL_CHARS = 40


def _detail_fragment(sentence: str, before: str) -> bool:
    """Whether `sentence` is such a detail of the short statement `before` (its few characters are read only after
    its length is known, so no text costs more than a short one)."""
    return (
        len(sentence) <= _DETAIL_CHARS
        and len(words(sentence)) <= 4
        and len(words(before)) <= 10
        and not sentence.endswith("?")
        and _DETAIL.search(sentence) is not None
        and not _FIRST_PERSON.search(sentence)
        and not _STATED.search(sentence)
    )


# a fragment that states something of its own ("Today is February 22nd.") is no detail of the sentence before
_STATED = re.compile(r"\b(?:is|are|was|were)\b", _I)


def _one_person(sentence: str, *, alone: bool = False) -> str | None:
    """The person a sentence names, when it names exactly one ("Casimir is 7 and has asthma." -> "Casimir"); `alone`:
    and no other name ("I met Tom and Ana for lunch" may name two)."""
    people = {name for name, kind in find_entities(sentence) if kind == "person"}
    if len(people) != 1:
        return None
    name = people.pop()
    others = [
        w for w in _LATER_CAPITAL.findall(sentence) if re.split("['’]", w)[0] not in name.split()
    ]
    return None if alone and others else name


# a capitalised word past a sentence's first, but "I" and a day or month: another name the sentence may give
_LATER_CAPITAL = re.compile(
    r"(?<=\s)(?!(?:I|I'm|I’m|I've|I'd|I'll|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|"
    rf"(?:{MONTHS_BUT_MAY}|May))\b)(?-i:[A-Z])[\w'’-]*"
)


def _named_for_pronoun(
    sentence: str, before: tuple[str, str | None]
) -> tuple[str, tuple[str, str | None]]:
    """`sentence` with an opening "he", "she", "his" or "her" said as the one person the sentence before named
    ("Casimir is 7 and has asthma. he takes Flixotide 50 micrograms" -> "Casimir takes Flixotide 50 micrograms"), so
    what is told of them is theirs by name; and what the next sentence may point back at. A sentence that pointed
    back keeps the person named ("He works nights. His shifts are 12 hours."). Names are looked for only when a
    sentence points back."""
    m = _PRONOUN_OPENING.match(sentence)
    named = (before[1] or _one_person(before[0])) if m and before[0] else None
    if m is None or named is None:
        return sentence, (sentence, None)
    said = (f"{named}'s" if m["owner"] or m["is"] else named) + sentence[m.end() :]
    return said, (said, named)


def _spelled_out(sentences: list[str]) -> tuple[list[str], set[int]]:
    """Expand noun fragments that continue a self-description ("I'm a cook. A runner.") to "I am a runner."."""
    out, expanded, listing = [], set(), False
    for i, sentence in enumerate(sentences):
        if listing and _NOUN_FRAGMENT.match(sentence):
            out.append(f"I am {sentence[0].lower()}{sentence[1:]}")
            expanded.add(i)
            continue
        listing = bool(_SELF_DESCRIPTION.search(sentence))
        out.append(sentence)
    return out, expanded


def _user_candidates(text: str, now: float | None, people: Collection[str]) -> list[Candidate]:
    sentences, expanded = _spelled_out(_statements(text, now, people))
    sentences = [without_secrets(s) for s in sentences]
    found = []
    for i, sentence in enumerate(sentences):
        if not sentence or (i in expanded and subject_of(sentence) is None):
            continue
        # a short one goes with what follows it; an exclaimed slot's value too, when what follows gives no memory of
        # its own ("I've been promoted! senior grounds supervisor from 1st april")
        short = (
            len(words(sentence)) < _MIN_WORDS
            and i not in expanded
            and (
                subject_of(sentence) is None
                or (sentence.endswith("!") and _adds_nothing(sentences, i + 1, now, people))
            )
        )
        content = _with_context(sentences, i) if short else sentence
        candidate = (
            _standing(sentence)
            or _candidate(sentence, content, "user", now, people)
            or _closing(sentence, now)
        )
        if candidate:
            found.append(candidate)
    return found


def _adds_nothing(sentences: list[str], i: int, now: float | None, people: Collection[str]) -> bool:
    """Whether the sentence at `i` is there and gives no memory on its own (a fragment: "No more junior.")."""
    if i >= len(sentences) or not sentences[i] or sentences[i].endswith("?"):
        return False
    sentence = sentences[i]
    return _candidate(sentence, sentence, "user", now, people) is None


def _standing(sentence: str) -> Candidate | None:
    """How the user wants to be answered or served from now on ("Please always speak slowly and simply to me",
    "never book me on a flight before 10am"): a preference, though it is a request (see curation/standing.py); it
    comes before any other reading of the sentence."""
    request = standing_request(sentence)
    if request is None:
        return None
    entities = _entity_names(request)
    subject = subject_of(request)  # the language to answer in is a slot: a later one replaces it
    return Candidate(
        type=MemoryType.PREFERENCE,
        content=request[:_MAX_CONTENT_CHARS],
        importance=_importance(MemoryType.PREFERENCE, request, entities, subject),
        confidence=0.9,
        entities=entities,
        subject=subject,
    )


def _closing(sentence: str, now: float | None) -> Candidate | None:
    """A statement too slight to keep on its own that says something is done ("Flights for Lisbon are booked!",
    "The plumber fixed the tap"), paid ("Larchmont finally paid 2207"), given up ("I had to pull out of the
    marathon") or how it went ("The interview went well"), an event, or that something moved to a new time or amount
    ("The standup moved to 10am") or a place closed for good ("Casa Pepe closed down"), a fact: kept only if it closes
    an open item or replaces the value a memory gave."""
    if len(words(sentence)) < _CLOSING_MIN_WORDS:
        return None
    mtype = (
        MemoryType.EVENT
        if says_closed(sentence)
        or says_dropped(sentence)
        or says_happened(sentence)
        or says_settled(sentence)
        else MemoryType.FACT
        if says_changed(sentence) or says_gone(sentence)
        else None
    )
    # a question, or a hedge ("I think the tap is fixed"), is no news
    if mtype is None or _NOT_A_MEMORY.search(sentence) or _HEDGE.search(sentence):
        return None
    return Candidate(
        type=mtype,
        content=_with_date(sentence, now)[:_MAX_CONTENT_CHARS],
        importance=type_spec(mtype).importance,
        confidence=0.75,
        entities=_entity_names(sentence),
        closing_only=True,
    )


def _procedure_block(text: str) -> str | None:
    """A list of >= 2 numbered or bulleted steps with the line that introduces them."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    steps = [i for i, ln in enumerate(lines) if _NUMBERED_LINE.match(ln)]
    if len(steps) < 2:
        return None
    start = max(0, steps[0] - 1)
    return "\n".join(ln.strip() for ln in lines[start : steps[-1] + 1])[:_MAX_CONTENT_CHARS]


def _assistant_candidates(text: str, now: float | None) -> list[Candidate]:
    found = []
    block = _procedure_block(text)
    if block and _TECHNICAL_STEP.search(block):
        found.append(
            Candidate(
                type=MemoryType.PROCEDURE,
                content=block,
                importance=type_spec(MemoryType.PROCEDURE).importance,
                confidence=0.6,
                entities=_entity_names(block),
                role="assistant",
            )
        )
    for sentence in split_sentences(text):
        if (
            _NUMBERED_LINE.match(sentence)
            or sentence.endswith("?")
            or not _ASSISTANT_CONCLUSION.search(sentence)
        ):
            continue
        candidate = _candidate(sentence, sentence, "assistant", now)
        if candidate and type_spec(candidate.type).from_assistant:
            found.append(candidate)
    return found


def said_of_before(user: str, said_before: Callable[[], str]) -> str:
    """`user` with an opening "he", "she", "his" or "her" said as the one person the last sentence of what the user
    said in the turn before (`said_before`, read only when `user` points back) named, and no other name: "my colleague
    Hideo is leaving the firm" / "he collects vinyl" -> "Hideo collects vinyl"; `user` as it is otherwise ("I had
    lunch with Tom and Ana" / "she loves orchids": whom "she" means is not said)."""
    if not _PRONOUN_OPENING.match(user.lstrip()):
        return user
    before = said_before()
    if not before.strip():
        return user
    sentences = split_sentences(pasted.own_words(before))
    named = _one_person(sentences[-1], alone=True) if sentences else None
    return _named_for_pronoun(user.lstrip(), (sentences[-1], named))[0] if named else user


def extract_candidates(
    user: str, assistant: str, *, now: float | None = None, people: Collection[str] = ()
) -> list[Candidate]:
    """Typed memory candidates from one turn: the user's own statements and the assistant's conclusions. `people`:
    the names of those the user called by a role before ("my sister Meera"), so what is told of them by name
    ("Meera moved to Vancouver.") is kept. What the user pasted (an email, notes, a chat log) is someone else's
    and gives no candidate (see `pasted`)."""
    found = _user_candidates(pasted.own_words(user), now, people) + _assistant_candidates(
        assistant, now
    )
    kept: list[int] = []
    for i in sorted(range(len(found)), key=lambda k: -len(found[k].content)):
        text, subject = found[i].content.lower(), found[i].subject
        if not any(
            text in found[k].content.lower() and subject in (None, found[k].subject) for k in kept
        ):
            kept.append(i)
    return [found[i] for i in sorted(kept)]
