"""How the user wants to be answered, asked once for good: "please always speak slowly and simply to me", "always
metric", "I want all my product descriptions in British English, and no emojis".

A request of this kind holds for every later conversation, so it is a preference to keep, while a request for this
turn only ("explain this to me", "write the email in French") is not. It is standing when it says so ("always",
"never", "from now on", "by default", "in future", "every time", "write anything ..."), or when the user says how
they want a kind of thing the assistant writes for them ("I want my recipes in grams").
"""

from __future__ import annotations

import re

from ..vocabulary import BACK_TO_LANGUAGE

_I = re.IGNORECASE
_PLEASE = r"(?:please\s+|pls\s+|kindly\s+)?"
_FOR_GOOD = (
    r"(?:always|never|from\s+now\s+on|going\s+forward|in\s+future|by\s+default|every\s+time)"
)
# what the assistant does when it answers (not "give", "keep" or "check": "never give up" is no request)
_ANSWERING = (
    r"(?:use|write|answer|reply|respond|speak|talk|format|spell|explain|address|suggest|recommend|include|list"
    r"|mention|cite|round|convert|sign|call\s+me|give\s+me|show\s+me|keep\s+(?:it|answers|replies)|cc|bcc|copy\s+in)"
)
# ...or does for the user, told with "always" or "never" first: "always pick an aisle seat", "never book me on a
# flight before 10am" (not "order pizza for tonight, never mind")
_SERVING = r"(?:pick|choose|book|reserve|order|schedule|buy|get\s+me)"
# what may open a rule: "pls remember: always ...", "ground rules: never ...", "you can go back to english now"
_RULE_OPENING = re.compile(
    r"^(?:(?:and|also|oh|so|plus|btw|ok|okay)[\s,]+)*"
    r"(?:(?:(?:please\s+|pls\s+)?(?:remember|note|fyi)(?:\s+that)?|(?:ground\s+|house\s+|my\s+|the\s+)?rules?"
    r"|(?:one\s+)?more\s+thing|first\s+thing|one\s+thing|important)\s*[:,-]\s*|you\s+can\s+(?=go\s+back|switch))?",
    _I,
)
# the kinds of thing the assistant writes for the user
_WRITINGS = (
    r"(?:answers?|replies|responses|descriptions?|recipes?|emails?|code|docs?|documents?|summaries|summary|"
    r"messages?|texts?|measurements?|units?|explanations?|listings?|dates?|times?|examples?|suggestions?|"
    r"instructions?|translations?|notes|posts?|captions?|letters?|reports?|prices?|amounts?|temperatures?)"
)
# the units and conventions an answer is given in
_UNITS = (
    r"(?:metric|imperial|celsius|fahrenheit|centigrade|kilos?|kg|pounds|lbs|miles|km|kilometres|kilometers|"
    r"24[ -]hour|12[ -]hour|british|american|us|uk|australian)"
)
_STANDING = re.compile(
    # "always metric", "please always speak slowly and simply to me", "from now on, answer in Spanish"
    rf"^{_PLEASE}{_FOR_GOOD},?\s+{_PLEASE}(?:(?:\w+\s+)?(?:{_ANSWERING}|{_SERVING})\b|(?:in\s+)?{_UNITS}\b)"
    # "answer in Spanish from now on", "use British spelling by default"
    rf"|^{_PLEASE}{_ANSWERING}\b[^?]*\b{_FOR_GOOD}\b"
    # "write anything for me in British English": whatever it is, from now on
    rf"|^{_PLEASE}{_ANSWERING}\s+(?:anything|everything)\b"
    # "when you explain me something, use simple words": whenever it comes up
    rf"|^{_PLEASE}(?:when(?:ever)?|if)\s+you\s+{_ANSWERING}\b[^,.;]*,\s*{_PLEASE}(?:{_ANSWERING}|don['’]?t|do\s+not"
    r"|never|always|no)\b"
    # "keep replies short, bullet points, no essays"
    r"|^(?:please\s+|pls\s+)?keep\s+(?:your\s+|all\s+)?(?:answers|replies|responses|messages|explanations)\s+"
    r"(?:short|brief|simple|concise|casual|formal|plain|to\s+the\s+point|(?:under|below|within)\s+\d+\s+words)\b"
    # "give me summaries as bullet points, not paragraphs": a kind of writing, said in the plural, and how
    rf"|^{_PLEASE}(?:give|send|write|show)\s+me\s+(?:(?:your|the)\s+)?(?:\w+\s+)?(?:answers|replies|responses|"
    r"summaries|recipes|emails|explanations|prices|amounts|measurements|dates|times|examples)\s+(?:as|in|with|without|"
    r"under)\b"
    # "any chart you suggest must avoid red/green"
    r"|^(?:any|every|all)\s+(?:\w+\s+)?\w+\s+you\s+(?:suggest|write|make|give|recommend|draw|create|draft|send)\s+"
    r"(?:must|should|has\s+to|have\s+to|needs?\s+to)\b"
    # "go back to english now" (not "go back to sleep")
    rf"|^{BACK_TO_LANGUAGE}"
    # "use celsius pls", "stop using emojis in ur answers"
    rf"|^{_PLEASE}use\s+{_UNITS}\b|^{_PLEASE}(?:stop|quit)\s+(?:using|adding|putting|saying|writing|calling\s+me)\b"
    # "I want all my product descriptions in British English", "I'd like recipes in grams, not cups"
    rf"|^(?:i|we)\s+(?:want|need|prefer|['’]d\s+like|would\s+like|like)\s+(?:all\s+)?(?:of\s+)?"
    rf"(?:(?:my|our|the|your)\s+)?(?:\w+\s+){{0,2}}?{_WRITINGS}\s+(?:in|to\s+be|with|without|as)\b",
    _I,
)
_LEADING_PLEASE = re.compile(rf"^{_PLEASE}", _I)


def standing_request(sentence: str) -> str | None:
    """The request as the user put it, without "please", when `sentence` asks how to be answered for good; None
    otherwise (a question or a request for this turn only)."""
    sentence = _RULE_OPENING.sub("", sentence.strip())
    if sentence.rstrip().endswith("?") or not _STANDING.match(sentence):
        return None
    request = _LEADING_PLEASE.sub("", sentence).strip()
    return f"{request[0].upper()}{request[1:]}" if request else None
