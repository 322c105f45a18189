"""A change told in passing, then asked about in a new session: through the provider, the new value is what prefetch
gives first, and the old one, when given, is marked superseded."""

from __future__ import annotations

import json
import re

import pytest

from hermes_bowerbird.provider import BowerbirdProvider


@pytest.fixture
def provider(chat: BowerbirdProvider) -> BowerbirdProvider:
    return chat


@pytest.mark.parametrize(
    ("before", "after", "question", "old", "new"),
    [
        (  # asked in the present tense, not of the user: what holds now
            "We've invited 120 guests to the wedding.",
            "We're at 150 guests now after my mum added her side.",
            "How many people are coming to the wedding?",
            "120",
            "150",
        ),
        (  # a contact's new day ends the slot that held the old one
            "We pay our babysitter Chloe £8 an hour, she comes Tuesdays.",
            "Chloe comes on Wednesdays now.",
            "Which day does the babysitter come?",
            "Tuesdays",
            "Wednesdays",
        ),
        (  # a booking of a place named is kept, and what was left for another ends
            "I booked the Marriott for the Denver conference.",
            "I cancelled the Marriott and booked the Hilton instead.",
            "Which hotel am I staying at in Denver?",
            "booked the Marriott for",
            "Hilton",
        ),
        (
            "My gym is PureGym on Leith Walk.",
            "I quit PureGym and joined the climbing gym at Ratho.",
            "Which gym do I go to?",
            "Leith Walk",
            "Ratho",
        ),
        (  # a value said as new
            "My running goal is a sub-50 10k this year.",
            "New goal: I want to run a half marathon under two hours this year.",
            "What's my running goal?",
            "sub-50",
            "half marathon",
        ),
        (
            "I do yoga with Priti on Saturdays.",
            "Priti moved yoga to Sundays.",
            "When is my yoga class?",
            "Saturdays",
            "Sundays",
        ),
        (  # an allergy said not to be one after all
            "My allergist says I'm allergic to shellfish.",
            "Turns out it's not shellfish, I'm allergic to peanuts.",
            "What am I allergic to?",
            "says I'm allergic to shellfish",
            "peanuts",
        ),
        (  # a drug's new dose ends the old one's slot
            "I take 10mg of lisinopril every morning.",
            "The doctor upped my lisinopril to 20mg.",
            "What dose of lisinopril am I on?",
            "10mg",
            "20mg",
        ),
        (  # a plan, and the user changing their mind on it
            "We're painting the living room dusty blue this weekend.",
            "Changed our minds on the living room, we're going with sage green instead.",
            "What colour are we painting the living room?",
            "dusty blue",
            "sage green",
        ),
        (  # when and where a thing of theirs happens, and its new place
            "The team offsite is in Manchester on the 14th.",
            "Heads up, the offsite moved to Leeds.",
            "Where is the team offsite being held?",
            "Manchester",
            "Leeds",
        ),
        (
            "Bins go out on Tuesday nights here.",
            "The council changed our bin day to Thursday.",
            "Which night do the bins need to go out?",
            "Tuesday",
            "Thursday",
        ),
        (  # a slot's holder that told only the thing and its time
            "I work from home on Fridays.",
            "My work-from-home day is Wednesday now.",
            "Which day am I working from home?",
            "Fridays",
            "Wednesday",
        ),
        (  # a thing traded in for another
            "I drive a 2015 Golf.",
            "Traded the Golf in for a Kia EV6.",
            "What car do I drive?",
            "2015 Golf",
            "Kia",
        ),
        (  # a thing of theirs said without "the", and its new day
            "Choir practice is on Tuesdays at 7.",
            "Choir's moved to Thursdays.",
            "When is choir practice?",
            "Tuesdays",
            "Thursdays",
        ),
        (  # what they were doing, done, and the next one
            "I'm reading Wolf Hall at the moment.",
            "Finished Wolf Hall, I'm on The Mirror and the Light now.",
            "What book am I reading?",
            "reading Wolf Hall",
            "The Mirror and the Light",
        ),
        (  # how the user gets to work, whatever they rode before
            "I ride a Vespa to the office.",
            "Sold the Vespa, I take the bus to work now.",
            "How do I commute?",
            "Vespa to the office",
            "bus",
        ),
        (  # a contact's new holder named after what it is
            "Our landlord is Mr Okoro.",
            "The flat's been sold, our new landlord is a company called Grainger.",
            "Who is our landlord?",
            "Okoro",
            "Grainger",
        ),
        (  # what the user studies, and the language they switched to
            "I'm learning Spanish on Duolingo, 40-day streak so far.",
            "I switched from Spanish to Italian on Duolingo last week.",
            "Which language am I studying at the moment?",
            "learning Spanish",
            "Italian",
        ),
        (
            "I'm learning Spanish on Duolingo.",
            "I'm learning Italian now instead.",
            "Which language am I learning?",
            "Spanish",
            "Italian",
        ),
        (  # a contact's day from now on
            "Our cleaner comes on Thursdays.",
            "The cleaner can only do Mondays from now on.",
            "When does the cleaner come?",
            "Thursdays",
            "Mondays",
        ),
        (  # a new thing done the same way
            "We're watching The Bear on Disney+.",
            "We're watching Slow Horses now.",
            "What show are we watching?",
            "The Bear",
            "Slow Horses",
        ),
        (  # a provider named for the contact's role
            "Our vet is Dr Patel at Meadow Vets.",
            "We've moved the cat to Oakwood Vets, Dr Lewis is lovely.",
            "Which vet practice do we use for the cat?",
            "Meadow",
            "Oakwood",
        ),
    ],
)
def test_the_new_value_comes_first_and_the_old_is_marked(
    provider: BowerbirdProvider, before: str, after: str, question: str, old: str, new: str
) -> None:
    block = _told_then_asked(provider, before, after, question)
    assert new in block
    lines = [line for line in block.splitlines() if old in line]
    assert all("superseded" in line for line in lines), block
    assert all(block.index(new) < block.index(line) for line in lines), block


def test_a_slots_new_value_worded_much_as_the_old_replaces_it(provider: BowerbirdProvider) -> None:
    """'I'm a senior developer at Monzo now' after 'I'm a junior developer at Monzo' (cosine 0.93) is the job's new
    value, not the old one said again: the recall tool gives it first, and the old one never as current."""
    engine = provider.engine
    assert engine is not None
    provider.sync_turn("I'm a junior developer at Monzo.", "Noted.", session_id="s0")
    provider.on_session_switch("s1", reset=True)
    provider.sync_turn(
        "Got promoted! I'm a senior developer at Monzo now.", "Congrats!", session_id="s1"
    )
    assert engine.flush(60)
    found = json.loads(
        provider.handle_tool_call("bowerbird_recall", {"query": "What is my job?", "limit": 5})
    )["results"]
    memories = [r for r in found if r["kind"] == "memory"]
    assert "senior" in memories[0]["content"]
    assert not any("junior" in r["content"] and not r["superseded"] for r in found)


def test_a_memory_that_holds_in_part_is_given_with_what_amended_it(
    provider: BowerbirdProvider,
) -> None:
    """'The doctor switched my atorvastatin to rosuvastatin' leaves 'I take metformin and atorvastatin every
    morning' true of metformin: the old memory is not superseded, and whenever it is given the switch comes too."""
    block = _told_then_asked(
        provider,
        "I take metformin and atorvastatin every morning.",
        "The doctor switched my atorvastatin to rosuvastatin.",
        "Which medicines am I on?",
    )
    assert "metformin" in block and "rosuvastatin" in block, block
    _assert_marked_amended(block, "metformin", "rosuvastatin")


def test_news_of_someone_is_given_with_what_was_said_of_them(provider: BowerbirdProvider) -> None:
    """'My wife Ana works at Deloitte' also says who the wife is, so 'Ana started at PwC this week' cannot end it:
    whenever it is given, the news of her comes too."""
    block = _told_then_asked(
        provider,
        "My wife Ana works at Deloitte.",
        "Ana started at PwC this week.",
        "Where does my wife work?",
        "Congratulations to her!",
    )
    assert "Deloitte" in block and "PwC" in block, block
    _assert_marked_amended(block, "Deloitte", "PwC")


def test_a_move_leaves_the_job_told_with_the_old_home(provider: BowerbirdProvider) -> None:
    """'I live in Leeds and work at Deloitte' is two memories, so moving to York ends the home and not the job."""
    work = _told_then_asked(
        provider,
        "I live in Leeds and work at Deloitte as an accountant.",
        "I moved to York last month.",
        "Where do I work?",
        "Exciting!",
    )
    assert "Deloitte" in work and "superseded" not in work, work
    provider.on_session_switch("s3", reset=True)
    home = provider.prefetch("Where do I live?")
    assert "York" in home and home.index("York") < home.index("Leeds") and "superseded" in home, (
        home
    )


def _told_then_asked(
    provider: BowerbirdProvider, before: str, after: str, question: str, reply: str = "Noted."
) -> str:
    """`before` in a session with a filler turn, `after` in the next, then `question` in a new one: the block."""
    engine = provider.engine
    assert engine is not None
    provider.sync_turn(before, "Noted.", session_id="s0")
    provider.sync_turn("What's a good recipe for banana bread?", "Here is one.", session_id="s0")
    provider.on_session_switch("s1", reset=True)
    provider.sync_turn(after, reply, session_id="s1")
    assert engine.flush(60)
    provider.on_session_switch("s2", reset=True)
    return provider.prefetch(question)


def _assert_marked_amended(block: str, old: str, new: str) -> None:
    """The line holding `old` says which later memory, the one holding `new`, amends it (whatever their order)."""
    lines = block.splitlines()
    amended = next(line for line in lines if old in line)
    later = next(line for line in lines if new in line and line != amended)
    later_id = re.search(r"#(\d+)[,\]]", later)
    assert later_id is not None and f"amended by #{later_id.group(1)}" in amended, block
