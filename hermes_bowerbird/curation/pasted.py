"""What a user pasted into a turn, as opposed to what they said themselves.

Users paste emails, letters, notes, chat logs, web pages and tool output and ask for help with them. The first-person
sentences in those are someone else's ("Hello, my name is Farida Sokolov and I'm the property manager", "Yara: I'm on
holiday from 20 Jan"): learnt as the user's, they would answer "what's my name?" with the letting agent's. Memories
are learnt from the user's own words only (`own_words`); the turn keeps its whole text as an episode, so what was
pasted can still be found, and the screen still reads all of it.

Four shapes are someone else's text:
- a fenced block (code, a log, tool output: "can't ssh into the bastion:\n```\nssh: connect to host ...```") and
  lines quoted as a reply quotes an email ("> Dear Mr. Rezaei,");
- what follows a line that introduces another's text and hands it over: "here's the email from my landlord:", "can
  you summarise these standup notes?", "Farida replied with this:" (not the user's own: "here's my update:", nor a
  line that only tells of it: "Got the results back today.");
- a quoted passage that holds more than one sentence, that a line introducing another's text opens with a colon
  ("found this on a blog: \"I've kept bees for forty years ...\""), or that stands as a line of its own; a title or
  a short quote inside a sentence is left to `sentences.own_words` ("I've finished three audiobooks: \"Daring
  Greatly\", ...");
- a chat line where someone named speaks in the first person, stamped with a time or among the lines of another
  speaker ("[09:14] Sunita Raghavan: I'm vegan since last year!", "Yara: I finished the export" above "Owain: I'm
  blocked"); one labelled line is a note of the user's ("Errands: picked up Sofia's telescope").
"""

from __future__ import annotations

import re

_I = re.IGNORECASE

# a text of someone else's, named as people name what they paste
_TEXTS = (
    r"e-?mails?|messages?|notes|chat|chats|texts?|letters?|logs?|output|page|blog|posts?|comments?|reviews?|"
    r"replies|reply|summary|documents?|docs?|export|thread|transcript|minutes|report|article|snippet|statement|"
    r"notice|invoice|contract|listing|advert|ad|announcement|newsletter|memo|bulletin|feedback|screenshot|"
    r"discharge summary|results?|abstract|paper|pdf|excerpt|passage|extract|section|paragraph|essay|story|poem|"
    r"lyrics|script|tweet|description|readme|form|survey|search results?|listing"
)
# ...introduced as someone else's: "the email", "this letter", "these notes", "his message", "Ngozi's comment", or
# sent by someone ("my landlord sent me this", "Farida replied with this", "found this on a blog")
_INTRODUCES = re.compile(
    rf"\b(?:the|this|these|that|those|his|her|their|its|a|an|(?-i:[A-Z])\w+['’]s)\s+(?:[\w-]+\s+){{0,3}}?"
    rf"(?:{_TEXTS})\b|"
    r"\b(?:sent|forwarded|wrote|replied|posted|emailed|texted|messaged|shared)\b[^.!?\n]{0,40}\b(?:this|these|"
    r"that|below|the following)\b|"
    r"\bfound\s+(?:this|these)\b|\bhere(?:['’]s| is| are)\s+what\b[^.!?\n]{0,40}\b(?:wrote|said|says|sent|replied|"
    r"posted)\b|"
    r"\b(?:pasted|pasting|paste|copied|copy-pasted)\b|"
    # "got this from 'IT', is it real?", "received this today"
    r"\b(?:got|received|getting)\s+this\b",
    _I,
)
# ...and hands it over: the line ends with a colon or says it follows (or, see `_after_introduced`, asks about it
# with the text a paragraph below)
_HANDS_OVER = re.compile(r":\s*$|\b(?:below|pasted|pasting|paste|the following)\b", _I)
# ...but not the user's own: "here's my update:", "my notes from today:"
_OWN_TEXT = re.compile(rf"\bmy\s+(?:[\w-]+\s+){{0,2}}?(?:{_TEXTS}|update|list|plan|todos?)\b", _I)

# quoted passages: "...", “...”, and '...' (a closing ' is never followed by a letter, as in "I'm")
_QUOTED = re.compile(
    r"\"[^\"]{1,6000}\"|“[^”]{1,6000}”|(?<![\w'’])'(?=[A-Za-z0-9\"(\[])(?:[^']|'(?=[A-Za-z]))"
    r"{1,6000}?(?<=[\w.!?,;:)\]])'(?![A-Za-z0-9])",
)
_SENTENCE_INSIDE = re.compile(r"[.!?]\s+\S")
# a quote this long holding a sentence's end is a passage, not a title ("Sgt. Pepper's Lonely Hearts Club Band")
_PASSAGE_WORDS = 8
# a quote a colon opens ("found this: '...'"), or that stands as a line of its own, maybe signed ("\"...\" - posted by
# OldDroneHarold")
_LINE_END = re.compile(r"\s*(?:$|\n|[-–—]\s)")
# how far back on its line a quote's introduction is read ("found this on a blog: ..."): a line of a thousand quotes
# costs no more than its length
_INTRO_CHARS = 400

# a fenced block (tool output, code, a log) and lines quoted as a reply quotes an email ("> Dear Mr. Rezaei,")
_FENCED = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_QUOTED_LINES = re.compile(r"^[ \t]*>[^\n]*(?:\n|\Z)", re.MULTILINE)
# "[09:14] Sunita Raghavan: I'm vegan", "Yara: I finished", "- Owain: I'm blocked"
_CHAT_LINE = re.compile(
    r"^[ \t]*(?:[-*•>][ \t]*)?(?P<stamp>\[?\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:\s?[ap]m)?\]?[ \t,-]*)?"
    r"(?P<who>(?-i:[A-Z])[\w'’.-]*(?:[ \t]+(?-i:[A-Z])[\w'’.-]*){0,2})[ \t]*(?:\([^)\n]{0,30}\))?[ \t]*:"
    r"[ \t]+(?P<said>\S[^\n]*)$",
    re.MULTILINE,
)
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i’m|im|i've|i’ve|i'd|i’d|i'll|i’ll|me|my|we|we're|we’re|our)\b", _I
)
# what a line may be labelled with that is no one speaking: a form's or a note's labels, days, months, roles
_LABELS = frozenset(
    re.findall(
        r"[\w.'’]+",
        "note notes nb ps p.s. actions action ideas idea subject from to re fwd fw date sent cc bcc update updates "
        "todo todos goal goals reminder important edit summary standup agenda warning error errors tests test q a "
        "me i myself boss manager kid kids son daughter wife husband partner address rent budget weight car work "
        "job school gym shift shifts dentist doctor gp vet allergic allergies allergy diet tip tips step steps "
        "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
        "today tonight tomorrow yesterday morning afternoon evening "
        "january february march april may june july august september october november december jan feb mar apr "
        "jun jul aug sep sept oct nov dec "
        "pros cons plan option options answer question result results total status next now later done "
        "fixed problem issue bug cause fix solution example usage name email phone mobile",
    )
)


def own_words(text: str) -> str:
    """`text` without what the user pasted (see the module's docstring): "" when the whole of it was."""
    text = _QUOTED_LINES.sub("", _FENCED.sub("", text))
    text = _after_introduced(text)
    text = _QUOTED.sub(lambda m: _quote_kept(text, m), text)
    speakers = {
        m["who"].lower() for m in _CHAT_LINE.finditer(text) if _speaks(m) and not m["stamp"]
    }
    # a log of two or more speakers, or lines stamped with a time: one labelled line is a note ("Errands: ...")
    return _CHAT_LINE.sub(
        lambda m: "" if _speaks(m) and (m["stamp"] or len(speakers) > 1) else m.group(), text
    ).strip()


def _after_introduced(text: str) -> str:
    """The text up to the line that introduces someone else's text, when more lines follow it."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        if (
            any(rest.strip() for rest in lines[i + 1 :])
            and _INTRODUCES.search(line)
            and not _OWN_TEXT.search(line)
            and (
                _HANDS_OVER.search(line)
                or (line.rstrip().endswith("?") and not lines[i + 1].strip())
            )
        ):
            return "\n".join(lines[: i + 1])
    return text


def _quote_kept(text: str, m: re.Match[str]) -> str:
    start, inner = m.start(), m.group()[1:-1]
    line = text[max(text.rfind("\n", 0, start) + 1, start - _INTRO_CHARS) : start]
    if (
        (_SENTENCE_INSIDE.search(inner) and len(inner.split()) >= _PASSAGE_WORDS)
        or (_opened_by_colon(text, start) and _INTRODUCES.search(line))
        or (_opens_line(text, start) and _LINE_END.match(text, m.end()))
    ):
        return ""
    return m.group()


def _opened_by_colon(text: str, position: int) -> bool:
    """Whether the last character before `position` that is not whitespace is a colon."""
    i = position - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i >= 0 and text[i] == ":"


def _opens_line(text: str, position: int) -> bool:
    """Whether only spaces stand between the start of `position`'s line and it."""
    i = position - 1
    while i >= 0 and text[i].isspace() and text[i] != "\n":
        i -= 1
    return i < 0 or text[i] == "\n"


def _speaks(m: re.Match[str]) -> bool:
    """Whether a labelled line is someone named speaking in the first person (not a label of a note or a form)."""
    who = m["who"].lower()
    if who.split()[0].rstrip(".") in _LABELS or who in _LABELS:
        return False
    return bool(m["stamp"]) or _FIRST_PERSON.search(m["said"]) is not None
