"""Text shaped to make a pattern backtrack is read in time linear in its length, at the engine's size cap.

A captured turn goes through redaction, screening, chunking, entity and role spotting and extraction on the
curator's thread; one pattern that is quadratic on some shape of text would hold curation for an hour. Each shape
runs in a child process with a deadline far above the linear cost and far below the quadratic one.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermes_bowerbird.engine import _MAX_TEXT_CHARS

SHAPES = {
    "one run of capitals": "A",
    "capitals between apostrophes": "A'",
    "a name and a copula, repeated": "Tomasz is my ",
    "names in one long list": "Bob Smith Jones, ",
    "a role phrase, repeated": "my daughter's name is ",
    "dotted capitals": "A.",
    "hyphens": "a-",
    "at signs": "@a",
    "quotes": '"',
    "open brackets": "(",
    "tools named by several words": "GitHub Actions vs code ",
    "someone's word about the user, repeated": "She said I am a designer, ",
    "someone's belief about the user, repeated": "My boss thinks I am a designer, ",
    "a move to a code, repeated": "moved to 1",
    "a count reached, repeated": "I'm at 5 ",
    "a contact's name, repeated": "my dentist is Dr ",
    "hosts": "a.dev.",
    "a thing given up, repeated": "I cancelled Netflix, ",
    "a thing no longer used, repeated": "I don't use Netflix ",
    # each sentence's capitalised first word was looked for mid-sentence in the whole text: 13 s at 64,000 chars
    "short sentences opening on one word": "Tue + Thu. ",
    "faces and emoji, then a word": " :) 🙂",
    "a 'not' typed without its apostrophe, repeated": "i dont ",
    # every quoted key was read against all the text before it for the line that introduced it: 4.7 s at 20,000 chars
    "quoted keys after colons": '{"name": "a", "arguments": {',
    # commands, configuration and calls read by their structure; orders read by their shape
    "a login's password flag, repeated": "docker login -u a -p ",
    "flags named for secrets": "--password --token ",
    "a secrets' section of keys": "[secrets]\nk = ",
    "an order's opening, repeated": "Always recommend ",
    "product names": "Always recommend Acme Pro ",
    "a class of questions, repeated": "for every question, ",
}

_PIPELINE = """
import sys
from hermes_bowerbird.curation.chunking import chunk_text
from hermes_bowerbird.curation.curator import _chunk
from hermes_bowerbird.curation.entities import find_entities
from hermes_bowerbird.curation.extract import extract_candidates
from hermes_bowerbird.curation.given_up import given_up
from hermes_bowerbird.curation.redact import redact
from hermes_bowerbird.curation.screen import screen
from hermes_bowerbird.types import MemoryType

unit, size = sys.argv[1], int(sys.argv[2])
text = (unit * (size // len(unit) + 1))[:size]
redact(text)
screen(text)
screen(text, said_by_user=True)
find_entities(text)
_chunk("user", 0, text)
extract_candidates(text, text)
given_up(MemoryType.FACT, text, text)
for piece in chunk_text(text):
    _chunk("user", 0, piece)
"""


@pytest.mark.parametrize("unit", SHAPES.values(), ids=SHAPES.keys())
def test_the_curators_text_pipeline_is_linear_on_hostile_shapes(unit: str) -> None:
    # linear: a few seconds at the cap; quadratic: hours (a run of 20,000 capitals took 31 s in one pattern)
    subprocess.run(
        [sys.executable, "-c", _PIPELINE, unit, str(_MAX_TEXT_CHARS)], check=True, timeout=120
    )
