"""Changes: a statement that something moved to a new time, or went up or down to a new amount, supersedes the
memory that gave the old value.

"The standup moved to 10am starting next week." replaces "Our team standup is at 9:30 every weekday.", "The dentist
appointment was pushed to Friday." replaces "My dentist appointment is on Thursday at 3pm.", "The bar exam got moved
to March." replaces "I'm studying for the bar exam in February", "I negotiated the rent down to 1700." replaces "My
landlord is raising the rent to 1850 a month.", "Staging moved to staging2.acme.dev." replaces "Staging lives at
staging.acme.dev.", and "Meera moved to Vancouver." replaces "My sister Meera lives in Toronto.", so the bulletin and
recall stop giving a value that no longer holds. The statement must say the thing moved ("moved to", "pushed back
to", "rescheduled for", "is now at") and give a time or a new address, host or path, or went to a new amount ("went
up to 17.99", "down to 78 kg", "raised my step goal to 10000", "Adam just turned 8") or is now at one ("the API now
runs on port 9000", "the limit is now 500"), or that someone named moved to a new place; the memory it replaces must
give a value of the same kind (an amount other than a time; a todo only a time: "The plumber call moved to
Wednesday" replaces "I need to call the plumber on Tuesday" with a todo still to do; where the one who moved lives,
and not the new place); the two must be close in meaning (cosine at least the kind's threshold) and share a word
naming the thing ("standup", "rent"), values and framing aside, so "The launch moved to May" leaves "Our standup is
at 9:30" alone however alike two schedules sound.
A plan or a question ("we might move the standup to 10", "should we move it?") changes nothing.

A thing of the user's moved to a newly named provider replaces what named another ("I switched my phone to Koodo"
replaces "My phone is with Fido"), and a new value said to stand instead of a named old one replaces the memory that
gave the old one ("it's Okinawa now instead of Hokkaido" replaces "We're planning Golden Week in Hokkaido"), each
under the same closeness and shared-word rules. So does what the user left for another ("I quit PureGym and joined
the climbing gym" replaces "My gym is PureGym on Leith Walk"; "I left Barclays for Monzo" replaces the user's own
"I bank with Barclays, have done for years", with no other word shared), and a value said as new replaces the user's
own old one of the same thing ("New goal: a half marathon under two hours" replaces "My running goal is a sub-50
10k").

A correction replaces the value it names as wrong: "my daughter's name is Clementine, not Clementina" replaces "My
daughter's name is Clementina and she's 6", "Actually my birthday is the 21st of April, not the 12th" replaces "My
birthday is on the 12th of April". The wrong value (after a closing "not") must be a name or a number the memory
gives, and the two must be close in meaning; "I like tea, not coffee" names no value and corrects nothing.

Someone new in a role replaces the memory that named another in it: "Mrs. Pakula retired, new nurse is Mr. Thorsen"
replaces "Amara's school nurse is Mrs. Pakula", "Dana is the new team lead" replaces "Our team lead is Priya Raman",
"tidewell-auth is now owned by Jun Takeda" replaces "tidewell-auth is owned by Priya's team"; the memory must share
a word for the role or the thing and name someone else.
"""

from __future__ import annotations

import functools
import re

from ..text import MONTHS_BUT_MAY, WEEKDAY_STEMS, holds_name, stem_words
from ..types import MemoryType
from ..vocabulary import DOINGS, I_OR_WE_ARE
from .noise import TECHNICAL_VALUE

# Cosines measured with all-MiniLM-L6-v2: a meeting, class or appointment and the word that it moved 0.49-0.93
# ("The standup moved to 10am starting next week." / "Our team standup is at 9:30 every weekday." 0.69; "Change of
# plans, they pushed my start to September 9 because the office is being renovated" / "I start on September 2"
# 0.49); another schedule's move 0.12-0.56, where the one at 0.56 ("The recycling pickup moved to Wednesday." / "The
# garbage is collected on Mondays.") shares no word and stays.
CHANGE_SIMILARITY = 0.45
# A routine held in a profile slot (a longer memory: "I play bass in a band called The Lowlands, we rehearse on
# Thursdays.") and the word it moved 0.45-0.76 ("Our rehearsals moved to Wednesdays." 0.45); another routine's move
# 0.04-0.29, none sharing a word.
ROUTINE_SIMILARITY = 0.4
# An amount and the word of its new value 0.44-0.81 ("I negotiated the rent down to 1700." / "My landlord is raising
# the rent to 1850 a month from January." 0.44); another amount's change 0.05-0.38, none sharing a word.
AMOUNT_SIMILARITY = 0.4
# A value and its correction 0.69-0.89 ("My birthday is the 21st of April, not the 12th." / "My birthday is on the 12th
# of April." 0.89); another memory naming the same value 0.51-0.66 ("My sister lives in Tokyo." / "I'm flying to
# Osaka, not Tokyo!" 0.63), which the shared-word rule leaves alone.
CORRECTION_SIMILARITY = 0.5
# One value set against another of its kind, in a sentence that goes on ("Spin is thursday not tuesday, they changed
# the timetable in March." / "I do spin class tuesday evenings so that night needs to be something quick" 0.44): two
# days, months or numbers and a shared word naming the thing stand guard instead of closeness
SWAP_SIMILARITY = 0.4
# Where someone the user knows lives and the word they moved 0.48-0.68 ("My mum Linda lives near Leeds." / "Linda
# moved to Spain after retiring." 0.48); another person's move 0.28, the same person's visit or new job 0.57-0.61,
# which name no move.
PLACE_SIMILARITY = 0.4
# The user's thing and the word it moved to a new provider 0.32-0.74 ("Our energy supplier is British Gas, it costs
# 120 a month." / "I've changed my energy supplier to Octopus." 0.32), another thing's switch 0.05-0.37; the thing's
# own word must be in the memory too.
PROVIDER_SIMILARITY = 0.3
# Who holds a role and the word that someone new holds it 0.42-0.81 ("Our team lead is Priya Raman." / "Dana is the
# new team lead." 0.42; "Amara's school nurse is Mrs. Pakula." / "Mrs. Pakula retired, new nurse is Mr. Thorsen." 0.60);
# another role's holder 0.20-0.27, sharing no word for the role.
HOLDER_SIMILARITY = 0.4
# ...a new thing done the same way ("We're watching Slow Horses now" against "We're watching The Bear on Disney+":
# 0.33; the verb must be the same, and "I'm taking the bus to work now" is 0.17 from "I'm taking sertraline 50mg")
DOING_SIMILARITY = 0.3
# Statements whose readings are kept: one is read for each of its neighbours in turn (curation/merge.py), so a few
# suffice.
STATEMENT_CACHE = 64

NEW_TIME = "changed: a new time for the same thing"
NEW_HOLDER = "changed: a new holder for the same thing"
NEW_AMOUNT = "changed: a new amount for the same thing"
NEW_DOING = "changed: a new thing done the same way"

_I = re.IGNORECASE

_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
# a time of day, a weekday, or a date; "9.30" is a time too, but only where a time is expected, not a price
_DATE_OR_CLOCK = (
    # a span of days: "16 to 20 September", "2-9 june", "june 2-9"
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s*(?:-|–|to|until|till)\s*\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b|"
    rf"\b(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\s*(?:-|–|to|until|till)\s*\d{{1,2}}\b|"
    rf"\b\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{{1,2}}:\d{{2}}\b|\b(?:noon|midday|midnight)\b|"
    rf"\b(?:{WEEKDAY_STEMS})days?\b|\bweekdays?\b|\b(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|"
    rf"\bthe\s+\d{{1,2}}(?:st|nd|rd|th)\b"
)
_DATE_OR_CLOCK_RE = re.compile(_DATE_OR_CLOCK, _I)
_WHEN = re.compile(rf"{_DATE_OR_CLOCK}|\b\d{{1,2}}\.\d{{2}}\b", _I)
# a month by its name alone, as a time a plan is set for or moved to ("the bar exam is in February", "got moved to
# March"); capitalised, and "May" only after a preposition, so the verb "may" is none
_MONTH_NAME = rf"\b(?-i:{MONTHS_BUT_MAY})\b|\b(?:in|to|for|until|till|by)\s+(?-i:May)\b"
_MONTH_NAME_RE = re.compile(_MONTH_NAME, _I)
# said that a thing's time changed, the new time given anywhere: "The gym time changed too, they opened a 7pm class so
# I go Tuesday and Thursday evenings now"
_TIME_CHANGED = re.compile(
    r"\b(?:time|times|day|days|schedule|slot|hours)\s+(?:has\s+|have\s+|just\s+|also\s+)*changed\b|"
    # "Riverbend change my schedule, now I am day shift 7am to 3pm", "New rota from January: gym moves to Tuesday"
    r"\bchange[ds]?\s+(?:my|our|the|his|her|their)\s+(?:\w+\s+)?(?:schedule|shifts?|hours|rota|timetable|plan)\b|"
    r"\bnew\s+(?:rota|schedule|timetable)\b",
    _I,
)
# said to be at a time now: "Coworking is fridays only now", "my rest day is friday now"
# ("it's November 12 at 8:15 now"), or now on a weekday: "long run now sunday", "Gail now Mon + Thu"
_NOW_AT = re.compile(
    rf"\b(?:is|are|'s|’s|its)\s+(?:on\s+|at\s+|every\s+)?(?:{_WHEN.pattern})(?:\s+(?:at\s+)?[\w:.]+){{0,2}}?"
    r"(?:\s+(?:only|instead))?\s+now\b|"
    rf"\bnow\s+(?:on\s+)?(?:every\s+)?(?:(?:{WEEKDAY_STEMS})days?|mon|tue|tues|wed|weds|thu|thur|thurs|fri)\b|"
    # ...or from now on: "The cleaner can only do Mondays from now on"; or at an hour now: "Gym's at 6 now"
    rf"\b(?:on\s+|every\s+)?(?:{WEEKDAY_STEMS})days?\s+from\s+now\s+on\b|"
    r"\b(?:is|are|'s|’s)\s+at\s+\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?\s+now\b|"
    # ...or done on a weekday now: "Chloe comes on Wednesdays now", "we meet Thursdays now"
    rf"\b(?!(?:is|are|was|were|be|been|see|saw|until|till|from|by|since|before|after|not)\b)[a-z]{{2,}}\s+"
    rf"(?:on\s+|every\s+)?(?:{WEEKDAY_STEMS})days?\s+now\b(?!\s+and\s+then)",
    _I,
)
# the value a plan or a choice had, named as what the new one replaces: "it's Okinawa now instead of Hokkaido"
_INSTEAD = re.compile(
    r"\binstead\s+of\s+(?:the\s+)?(?P<old>(?-i:[A-Z])[\w’'-]*(?:\s+(?-i:[A-Z])[\w’'-]*){0,2})", _I
)
# ...or as what the user left for another: "I quit PureGym and joined the climbing gym", "we cancelled the Marriott
# and booked the Hilton", "left Monzo for Starling"
_LEFT_FOR = re.compile(
    r"\b(?:quit|left|leaving|cancell?ed|dropped|ditched|gave\s+up|stopped\s+going\s+to|switched\s+(?:away\s+)?from|"
    r"moved\s+(?:away\s+)?from)\s+(?:the\s+|my\s+|our\s+)?"
    r"(?P<old>(?-i:[A-Z])[\w’'-]*(?:\s+(?-i:[A-Z])[\w’'-]*){0,2})\b[^.!?;]{0,40}?"
    r"(?:\s+for\s+(?:the\s+)?(?-i:[A-Z])|\b(?:and|,)\s+(?:then\s+|now\s+|just\s+)?(?:joined|booked|signed\s+up|"
    r"went\s+with|switched\s+to|moved\s+to|picked|chose|got|started\s+(?:at|with)))",
    _I,
)
# a new thing the user does the same way, said as new: "I'm reading The Overstory now", "We're watching Slow Horses
# now", "I'm learning Italian now instead", "I'm now training for the Berlin marathon" (a thing named: "I'm reading
# a lot now" is no new book)
_NOW_DOING = re.compile(
    rf"^\W*{I_OR_WE_ARE}\s+(?:(?P<now>now|currently)\s+)?(?P<verb>{DOINGS})\s+"
    r"(?:for\s+|on\s+|to\s+|with\s+)?(?P<thing>[^,.;:!?]{0,40}?\b(?-i:[A-Z])[\w+&-][^,.;:!?]{0,40}?)"
    r"(?(now)(?=\s*(?:[,.;:!?]|$))|\s+(?:now|instead|these\s+days)\b)",
    _I,
)
# a thing the user was doing, done: "I finished Wolf Hall", "we've finally finished watching Slow Horses" (it ends "I'm
# reading Wolf Hall", not "Wolf Hall is my favourite")
_DONE_DOING = re.compile(
    r"\b(?:i|we)(?:['’]ve|\s+have)?\s+(?:just\s+|finally\s+|now\s+|already\s+)?(?:finished|completed)\s+"
    rf"(?:(?P<verb>{DOINGS})\s+)?(?P<thing>(?-i:[A-Z])[\w'’&+-]*(?:\s+(?:(?-i:[A-Z0-9])[\w'’&+-]*|of|the|and|a|in|on)){{0,6}})",
    _I,
)
# the capitalised words a name opens with ("Wolf Hall" of "Wolf Hall on Sunday")
_CAPITALISED = re.compile(r"(?-i:[A-Z0-9])[\w'’&+-]*(?:\s+(?-i:[A-Z0-9])[\w'’&+-]*)*")
# a plan given up for another, the thing it was about named: "Changed our minds on the living room, we're going with
# sage green instead", "I've changed my mind about the car", "change of plan for the party: ..."
_MIND_CHANGED = re.compile(
    r"\b(?:changed\s+(?:my|our)\s+minds?|change\s+of\s+plans?)\s+(?:on|about|for|with)\s+"
    r"(?P<thing>(?:the|my|our)\s+[^,.;:!?]{2,40}?)\s*(?:[,.;:!?]|$|\s+(?:and|so|we|i)\b)",
    _I,
)
# what a plan of the user's says: "We're painting the living room dusty blue this weekend", "I'll get the Golf",
# "we decided to go with oak floors"
_PLAN = re.compile(
    rf"^\W*{I_OR_WE_ARE}\s+(?:(?:also|just|finally|actually)\s+)?[a-z]+ing\b|"
    r"\b(?:i|we)(?:['’]ll|\s+will|\s+plan\s+to|['’](?:ve|d)\s+decided\s+to|\s+decided\s+to)\s",
    _I,
)
# a new value of a thing the user named as theirs, said as new: "New goal: a half marathon under two hours", "my new
# workout plan is three runs a week" (a new holder's name and a new amount are read first)
_NEW_THING = re.compile(
    r"^\W*(?:(?:my|our)\s+)?new\s+(?P<thing>(?-i:[a-z])[\w-]*(?:\s+(?-i:[a-z])[\w-]*)?)\s*(?::|\s(?:is|will\s+be)\b)",
    _I,
)
# a part of the day or week, as a routine's time: "I walk every morning", "switched my walk to the evening"
_TIME_OF_DAY = r"\b(?:mornings?|afternoons?|evenings?|nights?|weekends?)\b"
_TIME_OF_DAY_RE = re.compile(_TIME_OF_DAY, _I)
# said to have moved, with the new time right after: "moved to 10am", "got pushed back to Friday at 11", "was
# rescheduled for the 16th", "is now on Wednesdays", "is now due July 31", "now starts at 11am", "Dr. Okonjo moved
# Amara's check-up to April 16", "demo moved up to may 28" ("I moved to Tokyo today" is no schedule)
_MOVED = re.compile(
    # (as a learner or a note says it too: "solicitor appointment move to 24 october", "USCIS move it to 4
    # december", "it's moved again to 2 October", "pushed back a week to 30 August", "they change me to night shift";
    # a base form, which may be a noun ("an oil change on March 2nd"), only before "to")
    r"(?:\b(?:moved|pushed(?:\s+(?:back|out|forward))?|postponed|rescheduled|brought forward|bumped|shifted|changed|"
    r"switched|delayed|extended|slipped|slid|rebooked|rearranged|(?P<base>move|moves|change|changes|push(?:es)?"
    r"(?:\s+back)?|postpone|reschedule))(?:\s+again)?"
    r"(?:\s+(?:it|them|me|us|back|forward|out|up|(?:the|our|my|their|his|her)\s+[\w-]+(?:\s+[\w-]+)?|"
    # a bare thing: "Priti moved yoga to Sundays"
    r"(?-i:[a-z])[\w-]+(?=\s+(?:to|till|until)\b)|"
    r"(?-i:[A-Z])[\w-]*['’]s\s+[\w-]+|"
    r"(?:(?:the|our|my|their)\s+)?[\w-]+\s+(?:days?|times?|nights?|slots?)))?(?:\s+again)?"
    r"(?:\s+(?:by\s+)?(?:a|an|one|two|three|\d{1,2})\s+(?:days?|weeks?|months?|hours?))?"
    # ...maybe from the old time first: "got moved from sept 19 to oct 3", "moved Mar 3 -> Mar 24"
    r"(?:(?:\s+from)?\s+[\w:.]+(?:\s+[\w:.]+){0,3}?\s*(?:->|→|=>)|"
    r"(?:\s+from\s+[\w:.]+(?:\s+[\w:.]+){0,3}?)?\s+(?:to|till|until|into|(?(base)(?!)|(?:for|on|at)))|"
    r",\s+now(?:\s+(?:it['’]?s|on|at))?)|"
    r"\b(?:is|are|'s|’s)\s+now\s+(?:at|on|from|every|in|due(?:\s+(?:on|by))?)|"
    r"\bnow\s+(?:starts?|runs?|happens?|takes place|meets?|switches|rotates?|hands? over|opens?|closes?|leaves?|"
    r"departs?|fl(?:y|ies)|arrives?|lands?|returns?|comes? back|gets? back)"
    r"(?:\s+(?:at|on|from|every|in))?)"
    # the new time right after, or after a new name for the thing: "got changed to TP1250 at 9:15"
    rf"\s+(?:[\w-]{{0,20}}\d[\w-]{{0,20}}\s+(?:at|on)\s+)?(?:the\s+|next\s+|this\s+|a\s+|every\s+)?"
    rf"(?:{_WHEN.pattern}|(?-i:{MONTHS_BUT_MAY}|May)\b|may\s+\d{{1,2}}\b|"
    rf"(?:(?:mon|tues?|wed|weds|thu|thur|thurs|fri|sat|sun)\s+)?{_TIME_OF_DAY})",
    _I,
)
# said to be on a new date now, with no word for the move: "The launch slipped, beta is now May 16", "the hearing's
# now the 9th" (a price is no date: "Netflix is now 17.99" is a new amount)
_NOW_DATED = re.compile(
    rf"(?:\b(?:is|are|'s|’s|its)\s+now|\bnow\s+(?:it['’]?s|its|it\s+is))\s+(?:on\s+)?(?:the\s+|next\s+|this\s+)?"
    rf"(?:{_DATE_OR_CLOCK}|(?-i:{MONTHS_BUT_MAY}|May)\b)",
    _I,
)
# the old time a statement names as replaced: "due 16 May instead of 2 May", "moved from sept 19 to oct 3", "the
# 17th, not the 14th"
_OLD_TIME = re.compile(
    rf"\b(?:instead\s+of|rather\s+than|from|not)\s+(?:the\s+|on\s+)?(?P<old>{_DATE_OR_CLOCK}|\d{{1,2}}(?:st|nd|rd|th)?\b)",
    _I,
)
# said to have been rescheduled, by a word for it or a "to" before the new time
_RESCHEDULED = re.compile(
    r"\b(?:pushed|postponed|rescheduled|rebooked|rearranged|delayed|brought\s+forward|bumped|slipped|extended|"
    r"(?:moved|move|moves|changed|change|changes)\s+(?:again\s+)?(?:(?:it|them|back|up|forward)\s+)?(?:again\s+)?to|"
    r"(?:is|are|'s|’s|its)\s+now|now\s+(?:it['’]?s|its|it\s+is)|"
    r"now\s+(?:starts?|runs?|leaves?|departs?|meets?|happens?))\b",
    _I,
)
# gone to a new amount: "went up to 17.99", "negotiated the rent down to 1700", "raised my step goal to 10000";
# "driving up to 4 hours" is a limit, not a change; or now at one: "the limit is now 500", "the API now runs on
# port 9000", "Netflix now costs 17.99"
_NEW_AMOUNT = re.compile(
    r"(?:\b(?:went|gone|goes|go|got|is|are|was|were|am|'s|’s|'m|’m|been|came|come|comes|bumped|pushed|brought"
    r"|(?:negotiated|put|puts|putting)(?:\s+\w+){0,3}?)\s+(?:up|down)|\b(?:raised|lowered|increased|reduced|cut|dropped|rose|risen|fell|fallen|"
    r"grew|grown|shrank|shrunk|climbed|changed|bumped|upped|raise|lower|increase|reduce)(?:\s+[\w'’]+){0,4}?)"
    r"\s+to\s+(?:about\s+|around\s+|roughly\s+|just\s+)?[$€£]?\d|"
    r"\b(?:is|are|'s|’s)\s+now\s+(?:about\s+|around\s+)?[$€£]?\d|"
    # said to go up or down and then its amount: "rent going up, from january is 520 pound"; going to a price: "day rate
    # going to $1,050 + gst from 1 april"
    r"\b(?:going|goes|go|went|gone)\s+(?:up|down)\b[^.!?]{0,30}?\b(?:is|will\s+be)\s+(?:about\s+|around\s+)?[$€£]?\d|"
    r"\bgoing\s+to\s+(?:be\s+)?[$€£]\d|"
    # an amount from a date on: "from march rent is 1450", "we agree 140 kr per hour from now", "Rate £6/hr from April"
    rf"\bfrom\s+(?:{_MONTH}|next\s+\w+|now)\b[^.!?]{{0,30}}?\b(?:is|are|will\s+be)\s+[$€£]?\d|"
    rf"(?<![\d.,])[$€£]?\d[\d,.]*\s*(?:[$€£]|kr|zł|pounds?|euros?|dollars?)?\s*(?:/\s?\w+|(?:a|per|an)\s+\w+)?\s+"
    rf"from\s+(?:now\b|next\s+\w+|(?:{_MONTH})\b|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH})\b)|"
    # now at a price said as one: "Chloe raise her price, now $20 per hour", "I send mama now 350 every month"
    r"\bnow\s+[$€£]?\d[\d,.]*\s*(?:[$€£]|kr|zł|pounds?|quid|euros?|eur|dollars?|bucks|a\s+(?:month|week|day|year|night)|"
    r"per\s+\w+|every\s+\w+|/\s?\w+)|"
    # paid at a new amount now, a final count, a count or price gone up or down: "now I pay 1295 euro per month", "the
    # final number is 88", "guest list up to 165", "budget's back down to 30k"
    r"\bnow\s+(?:i|we|he|she|they)\s+(?:pay|get|earn|make|charge|send|owe)s?\s+(?:about\s+|around\s+)?[$€£]?\d|"
    # ...and said to whom, the user paying now: "We now pay Chloe £9.50 an hour", "now I pay her £12"
    r"\b(?:now\s+(?:i|we)|(?:i|we)\s+now)\s+pay\s+(?:[A-Z][\w'’-]*|him|her|them)\s+[$€£]\d|"
    # a price, then "now": "Chloe charges £9.50 an hour now", "rent is €1,450 a month now" (not "now and then")
    r"\b(?:is|are|'s|’s|charges?|costs?|pays?)\s+(?:about\s+|around\s+)?[$€£]\d[\d,.]*\s*"
    r"(?:(?:a|an|per)\s+\w+|/\s?\w+)?\s+now\b(?!\s+and\s+then)|"
    r"\bfinal\s+(?:number|count|headcount|figure|price|total)\s+(?:is|will\s+be)\s+(?:about\s+)?[$€£]?\d|"
    r"\b(?:guests?|guest\s+list|headcount|numbers|budget|rent|price|rate|fee|salary|quote)(?:['’]s)?\s+"
    r"(?:is\s+|are\s+|has\s+gone\s+|went\s+)?(?:now\s+)?(?:back\s+)?(?:up|down)\s+to\s+(?:about\s+)?[$€£]?\d|"
    # a new amount named as new: "the new rent is €1,203 per month from july"
    r"\bnew\s+(?:[\w-]+\s+){1,2}?(?:is|will\s+be)\s+(?:about\s+|around\s+)?[$€£]?\d|"
    r"\bnow\s+(?:runs?|listens?|costs?|takes?|charges?)\s+(?:on\s+|at\s+)?(?:port\s+)?(?:about\s+|around\s+)?[$€£]?\d|"
    # a count the user has reached: "I'm at 27 books now!", "we're now at 40 subscribers"
    r"\b(?:i|we)(?:'m|’m| am|'re|’re| are)\s+(?:now\s+at\s+\d|(?:up\s+to\s+|already\s+)?at\s+\d[^.!?]{0,60}?\bnow\b)|"
    # a new age: "Adam just turned 8!", "she's 8 now"
    r"\bturned\s+\d{1,3}\b(?!\s*(?:degrees|°|%|percent))|\b(?:is|'s|’s)\s+\d{1,3}\s+now\b",
    _I,
)
# moved to a new address, host or path: "Staging moved to staging2.acme.dev.", "the docs are now at https://..."
_NEW_ADDRESS = re.compile(
    r"\b(?:(?:moved|migrated|changed|switched)(?:\s+(?:it|them|(?:the|our|my|their)\s+[\w-]+))?|"
    r"(?:is|are|'s|’s)\s+now|now\s+(?:lives?|sits?|is|are))"
    rf"(?:\s+(?:over\s+)?(?:to|at|on|in|under))?\s+(?:[\w.+-]{{1,64}}@)?(?:{TECHNICAL_VALUE.pattern})",
    _I,
)
# someone named moved to a new place: "Meera moved to Vancouver for a new hospital job.", "Tom relocated to Cork",
# "Jo's moved up to Glasgow", "Ana now lives in Lisbon" (not "She moved to ...": whose move is not said; not "is
# moving": a plan)
_RELOCATED = re.compile(
    r"^(?!(?-i:She|He|They|It|We|This|That|There|Everyone|Nobody|Someone)\b)(?P<who>(?-i:[A-Z][a-z]{1,30}))(?:['’]s)?\s+"
    r"(?:(?:has|had|just|recently|finally|now|also)\s+){0,2}"
    r"(?:(?:moved|relocated)\s+(?:back\s+|over\s+|away\s+|out\s+|up\s+|down\s+)?(?:to|into)|lives?\s+in|"
    r"is\s+living\s+in)\s+"
    r"(?:the\s+)?(?P<place>(?-i:[A-Z])[\w'’-]{1,40})",
    _I,
)
# someone named started at a new workplace: "Ana started at PwC this week", "Tom has joined Deloitte", "Priya starts
# at Google on Monday" (group "who", group "place")
_NEW_WORKPLACE = re.compile(
    r"^(?!(?-i:She|He|They|It|We|This|That|There)\b)(?P<who>(?-i:[A-Z][a-z]{1,30}))\s+"
    r"(?:(?:has|had|just|recently|finally|now|also)\s+){0,2}"
    r"(?:(?:started|starts|began|is\s+starting)\s+(?:a\s+new\s+job\s+|work\s+|working\s+)?(?:at|with)|joined)\s+"
    r"(?:the\s+)?(?P<place>(?-i:[A-Z])[\w&'’.-]{1,40}(?:\s+(?-i:[A-Z])[\w&'’.-]{1,40}){0,2})",
    _I,
)
# where someone works, in a memory: "Ana works at Deloitte", "my wife is an auditor at KPMG"
_WORKS = re.compile(
    r"\b(?:works?|working|worked|job|employed|is\s+an?\s+[\w -]{2,40}?)\s+(?:at|for|with)\s+\S", _I
)
# a thing held somewhere moved to a new place, named: "the offsite moved to Leeds", "The wedding's been moved to York",
# "our book club moved to the Crown", "We've moved the party to the village hall" (a person's move is `_RELOCATED`; a
# new time is read first)
_PLACE = (
    r"(?P<place>(?:the\s+)?(?-i:[A-Z])[\w'’-]{1,40}(?:\s+(?-i:[A-Z])[\w'’-]{1,40}){0,2}"
    r"|(?:the|our|my)\s+(?-i:[a-z])[\w'’-]{1,40}(?:\s+(?-i:[a-z])[\w'’-]{1,40}){0,2}?(?=\s*(?:[,.;:!?]|$)))"
)
_THING = r"(?P<thing>(?-i:[a-z])[\w-]*(?:\s+(?!(?:who|that|which)\b)(?-i:[a-z])[\w-]*){0,2}?)"
_NEW_VENUE = (
    re.compile(
        rf"\b(?:the|our)\s+{_THING}\s+(?:has\s+|have\s+|['’]s\s+|is\s+|was\s+|got\s+)?"
        rf"(?:been\s+|just\s+|now\s+)*(?:moved|relocated)\s+(?:over\s+)?to\s+{_PLACE}",
        _I,
    ),
    re.compile(
        rf"\b(?:moved|relocated)\s+(?:the|our)\s+{_THING}\s+(?:over\s+)?to\s+{_PLACE}",
        _I,
    ),
)
# where a thing was held, unnamed: "We're having the party at our house"
_HELD_AT = re.compile(r"\b(?:at|in)\s+(?:the|our|my)\s+(?-i:[a-z])", _I)


# a thing of the user's moved to a new provider, named: "I switched my phone to Koodo", "We moved our savings over to
# Monzo", "I've changed my energy supplier to Octopus", "We've moved the cat to Oakwood Vets" (not "I moved to
# Tokyo": no thing; not a time or an amount)
_NEW_PROVIDER = re.compile(
    r"\b(?:i|we)(?:['’]ve|\s+have)?\s+(?:just\s+|finally\s+|also\s+)?(?:switched|moved|changed|migrated|ported|"
    r"transferred)\s+(?:my|our|the)\s+(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)\s+(?:over\s+)?(?:to|into|onto)\s+"
    r"(?:the\s+)?(?P<name>(?-i:[A-Z])[\w'’&+-]*(?:\s+(?-i:[A-Z])[\w'’&+-]*){0,2})",
    _I,
)
# ...or the user moved to one: "We've moved to Parkside Dental", "I switched to Monzo"
_MOVED_TO_NAMED = re.compile(
    r"\b(?:i|we)(?:['’]ve|\s+have)?\s+(?:just\s+|finally\s+|also\s+)?(?:switched|moved|changed)\s+(?:over\s+)?to\s+"
    r"(?:the\s+)?(?P<name>(?-i:[A-Z])[\w'’&+-]*(?:\s+(?-i:[A-Z])[\w'’&+-]*){0,2})",
    _I,
)
# someone new holds a role, or owns or runs a thing: "new nurse is Mr. Thorsen", "Dana is the new team lead", "Ms.
# Ruiz took over as Leo's teacher", "tidewell-auth is now owned by Jun Takeda" (group "role": the role, or the thing
# before "is now"; group "name": the new holder); "a new nurse" only starting is no successor
_HOLDER_NAME = r"(?P<name>(?-i:(?:(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?\s+)?[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?))(?!['’]s)"
_ROLE = r"(?!(?:normal|thing|one|black|standard|default|trend)\b)(?P<role>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)"
_NEW_HOLDER = (
    re.compile(
        rf"(?<!\ba\s)\bnew\s+{_ROLE}\s+(?:is|will\s+be|['’]s)\s+(?:now\s+)?{_HOLDER_NAME}", _I
    ),
    re.compile(
        rf"{_HOLDER_NAME}\s+(?:is|will\s+be)\s+(?:now\s+)?(?:the|our|my|his|her|their|(?-i:[A-Z])\w+['’]s)\s+"
        rf"new\s+{_ROLE}\b",
        _I,
    ),
    re.compile(
        rf"{_HOLDER_NAME}\s+(?:has\s+|just\s+|is\s+|will\s+be\s+)*(?:took|taken|takes|taking)\s+over\s+as\s+"
        rf"(?:the\s+|our\s+|my\s+|his\s+|her\s+|their\s+|(?-i:[A-Z])\w+['’]s\s+)?{_ROLE}\b",
        _I,
    ),
    # "my main supervisor is now Assoc Prof Marcus Lindqvist-Tane"
    re.compile(
        rf"\b(?:my|our|the|his|her|their|(?-i:[A-Z])\w+['’]s)\s+{_ROLE}\s+is\s+now\s+{_HOLDER_NAME}",
        _I,
    ),
    re.compile(
        rf"^(?P<role>.{{2,60}}?)\s+(?:is|are)\s+now\s+(?:owned|run|led|managed|maintained|handled|taught|coached|"
        rf"chaired|hosted|looked\s+after)\s+by\s+{_HOLDER_NAME}",
        _I,
    ),
)
# a name in a memory: a capitalised word past its first ("My phone is with Fido")
_LATER_NAME = re.compile(r"(?<=\s)(?-i:[A-Z])[\w'’&+-]*")
_SPEAKER = re.compile(r"\b(?:i|we)\b", _I)
_SPEAKER_FIRST = re.compile(r"\W*(?:i|we)\b", _I)
# where a memory says someone lives: "lives in Toronto", "is based in Dublin", "moved to Berlin last year"
_LIVES = re.compile(
    r"\b(?:lives?|living|based|settled|moved|relocated)\s+(?:\w+\s+)?(?:in|near|to|outside)\s+(?-i:[A-Z])",
    _I,
)
# the date a memory of something past was anchored to ("We opened a second branch last week! (around 2026-11-20)"):
# when it happened, not a time it is set for
_PAST_ANCHOR = re.compile(
    r"\b(?:yesterday|last\s+night|last\s+week(?:end)?)\b[^()]*(?P<anchor>\((?:around\s+)?\d{4}-\d{2}-\d{2}\))\s*$",
    _I,
)
_DIGIT = re.compile(r"\d")
_RELATIVE_DAY = re.compile(
    r"\b(?:today|tonight|tomorrow|next week(?:end)?|this (?:morning|afternoon|evening))\b", _I
)
# a value only wondered about or asked about
_DOUBT = (
    r"\?|\b(?:might|may be|maybe|perhaps|probably|could|should|would|thinking (?:of|about)|considering|if|unless|"
    r"think|guess|not sure)\b"
)
_DOUBTED = re.compile(_DOUBT, _I)
# a move only thought about, asked about or planned ("we're going to move the standup to 10"); a plan corrected is
# still corrected ("we're going to Crete, not Sardinia")
_UNSETTLED = re.compile(
    rf"{_DOUBT}|\b(?:want(?:s|ed)? to|plan(?:s|ning)? to|hop(?:e|es|ing) to|trying to|looking to|aim(?:s|ing)? to|"
    r"going to(?!\s+(?:be\s+)?[$€£]\d)|gonna|would like|'d like)\b",
    _I,
)
# words that frame a schedule or an amount rather than name what is scheduled or paid (a currency names no thing: a
# new day rate in euro is no new desk rent in euro)
_FRAME = frozenset(
    """
moved moving push pushed back out forward postponed rescheduled brought bumped shifted changed switched delayed
slipped rebooked starting starts from now every each week weeks next this last today tomorrow tonight morning afternoon
evening day days weekday weekdays weekend time times until till instead the and for are was were our your their
its has have had been got get will into onto that with from also just again anymore
down raised raising lowered increased reduced cut dropped rose risen fell fallen grew grown shrank shrunk climbed
went gone goes negotiated about around roughly month months year years per
euro euros eur pound pounds quid dollar dollars bucks usd cad aud nzd gbp kr pln gst vat
""".split()  # noqa: SIM905
)
# "..., not Clementina.", "..., not the 12th!": the value the statement calls wrong, at its end; or (`_SWAP`) one
# value set against another of its kind, the clause going on: "spin is thursday not tuesday, they changed the
# timetable"
_CORRECTION = re.compile(
    r",\s*(?:and\s+|but\s+)?not\s+(?:the\s+|a\s+|an\s+|in\s+|on\s+|at\s+)?"
    r"(?P<wrong>[\w’'-]+(?:\s+[\w’'-]+){0,2}?)\s*[.!]*\s*$",
    _I,
)
# an allergen said to be fine after all, in a statement about allergies: "it's sulfa drugs I'm allergic to, penicillin
# is fine" (not "the 3rd is fine")
_CLEARED = re.compile(
    r"\b(?P<cleared>[a-z]+)\s+(?:is|are)\s+(?:fine|ok|okay|no\s+problem|not\s+a\s+problem)\b", _I
)
_ALLERGY = re.compile(r"\ballerg", _I)
# ...or said not to be what it was, in a statement about allergies: "turns out it's not shellfish, I'm allergic to
# peanuts", "it isn't penicillin I react to, it's sulfa"
_NOT_ALLERGEN = re.compile(
    r"\b(?:it['’]s|it\s+is|it\s+isn['’]t|it\s+was|it\s+wasn['’]t)\s+(?:actually\s+)?(?:not\s+)?"
    r"(?<=not\s|n['’]t\s)(?!(?:a|an|the|that|this|so|too|very|really|just|my|sure|bad|big|great|good|fine|ok|okay|"
    r"serious|severe|much|all|only|always)\b)(?P<cleared>[a-z]{3,})\b",
    _I,
)
_SWAP = re.compile(
    r"\b(?P<right>[\w’'-]+),?\s+not\s+(?:the\s+|on\s+|in\s+)?(?P<swapped>[\w’'-]+)\s*(?=[,;.!]|$)",
    _I,
)
_TIME_WORD = re.compile(
    rf"^(?:\d.*|am|pm|noon|midday|midnight|(?:{WEEKDAY_STEMS})days?|{_MONTH})$", _I
)


def when(text: str) -> bool:
    """Whether `text` gives a day, a date or a time of day ("on Thursday at 3pm", "tomorrow", "the 15th")."""
    return _WHEN.search(text) is not None or _RELATIVE_DAY.search(text) is not None


def says_new_time(text: str) -> bool:
    """Whether `text` says something was rescheduled ("Infusion got pushed to Monday 16 September, 10am", "the
    standup is now at 10"), not that someone moved on a day ("Tess moved out on Sunday")."""
    return _change_kind(text) == "time" and _RESCHEDULED.search(text) is not None


# what the user pays or is paid, whose new amount is news of its own ("landlord put rent up to 250 a week")
_PAID = re.compile(
    r"\b(?:rent|rate|salary|pay|wage|wages|fee|fees|price|budget|mortgage|allowance|pension|premium|bill)\b",
    _I,
)


def says_new_amount(text: str) -> bool:
    """Whether `text` says what the user pays or is paid went to a new amount ("Mr Hogan say from march rent is
    1450", "Chloe raise her price, now $20 per hour"), not that any number changed ("Netflix went up to 17.99")."""
    return _change_kind(text) == "amount" and _PAID.search(text) is not None


def says_new_plan_or_place(text: str) -> bool:
    """Whether `text` says the user changed their mind on a thing for a new plan ("Changed our minds about the trip,
    we're doing Lisbon instead"), or that a thing is held at a new place ("the offsite moved to Leeds"): news of its
    own, whether or not the old one was kept."""
    return _change_kind(text) in ("plan", "venue")


def says_changed(text: str) -> bool:
    """Whether `text` says something now happens at another time ("The standup moved to 10am"), went to a new
    amount ("Netflix went up to 17.99") or was said wrongly ("Clementine, not Clementina")."""
    return _change_kind(text) is not None or _wrong_value(text) is not None


# the kinds whose item and statement name the same thing otherwise than by a shared word: the one who moved or
# started somewhere new, by name ("Jo" is too short a word), and a doing, whose things differ by design
_NAMED_OTHERWISE = frozenset({"place", "workplace", "doing", "done"})
# why a change of each kind replaces the old value, where it is not "a new <kind> for the same thing"
_REASONS = {
    "time": NEW_TIME,
    "instead": "changed: a new value instead of the old",
    "value": "changed: a new value instead of the old",
    "plan": "changed: the user changed their mind",
    "doing": NEW_DOING,
    "done": "changed: the thing the user was doing is done",
}


def change(
    item_type: MemoryType,
    item: str,
    statement: str,
    similarity: float,
    *,
    time_floor: float = CHANGE_SIMILARITY,
) -> str | None:
    """Why `statement` (a new memory) replaces the value `item` (a current one; `similarity` their cosine) gave, or
    None. `time_floor`: the cosine a new time needs (`ROUTINE_SIMILARITY` for a routine's slot)."""
    kind = _change_kind(statement)
    # a todo moved to a new time is still to do (merge keeps the new memory a todo); no other change touches one
    if kind is None or (item_type is MemoryType.TODO and kind != "time"):
        return None
    if kind == "time":
        past = _PAST_ANCHOR.search(item)
        set_for = item[: past.start("anchor")] if past else item
        gave = any(p.search(set_for) for p in (_WHEN, _MONTH_NAME_RE, _TIME_OF_DAY_RE))
        closed = gave and similarity >= time_floor and _holds_old_time(item, statement)
    elif kind == "address":
        closed = TECHNICAL_VALUE.search(item) is not None and similarity >= CHANGE_SIMILARITY
    elif kind in ("place", "workplace"):
        # the item says where the one who moved lives, or where the one who started works, and not the new place
        moved = (_RELOCATED if kind == "place" else _NEW_WORKPLACE).match(statement)
        closed = (
            moved is not None
            and holds_name(item, moved["who"], ignore_case=True)
            and not holds_name(item, moved["place"], ignore_case=True)
            and (_LIVES if kind == "place" else _WORKS).search(item) is not None
            and similarity >= PLACE_SIMILARITY
        )
    elif kind == "venue":  # the item says where the thing is held, and names another place
        held = _new_venue(statement)
        closed = (
            held is not None
            and bool(_thing_words(item) & _thing_words(held["thing"]))
            and not holds_name(item, held["place"], ignore_case=True)
            and (
                any(w != "I" and not _TIME_WORD.match(w) for w in _LATER_NAME.findall(item))
                or _HELD_AT.search(item) is not None
            )
            and similarity >= PLACE_SIMILARITY
        )
    elif kind == "provider":  # the user's thing, with another name than the new one
        switched = _NEW_PROVIDER.search(statement)
        closed = (
            switched is not None
            and _owns(item, switched["thing"])
            and not holds_name(item, switched["name"], ignore_case=True)
            and any(w != "I" for w in _LATER_NAME.findall(item))
            and similarity >= PROVIDER_SIMILARITY
        )
    elif kind == "holder":  # the item names another holder of the same role or thing
        held = _new_holder(statement)
        closed = (
            held is not None
            and not holds_name(item, held["name"], ignore_case=True)
            and bool(_thing_words(item) & _thing_words(held["role"]))
            and any(not _TIME_WORD.match(w) for w in _LATER_NAME.findall(item) if w != "I")
            and similarity >= HOLDER_SIMILARITY
        )
    elif kind == "instead":
        # the item names the old value, and shares a word naming the thing besides it; or it is the user's own
        # word of what they left ("I bank with Barclays" for "I left Barclays for Monzo")
        instead = _INSTEAD.search(statement)
        old = instead or _LEFT_FOR.search(statement)
        closed = (
            old is not None
            and holds_name(item, old["old"], ignore_case=True)
            and (
                bool(_thing_words(item) & _thing_words(statement) - _thing_words(old["old"]))
                or (instead is None and _SPEAKER_FIRST.match(item) is not None)
            )
            and similarity >= CORRECTION_SIMILARITY
        )
    elif kind == "plan":
        # the item is a plan of the user's about the thing they changed their minds on
        changed = _MIND_CHANGED.search(statement)
        closed = (
            changed is not None
            and (
                item_type in (MemoryType.DECISION, MemoryType.GOAL)
                or _PLAN.search(item) is not None
            )
            and bool(_thing_words(item) & _thing_words(changed["thing"]))
            and similarity >= AMOUNT_SIMILARITY
        )
    elif kind == "doing":
        # the item says the user does that the same way, with another thing: "I'm reading Middlemarch"
        doing = _NOW_DOING.match(statement)
        closed = (
            doing is not None
            and re.match(
                rf"^\W*{I_OR_WE_ARE}\s+(?:currently\s+|still\s+|also\s+)?"
                rf"{re.escape(doing['verb'])}\b",
                item,
                _I,
            )
            is not None
            and not holds_name(item, doing["thing"], ignore_case=True)
            and similarity >= DOING_SIMILARITY
        )
    elif kind == "done":
        # the item says the user is doing the very thing now done: "I'm reading Wolf Hall at the moment"
        done = _DONE_DOING.search(statement)
        name = _CAPITALISED.match(done["thing"]) if done is not None else None
        closed = (
            name is not None
            and re.match(
                rf"^\W*{I_OR_WE_ARE}\s+(?:currently\s+|still\s+|now\s+)?(?:{DOINGS})\s+(?:the\s+)?"
                rf"{re.escape(name.group())}\b",
                item,
                _I,
            )
            is not None
            and similarity >= DOING_SIMILARITY
        )
    elif kind == "value":
        # the item gave the user's own value of the same thing: "My running goal is ..."
        thing = _NEW_THING.match(statement)
        closed = (
            thing is not None
            and _states_own(item, thing["thing"])
            and similarity >= AMOUNT_SIMILARITY
        )
    else:  # an amount: one that is not a time ("at 9:30" is no price), of the thing the new amount is said of
        gave = _DIGIT.search(_DATE_OR_CLOCK_RE.sub(" ", item)) is not None
        closed = (
            gave
            and similarity >= AMOUNT_SIMILARITY
            and bool(_thing_words(item) & _thing_words(_amount_clause(statement)))
            and _holds_old_amount(item, statement)
        )
    # the two speak of the same thing: a word of it shared, unless the kind names it otherwise
    if not closed or (
        kind not in _NAMED_OTHERWISE and not _thing_words(item) & _thing_words(statement)
    ):
        return None
    return _REASONS.get(kind, f"changed: a new {kind} for the same thing")


def corrected(item: str, statement: str, similarity: float) -> str | None:
    """Why `statement` corrects a value `item` gave ("..., not Clementina"), or None: the item names the wrong
    value, and the two share a word naming the thing besides it ("daughter", "birthday"), so "I'm flying to Osaka,
    not Tokyo" leaves "My sister lives in Tokyo" alone."""
    m = _wrong_value(statement)
    swapped = m is not None and "swapped" in m.re.groupindex
    if m is None or similarity < (SWAP_SIMILARITY if swapped else CORRECTION_SIMILARITY):
        return None
    wrong = _wrong(m)
    said = _day_numbers(item)
    if not holds_name(said, wrong, ignore_case=True):
        return None
    told = (
        statement
        if "cleared" in m.re.groupindex
        else statement[: m.start("swapped" if swapped else 0)]
    )
    shared = _thing_words(item) & _thing_words(told) - _thing_words(wrong)
    return "corrected: a value said wrongly" if shared else None


@functools.lru_cache(maxsize=STATEMENT_CACHE)
def _wrong_value(text: str) -> re.Match[str] | None:
    """Where a statement ends by calling a name or a number wrong ("Clementine, not Clementina." -> group "wrong"
    "Clementina"), or None."""
    if _DOUBTED.search(text):
        return None
    m = _CORRECTION.search(text)
    if m is not None:
        wrong = m["wrong"]
        return m if _DIGIT.search(wrong) or any(w[0].isupper() for w in wrong.split()) else None
    m = _SWAP.search(text)
    if m is not None:
        # two values of one kind: two days or months, or two numbers
        right, wrong = m["right"], m["swapped"]
        if (_TIME_WORD.match(right) and _TIME_WORD.match(wrong)) or (
            _DIGIT.search(right) and _DIGIT.search(wrong)
        ):
            return m
    if not _ALLERGY.search(text):
        return None
    return _CLEARED.search(text) or _NOT_ALLERGEN.search(text)


def _wrong(m: re.Match[str]) -> str:
    """The value a correction calls wrong, a day's number without its ending ("the 3rd" -> "3")."""
    groups = m.re.groupindex
    wrong = (
        m["wrong"] if "wrong" in groups else m["swapped"] if "swapped" in groups else m["cleared"]
    )
    return re.sub(r"^(\d+)(?:st|nd|rd|th)$", r"\1", wrong, flags=re.IGNORECASE)


def _new_holder(statement: str) -> re.Match[str] | None:
    """Where `statement` says someone new holds a role or runs a thing (groups "role" and "name"), or None."""
    return next((m for m in (p.search(statement) for p in _NEW_HOLDER) if m), None)


_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", _I)


def _day_numbers(text: str) -> str:
    """`text` with each day's number without its ending ("the 3rd of March" -> "the 3 of March")."""
    return _ORDINAL.sub(r"\1", text)


def _holds_old_time(item: str, statement: str) -> bool:
    """Whether `item` gives the old time `statement` names as replaced ("instead of 2 May"), or the statement names
    none: "Dissertation is now due 16 May instead of 2 May" replaces the memory of 2 May, not another of the
    dissertation's dates."""
    m = _OLD_TIME.search(statement)
    if m is None:
        return True
    old = _day_numbers(m["old"]).lower().split()
    said = _day_numbers(item).lower()
    return all(
        re.search(rf"\b{re.escape(w[:3])}", said) for w in old if w not in ("the", "of", "on")
    )


# the old amount a statement names as replaced: "now 2.5 mg instead of 5", "cut from 30mg to 15mg" (not a time or a
# date it changes from: "up to 250 a week from 1 april")
_OLD_AMOUNT = re.compile(
    r"\b(?:instead\s+of|rather\s+than|from|not)\s+(?:the\s+)?[$€£]?(?P<old>\d[\d.,]*)"
    rf"(?![\d.,]*\s*(?:am|pm)\b)(?![\d.,]*(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b)",
    _I,
)


def _holds_old_amount(item: str, statement: str) -> bool:
    """Whether `item` gives the old amount `statement` names as replaced ("instead of 5"), or the statement names
    none: "the afternoon hydrocortisone is now 2.5 mg instead of 5" leaves "I carry an emergency kit, 100 mg
    hydrocortisone" alone."""
    m = _OLD_AMOUNT.search(statement)
    if m is None:
        return True
    old = m["old"].rstrip(".,")
    return re.search(rf"(?<![\d.,]){re.escape(old)}(?![\d]|[.,]\d)", item) is not None


def _amount_clause(statement: str) -> str:
    """The clause of `statement` that gives the new amount: "Guest list is down to 70 now, the new venue is smaller"
    -> "Guest list is down to 70 now" (the venue's deposit did not change)."""
    m = _NEW_AMOUNT.search(statement)
    if m is None:
        return statement
    start = max((statement.rfind(mark, 0, m.start()) for mark in (",", ";", ". ")), default=-1)
    ends = [i for i in (statement.find(mark, m.end()) for mark in (",", ";", ". ")) if i >= 0]
    return statement[start + 1 : min(ends, default=len(statement))]


def _owns(item: str, thing: str) -> bool:
    """Whether `item` speaks of the user's `thing` ("My phone is with Fido", "I keep my notes in Notion"; not "My
    sister's phone"): a word of it, after "my" or "our" or in a statement of the user's."""
    said = _thing_words(thing)
    if not said & _thing_words(item):
        return False
    if _SPEAKER.search(item):
        return True
    return any(
        re.search(rf"\b(?:my|our)\s+(?:[\w-]+\s+){{0,2}}?{re.escape(w)}", item, _I) for w in said
    )


@functools.lru_cache(maxsize=STATEMENT_CACHE)
def _change_kind(text: str) -> str | None:
    """ "time" when `text` says something moved to a new time, "address" to a new address, host or path, "place"
    that someone named moved to a new place, "workplace" that they started at a new one, "venue" that a thing is
    now held at a new place, "provider" that a thing of the user's moved to a new provider, "instead" that a new
    value replaces a named old one (or the user left one named for another), "plan" that the user changed their
    mind on a thing named, "doing" that they do the same thing with another now, "done" that they finished what they
    were doing, "holder" that someone new holds a
    role or runs a thing, "amount" to a new amount, "value" that a thing's value is said as new ("New goal: ..."),
    else None."""
    if _UNSETTLED.search(text):
        # a new goal or plan said as new is settled, whatever it wants: "New goal: I want to run a half marathon"
        return "value" if _NEW_THING.match(text) and not _DOUBTED.search(text) else None
    if (
        _MOVED.search(text)
        or _NOW_AT.search(text)
        or _NOW_DATED.search(text)
        or (_TIME_CHANGED.search(text) and _WHEN.search(text))
    ):
        return "time"
    if _NEW_ADDRESS.search(text):
        return "address"
    if _RELOCATED.match(text):
        return "place"
    if _NEW_WORKPLACE.match(text):
        return "workplace"
    if _new_venue(text) is not None:
        return "venue"
    if _NEW_PROVIDER.search(text):
        return "provider"
    if _INSTEAD.search(text) or _LEFT_FOR.search(text):
        return "instead"
    if _MIND_CHANGED.search(text):
        return "plan"
    if _NOW_DOING.match(text):
        return "doing"
    if _DONE_DOING.search(text):
        return "done"
    if _new_holder(text) is not None:
        return "holder"
    if _NEW_AMOUNT.search(text):
        return "amount"
    return "value" if _NEW_THING.match(text) else None


def _states_own(item: str, thing: str) -> bool:
    """Whether `item` gives the user's own value of `thing`: "My running goal is ...", "our weekly budget: ..."
    (the thing's last word, after up to two others)."""
    last = re.escape(thing.split()[-1])
    return (
        re.search(rf"\b(?:my|our)\s+(?:[\w-]+\s+){{0,2}}?{last}s?\s*(?::|\s(?:is|are)\b)", item, _I)
        is not None
    )


def _new_venue(statement: str) -> re.Match[str] | None:
    return next((m for p in _NEW_VENUE if (m := p.search(statement)) is not None), None)


def who_moved_on(statement: str) -> str | None:
    """The one `statement` says moved or started somewhere new ("Ana" of "Ana started at PwC this week"), or None."""
    moved = _RELOCATED.match(statement) or _NEW_WORKPLACE.match(statement)
    return moved["who"] if moved is not None else None


def tells_of_someone_moving_on(item: str, statement: str) -> bool:
    """Whether `statement` says that someone `item` names moved or started somewhere new ("Ana started at PwC this
    week" of "My wife Ana works at Deloitte"): news of that person, whether or not it ends the item."""
    who = who_moved_on(statement)
    return who is not None and holds_name(item, who, ignore_case=True)


def new_provider(statement: str) -> str | None:
    """The provider the user, or a thing of theirs, moved to, named: "Oakwood Vets" of "We've moved the cat to Oakwood
    Vets", "Parkside Dental" of "We've moved to Parkside Dental"."""
    switched = _NEW_PROVIDER.search(statement) or _MOVED_TO_NAMED.search(statement)
    return switched["name"] if switched is not None else None


def tells_only_of(item: str, statement: str) -> bool:
    """Whether `item` names nothing but what `statement` names (times, amounts and framing aside): "I work from home
    on Fridays" against "My work-from-home day is Wednesday now", while "I live in Leeds and visit Mum on Sundays"
    tells more than "Mum's visits moved to Saturdays"."""
    said = _thing_words(item)
    return bool(said) and said <= _thing_words(statement)


def _thing_words(text: str) -> set[str]:
    """Content words naming what changed, singular and cut to four letters, without values (times, numbers,
    addresses) and framing."""
    bare = TECHNICAL_VALUE.sub(" ", text.lower())
    return {
        _singular(w)[:4] for w in stem_words(bare) if w not in _FRAME and not _TIME_WORD.match(w)
    }


def _singular(word: str) -> str:
    """A plural's "s" off, so "bins" and "bin day" name one thing ("glass" and "bus" keep theirs)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
