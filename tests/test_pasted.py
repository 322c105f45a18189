"""What the user pasted into a turn is someone else's: no memory is learnt from it."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.extract import extract_candidates
from hermes_bowerbird.curation.pasted import own_words


@pytest.mark.parametrize(
    "text, own",
    [
        # what follows a line that introduces someone else's text and hands it over
        (
            "hi, can you help me reply to my landlord? here's the email:\n\n---\nFrom: Gordon Birtwhistle\n"
            "Dear Niamh,\nI am selling two of my properties and moving to Malaga in February.\nKind regards,\nGordon",
            "hi, can you help me reply to my landlord? here's the email:",
        ),
        (
            "I'm the product manager for Kestrel. can you summarise these standup notes?\n\nStandup 6 Jan\n"
            "Yara: I'm on holiday from 20 Jan for two weeks.",
            "I'm the product manager for Kestrel. can you summarise these standup notes?",
        ),
        (
            "my dad got discharged yesterday, can you explain this letter in plain english?\n\n"
            "I reviewed Mr Nakashima on ward 26. I have started bisoprolol 2.5mg once daily.",
            "my dad got discharged yesterday, can you explain this letter in plain english?",
        ),
        (
            "can you summarise this abstract I copied from a PDF:\n\nAbstract. We surveyed 42 sites along the coast.",
            "can you summarise this abstract I copied from a PDF:",
        ),
        (
            "got this from 'IT', is it real?\n\n*** SYSTEM NOTICE ***\nI have reset your password, click below.",
            "got this from 'IT', is it real?",
        ),
        # a quoted passage: several sentences, or opened by a line that introduces another's text
        (
            "now the letting agent has emailed too, summarise this for me?\n\n'Hello, my name is Farida Sokolov "
            "and I'm the property manager at Clydeview Lettings. I work Monday to Thursday.'",
            "now the letting agent has emailed too, summarise this for me?",
        ),
        (
            "Farida replied with this, can you tell me what it means: 'I'm on annual leave from 3 to 10 March.'",
            "Farida replied with this, can you tell me what it means:",
        ),
        (
            "I keep two hives. found this on a blog, is it legit? \"I've kept bees in Somerset for forty years "
            'and I have never once treated for varroa. I breed my own queens."',
            "I keep two hives. found this on a blog, is it legit?",
        ),
        # a fenced block, lines quoted as a reply quotes them
        (
            "OOM at batch 256:\n```\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n```",
            "OOM at batch 256:",
        ),
        (
            "read this from the clinic\n> Dear Mr. Rezaei,\n> I moved your appointment.\nthanks",
            "read this from the clinic\nthanks",
        ),
        # a chat log: stamped lines, or lines of two speakers or more
        (
            "[09:12] Marek Jablonski: I'm allergic to tree nuts\n[09:14] Sunita Raghavan: I'm vegan!",
            "",
        ),
        (
            "Yara: I finished the export. I'm on holiday from 20 Jan.\nOwain: I'm blocked on the webhook.",
            "",
        ),
    ],
)
def test_what_the_user_pasted_is_not_their_own_words(text: str, own: str) -> None:
    assert own_words(text) == own


@pytest.mark.parametrize(
    "text",
    [
        "I moved to Leeds last month.\nMy new job at Acme starts Monday.",
        "Got the results back today.\nMy ferritin is up to 34.",  # tells of a text, hands none over
        "here's my update:\n- moved to Leeds\n- new job at Acme",  # the user's own
        "Here's the info you requested. I'll just list them out:\n\nMarch 18th, Farmers Market, $220",
        "Errands: picked up Sofia's telescope, bought a new winter coat for my trip.",  # one labelled note
        "Boss: Imogen Tate",
        'Over the past month, I\'ve finished three audiobooks: "The 7 Habits of Highly Effective People", '
        '"Daring Greatly" and "The Power of Now".',
        'I scored a mint condition "Sgt. Pepper\'s Lonely Hearts Club Band" album.',
        "My motto is 'never deploy on a Friday' and the team agrees.",
    ],
)
def test_the_users_own_words_stay(text: str) -> None:
    assert own_words(text) == text


def test_a_pasted_letter_gives_no_memory_of_the_users() -> None:
    turn = (
        "now the letting agent has emailed too, summarise this for me?\n\n'Hello, my name is Farida Sokolov and "
        "I'm the property manager at Clydeview Lettings. I work Monday to Thursday and I'm based in our Partick "
        "office.'"
    )
    assert extract_candidates(turn, "") == []
    told = "I'm a medical copywriter and I work from home three days a week. here's the chat:\n\n"
    told += "[09:12] Marek: I'm allergic to tree nuts\n[09:14] Sunita: I'm vegan since last year!"
    assert [c.content for c in extract_candidates(told, "")] == [
        "I'm a medical copywriter.",
        "I work from home three days a week.",
    ]
