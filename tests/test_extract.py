"""Heuristic extraction: types, subjects for superseding facts, importance, and a persona replay."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from hermes_bowerbird.curation.extract import _detail_fragment, extract_candidates, subject_of
from hermes_bowerbird.curation.noise import is_noise
from hermes_bowerbird.types import DEFAULT_IMPORTANCE, Candidate, MemoryType

PERSONA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "persona"


def _single(user: str, assistant: str = "") -> Candidate:
    found = extract_candidates(user, assistant)
    assert len(found) >= 1, found
    return found[0]


@pytest.mark.parametrize(
    "user, mtype",
    [
        ("My name is Ada Lovelace.", MemoryType.IDENTITY),
        ("I work as a nurse at Porto General.", MemoryType.IDENTITY),
        ("I live in Porto with my two cats.", MemoryType.IDENTITY),
        ("I prefer dark roast coffee in the morning.", MemoryType.PREFERENCE),
        ("I never schedule deploys on Fridays.", MemoryType.PREFERENCE),
        ("I hate cilantro.", MemoryType.PREFERENCE),  # short, but of a thing named
        ("I personally love cilantro, I put it on everything.", MemoryType.PREFERENCE),
        ("I'm scared of heights, so no via ferrata for me.", MemoryType.PREFERENCE),
        ("I only drink oat milk these days.", MemoryType.PREFERENCE),
        ("I'm red-green colourblind, so charts need blue and orange.", MemoryType.IDENTITY),
        ("Hot weather and skipping lunch make me dizzy.", MemoryType.FACT),
        ("Things that set me off: popcorn, raw salad and ibuprofen.", MemoryType.FACT),
        ("My flatmate Lotte has Dr Pascoe too but her deadline is 1 September.", MemoryType.FACT),
        ("I want to run a marathon before I turn 40.", MemoryType.GOAL),
        ("My goal is to ship the beta by March.", MemoryType.GOAL),
        ("We decided to use Postgres for the billing service.", MemoryType.DECISION),
        ("Let's go with the blue logo for the landing page.", MemoryType.DECISION),
        ("Remind me to renew the passport next month.", MemoryType.TODO),
        ("I need to call the landlord about the broken heater.", MemoryType.TODO),
        ("To deploy the app, run make release from the repo root.", MemoryType.PROCEDURE),
        ("Yesterday I went hiking in Sintra with Marta.", MemoryType.EVENT),
        ("Our office in Berlin has 40 desks and a rooftop garden.", MemoryType.FACT),
        # a value asked back, no task; what happens to the user, no liking
        ("The spare key is with Mrs Patel next door, remind me if I forget.", MemoryType.FACT),
        ("My health number is 123 456 789, I always forget it.", MemoryType.FACT),
        ("The spare key is with Mrs Patel next door, dont let me forget it", MemoryType.FACT),
        ("Don't let me forget the vet appointment for Biscuit on Friday.", MemoryType.TODO),
    ],
)
def test_user_statement_types(user: str, mtype: MemoryType) -> None:
    candidate = _single(user)
    assert candidate.type is mtype
    assert candidate.role == "user"
    assert 0.0 <= candidate.importance <= 1.0


@pytest.mark.parametrize(
    "user",
    [
        "What time does the store close?",
        "Can you explain how solar panels work?",
        "Thanks, that was helpful.",
        "ok",
        "Hey there!",
        "Would you rather live in Porto or Lisbon?",
        "What if I moved to Berlin?",
        "I love it!",  # a liking of nothing named
        # what someone says of what the question asked
        "Is oatmeal bad for diabetics? my neighbor Bill says it is",
    ],
)
def test_questions_and_noise_give_nothing(user: str) -> None:
    assert extract_candidates(user, "Sure, here is an answer for you.") == []


@pytest.mark.parametrize(
    "first, second, subject",
    [
        ("I live in Porto.", "I moved to Lisbon last month.", "user:residence"),
        ("We live in Chicago, near the lake.", "We just moved to Denver!", "user:residence"),
        ("I work at Acme Corp as a tester.", "I just joined Globex.", "user:employer"),
        ("I'm a software engineer.", "I'm now a product manager at a startup.", "user:job"),
        ("I'm vegetarian.", "I've decided to go fully vegan.", "user:diet"),
        ("My wife Ana is a doctor.", "We're getting divorced.", "user:relationship"),
        ("I'm 34 years old.", "I just turned 35.", "user:age"),
        (
            "My favourite band is Radiohead.",
            "My favorite band is Wilco these days.",
            "user:favourite:band",
        ),
        ("We deploy with Heroku.", "We'll deploy on Fly.io from now on.", "project:deploy-tool"),
        ("We use MySQL for the app.", "We switched to Postgres last week.", "project:database"),
        ("My dog Rex loves the beach.", "We adopted a dog named Luna.", "user:pet:dog"),
        (
            "My accountant is Marco Bellini.",
            "I switched accountants, it's now Julia Weber.",
            "user:contact:accountant",
        ),
    ],
)
def test_changing_facts_share_a_subject(first: str, second: str, subject: str) -> None:
    assert subject_of(first) == subject
    assert subject_of(second) == subject
    assert any(c.subject == subject for c in extract_candidates(second, ""))


@pytest.mark.parametrize(
    "sentence",
    [
        "She said she lives in Boston now.",
        "My brother moved to Lisbon.",
        "The house will be mostly vegan but the kids can eat what they want.",
        "We live in boxes until the movers come.",
        "He is 41 and works at Acme.",
    ],
)
def test_statements_about_others_have_no_user_subject(sentence: str) -> None:
    subject = subject_of(sentence)
    assert subject is None or not subject.startswith("user:")


@pytest.mark.parametrize(
    "user, kept",
    [
        ("Jordan's birthday is on June 3rd.", True),
        ("Tess's new flat is in Hackney.", True),
        ("Lina's teacher is Mrs. Berg.", True),
        ("Google's new model is great.", False),  # no value told
        ("What's Jordan's birthday?", False),
    ],
)
def test_what_the_user_tells_of_someone_by_name_is_a_fact(user: str, kept: bool) -> None:
    found = extract_candidates(user, "Noted.")
    assert [(c.type, c.content) for c in found] == ([(MemoryType.FACT, user)] if kept else [])


@pytest.mark.parametrize(
    "user, mtype",
    [
        ("Staging lives at staging.acme.dev.", MemoryType.FACT),
        ("Prod DB is db-prod-1.internal.", MemoryType.FACT),
        # a value of the user's own, named, though the name is no person's
        ("My bank is Barclays.", MemoryType.FACT),
        ("Our product is Lattice.", MemoryType.FACT),
        ("The VPN config is in ~/vpn/client.ovpn.", MemoryType.FACT),
        ("To deploy, run make deploy-prod from the infra repo.", MemoryType.PROCEDURE),
    ],
)
def test_a_short_statement_of_an_address_a_path_or_a_way_is_kept(
    user: str, mtype: MemoryType
) -> None:
    assert [(c.type, c.content) for c in extract_candidates(user, "Noted.")] == [(mtype, user)]


def test_importance_follows_signals() -> None:
    plain = _single("I prefer tea over coffee.")
    explicit = _single("Remember that I prefer tea over coffee, always.")
    assert plain.importance == pytest.approx(DEFAULT_IMPORTANCE[MemoryType.PREFERENCE])
    assert explicit.importance > plain.importance
    assert explicit.confidence > plain.confidence
    hedged = _single("I think I might want to learn Rust this year maybe.")
    assert hedged.importance < DEFAULT_IMPORTANCE[MemoryType.GOAL] + 0.1


def test_entities_are_attached() -> None:
    candidate = _single("I moved to Lisbon with my partner Joana.")
    assert {"Lisbon", "Joana"} <= set(candidate.entities)


def test_relative_dates_are_anchored_when_now_is_given() -> None:
    now = 1_700_000_000.0  # 2023-11-14 UTC
    candidate = _single("Yesterday I signed the lease for the new studio in Braga.")
    dated = extract_candidates(
        "Yesterday I signed the lease for the new studio in Braga.", "", now=now
    )[0]
    assert candidate.type is MemoryType.EVENT
    assert "2023-11-13" in dated.content


@pytest.mark.parametrize(
    "user, date",
    [
        (
            "I have a vet appointment for my dog Biscuit tomorrow at 9.",
            "(2023-11-15)",
        ),  # not an event
        ("I need to call the plumber tomorrow morning.", "(2023-11-15)"),
        ("My sister Ines is visiting from Lisbon next week.", "(around 2023-11-21)"),
        ("I'm vegetarian since last week.", "(around 2023-11-07)"),
        ("I switched to VS Code last month.", "(October 2023)"),
        ("My sister Ines is visiting from Lisbon next month.", "(December 2023)"),
    ],
)
def test_relative_days_are_anchored_whatever_the_memory(user: str, date: str) -> None:
    now = 1_700_000_000.0  # 2023-11-14 UTC
    (found,) = extract_candidates(user, "", now=now)
    assert found.content.endswith(date)


def test_assistant_conclusions_but_not_chit_chat() -> None:
    assistant = (
        "Great question! To summarise, we decided to keep Redis for the job queue. "
        "The fix is to raise the connection pool to 50. How does that sound?"
    )
    found = extract_candidates("", assistant)
    assert {c.role for c in found} == {"assistant"}
    assert any("Redis" in c.content and c.type is MemoryType.DECISION for c in found)
    assert not any(c.content.startswith("Great question") for c in found)
    assert extract_candidates("", "Nice to meet you! Feel free to come back anytime.") == []


def test_assistant_numbered_steps_become_a_procedure() -> None:
    assistant = (
        "To release a new version:\n1. Run `make test`.\n2. Bump the version in pyproject.toml.\n"
        "3. Run `git tag v1.2.3` and push the tag."
    )
    procedures = [c for c in extract_candidates("", assistant) if c.type is MemoryType.PROCEDURE]
    assert len(procedures) == 1
    assert "git tag" in procedures[0].content and "To release" in procedures[0].content


def test_candidates_are_unique() -> None:
    found = extract_candidates("I live in Porto. I live in Porto.", "")
    assert len(found) == 1


# ------------------------------------------------------------------ persona replay

_STOP = {
    "the",
    "and",
    "with",
    "for",
    "from",
    "near",
    "at",
    "a",
    "an",
    "of",
    "in",
    "to",
    "on",
    "his",
    "her",
    "uses",
    "works",
}


def _stems(phrase: str) -> list[str]:
    return [
        w[:5]
        for w in re.findall(r"[a-z0-9]+", phrase.lower())
        if (len(w) >= 3 or w.isdigit()) and w not in _STOP
    ]


def _phrases(value: object) -> list[list[str]]:
    items = value if isinstance(value, list) else [value]
    phrases = [_stems(p) for item in items for p in re.split(r"[,;()]", str(item))]
    return [p for p in phrases if p]


def _matches(value: object, content: str) -> bool:
    have = set(_stems(content))
    for stems in _phrases(value):
        need = max(1, math.ceil(0.6 * len(stems)))
        if sum(s in have for s in stems) >= need:
            return True
    return False


def _replay() -> tuple[dict[str, object], list[tuple[int, Candidate]]]:
    truth_path, conv_path = PERSONA / "ground_truth.json", PERSONA / "conversations.jsonl"
    if not (truth_path.exists() and conv_path.exists()):
        pytest.skip("persona data not available")
    rows = [json.loads(line) for line in conv_path.read_text().splitlines() if line.strip()]
    rows.sort(key=lambda r: (r["timestamp"], r["message_id"]))
    found = [
        (r["message_id"], c)
        for r in rows
        if r["role"] == "user"
        for c in extract_candidates(r["content"], "")
    ]
    return json.loads(truth_path.read_text()), found


def test_persona_final_profile_facts_get_candidates() -> None:
    truth, found = _replay()
    profile = truth["final_profile"]
    assert isinstance(profile, dict)
    covered = [
        name
        for name, fact in profile.items()
        if any(_matches(fact["value"], c.content) for _, c in found)
    ]
    print(
        f"final_profile facts with a candidate: {len(covered)}/{len(profile)} (candidates: {len(found)})"
    )
    assert len(covered) >= 14


_FACT_SUBJECT = {
    "occupation": "user:job",
    "city": "user:residence",
    "relationship_status": "user:relationship",
    "diet": "user:diet",
}


def test_persona_changes_give_same_subject_candidates() -> None:
    truth, found = _replay()
    changes = truth["changes"]
    assert isinstance(changes, list)
    hits = 0
    for i, change in enumerate(changes):
        subject = _FACT_SUBJECT[change["fact"]]
        later = [c["changed_around_msg"] for c in changes[i + 1 :] if c["fact"] == change["fact"]]
        earlier = [c["changed_around_msg"] for c in changes[:i] if c["fact"] == change["fact"]]
        old_lo, new_lo, new_hi = (
            max(earlier, default=0),
            min(change["key_messages"]),
            min(later, default=10**9),
        )
        old = any(
            c.subject == subject for mid, c in found if old_lo <= mid < change["changed_around_msg"]
        )
        new = any(c.subject == subject for mid, c in found if new_lo <= mid < new_hi)
        hits += old and new
    print(f"changes with same-subject candidates for old and new value: {hits}/{len(changes)}")
    assert hits >= 5


# ------------------------------------------------------------------ memories that stand on their own


def _contents(user: str) -> list[str]:
    return [c.content for c in extract_candidates(user, "")]


def test_a_compound_turn_becomes_separate_memories() -> None:
    found = extract_candidates(
        "Hi, I'm Ada Lovelace. I always deploy with Ansible, and we never deploy on Fridays.", ""
    )
    assert [c.content for c in found] == [
        "I'm Ada Lovelace.",
        "I always deploy with Ansible.",
        "We never deploy on Fridays.",
    ]
    assert [c.type for c in found] == [
        MemoryType.IDENTITY,
        MemoryType.PREFERENCE,
        MemoryType.PROCEDURE,  # the team's rule
    ]
    assert [c.subject for c in found] == ["user:name", "project:deploy-tool", None]


@pytest.mark.parametrize(
    "user, expected",
    [
        (
            "Big news: I moved to Berlin last week, so yeah, new city!",
            ["I moved to Berlin last week, new city!"],
        ),
        ("btw I live in Porto with my two cats.", ["I live in Porto with my two cats."]),
        ("Just so you know, gluten makes me ill.", ["Gluten makes me ill."]),
        ("P.S. down to 88 kg now!", ["Down to 88 kg now!"]),
        ("I'm 41 :)", ["I'm 41"]),
        ("I'm Brian 🙂", ["I'm Brian"]),
        (
            "Hey there! So yeah, I work as a nurse at Porto General lol.",
            ["I work as a nurse at Porto General."],
        ),
        ("Good morning! My name is Ada Lovelace.", ["My name is Ada Lovelace."]),
        (
            "big one: my partner Saoirse has a severe peanut allergy, she carries two EpiPens.",
            ["My partner Saoirse has a severe peanut allergy, she carries two EpiPens."],
        ),
        (
            "Correction: my sister's name is Ana, with one n.",
            ["My sister's name is Ana, with one n."],
        ),
        ("Scratch that, we're going to Crete in June.", ["We're going to Crete in June."]),
        # a name given with the job or home is two memories, so a new job leaves the name
        (
            "hello. I'm Vikram, night manager at the Grange Court Hotel in Leicester.",
            ["My name is Vikram.", "I'm night manager at the Grange Court Hotel in Leicester."],
        ),
        (
            "I'm Ana, I live in Porto with my cats.",
            ["My name is Ana.", "I live in Porto with my cats."],
        ),
        ("I'm Sam, nice to meet you.", ["I'm Sam, nice to meet you."]),
        # an exclaimed job news keeps the fragment that says what the job is
        (
            "and... ive been promoted! senior grounds supervisor from 1st april",
            ["I've been promoted! Senior grounds supervisor from 1st april"],
        ),
        # what anyone likes, eats or is, told by name
        ("Giedre is vegan, so no meat places.", ["Giedre is vegan, so no meat places."]),
        (
            "Marta loves orchids and Agatha Christie novels",
            ["Marta loves orchids and Agatha Christie novels"],
        ),
        ("Python is great for scripting.", []),
        # a request to look at what follows
        ("compare these two search results for me:", []),
        ("no wait, my flight home is on the 14th.", ["My flight home is on the 14th."]),
        # taking up what the assistant offered is no fact of the user's
        (
            "The chickpea one sounds good but my son Arjun is allergic to peanuts.",
            ["My son Arjun is allergic to peanuts."],
        ),
        ("That looks good but I'm on a budget of 50 euros.", ["I'm on a budget of 50 euros."]),
        (
            "That sounds great, and I'm vegetarian, and my partner Jordan is gluten intolerant",
            ["I'm vegetarian.", "My partner Jordan is gluten intolerant."],
        ),
        # asking to keep what follows
        (
            "Save this for me so I don't forget it: our wifi is called Casa-5G",
            ["Our wifi is called Casa-5G"],
        ),
        # a name given in the fragment after it belongs to what the sentence told
        (
            "Big news, we adopted a dog! a cavapoo called Biscuit, he's 2",
            ["We adopted a dog! A cavapoo called Biscuit, he's 2"],
        ),
    ],
)
def test_greetings_and_filler_are_dropped(user: str, expected: list[str]) -> None:
    assert _contents(user) == expected


@pytest.mark.parametrize(
    "user, expected",
    [
        (
            "Please remember that my wife's birthday is June 3rd.",
            ["Remember that my wife's birthday is June 3rd."],
        ),
        ("Please keep in mind I have a nut allergy.", ["Keep in mind I have a nut allergy."]),
        (
            "Please don't suggest pork recipes, I'm Muslim.",
            ["Don't suggest pork recipes, I'm Muslim."],
        ),
        # what the user asks to forget is not kept; what they say after it is
        ("Please forget that I'm vegetarian, I eat meat now.", ["I eat meat now."]),
        ("Please forget that I'm vegetarian.", []),
        ("Please book a table for two.", []),
        # asked as a question, still a thing to keep
        (
            "Can you remember that my locker code is 4512?",
            ["Remember that my locker code is 4512."],
        ),
        ("Could you note that I'm allergic to latex?", ["Remember that I'm allergic to latex."]),
        ("Can you remember what I said about Lisbon?", []),
    ],
)
def test_a_polite_request_around_a_statement_keeps_the_statement(
    user: str, expected: list[str]
) -> None:
    assert _contents(user) == expected


@pytest.mark.parametrize(
    "user, expected",
    [
        (
            "My name is Alice and I work at Acme Corp as a data engineer.",
            ["My name is Alice.", "I work at Acme Corp as a data engineer."],
        ),
        (
            "I live in Porto; my partner Joana works in Braga as a teacher.",
            ["I live in Porto.", "My partner Joana works in Braga as a teacher."],
        ),
        # a short part stands alone when it fills a profile slot
        (
            "I'm vegetarian, and my partner Jordan is gluten intolerant.",
            ["I'm vegetarian.", "My partner Jordan is gluten intolerant."],
        ),
        ("I'm 34 and I live in Leeds.", ["I'm 34.", "I live in Leeds."]),
        # the second part's subject left unsaid, each part a slot of its own
        (
            "I live in Leeds and work at Deloitte as an accountant.",
            ["I live in Leeds.", "I work at Deloitte as an accountant."],
        ),
        (
            "I'm vegetarian and allergic to shellfish.",
            ["I'm vegetarian.", "I'm allergic to shellfish."],
        ),
        ("I'm a teacher and live in York.", ["I'm a teacher.", "I live in York."]),
        ("We live in Hove and have two cats.", ["We live in Hove.", "We have two cats."]),
    ],
)
def test_compounds_split_into_first_person_statements(user: str, expected: list[str]) -> None:
    assert _contents(user) == expected


@pytest.mark.parametrize(
    "user",
    [
        "For sync conflicts we decided on last-writer-wins per note, and we keep a history table so nothing is lost.",
        "When I moved to Lisbon, I started learning Portuguese and I joined a choir.",
        "My daughter's name is Clementine and she is allergic to peanuts.",
        "I know, and my boss Tom wants the Lisbon office open by May.",  # "I know" alone says nothing
        # the age stays with what it was said for
        "I'm 32, and I'm trying to understand the green card application process.",
        # one slot, or one said twice
        "I love cooking and baking bread.",
        "I live and work in Leeds.",
        "I work at Deloitte and love it.",
    ],
)
def test_a_compound_whose_parts_do_not_stand_alone_stays_whole(user: str) -> None:
    assert _contents(user) == [user]


@pytest.mark.parametrize(
    "user, mtype",
    [
        ("Don't forget I'm vegan.", MemoryType.PREFERENCE),
        ("Don't forget my wife's name is Sara.", MemoryType.IDENTITY),
        ("Don't forget to call mum.", MemoryType.TODO),
    ],
)
def test_a_reminder_of_a_fact_is_no_task(user: str, mtype: MemoryType) -> None:
    assert [c.type for c in extract_candidates(user, "")] == [mtype]


@pytest.mark.parametrize(
    "user, content",
    [
        ("I still need to book flights for the Lisbon trip.", None),
        ("TODO: write the release notes for 1.0.", None),
        ("Note to self: renew the TLS cert.", None),
        ("remind me to water the plants tomorrow", "Remind me to water the plants tomorrow"),
        ("Can you remind me to call mum on Sunday?", "Remind me to call mum on Sunday."),
        (
            "Could you please remind me to renew the car insurance before March?",
            "Remind me to renew the car insurance before March.",
        ),
        ("Please remind me to take my meds at 9pm.", "Remind me to take my meds at 9pm."),
        # short, but marked as a task
        ("Don't forget the milk.", None),
        ("TODO: buy milk.", None),
    ],
)
def test_a_task_set_down_for_later_is_a_todo(user: str, content: str | None) -> None:
    found = extract_candidates(user, "")
    assert [(c.type, c.content) for c in found] == [(MemoryType.TODO, content or user)]


@pytest.mark.parametrize("user", ["Don't forget it.", "TODO: milk", "todo list is long"])
def test_a_marker_without_a_task_is_no_todo(user: str) -> None:
    assert extract_candidates(user, "") == []


@pytest.mark.parametrize(
    "user",
    ["Flights for Lisbon are booked!", "The plumber fixed the kitchen tap this morning."],
)
def test_a_slight_statement_that_something_is_done_is_kept_only_to_close(user: str) -> None:
    assert [(c.type, c.closing_only) for c in extract_candidates(user, "")] == [
        (MemoryType.EVENT, True)
    ]


@pytest.mark.parametrize(
    "user",
    ["I think the tap is fixed.", "Is the flight booked?", "The tap is not fixed yet.", "Done!"],
)
def test_a_hedged_or_asked_completion_is_nothing(user: str) -> None:
    assert extract_candidates(user, "") == []


def test_a_completion_that_stands_on_its_own_is_a_plain_memory() -> None:
    assert [c.closing_only for c in extract_candidates("I renewed my passport yesterday.", "")] == [
        False
    ]


@pytest.mark.parametrize(
    "user",
    [
        "Remind me what we decided about the database.",
        "Remind me which tool we use for deploys",
        "Remind me again who my manager is.",
        "Remind me of the plan.",
    ],
)
def test_asking_to_be_reminded_of_something_is_no_todo(user: str) -> None:
    assert extract_candidates(user, "") == []


@pytest.mark.parametrize(
    "user",
    [
        "I wonder which editor is best for Rust?",
        "I was wondering if Porto is nice in winter.",
        "Which tool should I use for deploying the billing service?",
        "Do you think I should move my blog to Hugo?",
    ],
)
def test_a_question_the_user_asked_is_not_a_fact(user: str) -> None:
    assert _contents(user) == []


def test_the_statement_before_a_question_is_kept_in_the_users_words() -> None:
    found = extract_candidates("I'm 41 and my left knee hurts after running, is that normal?", "")
    assert [(c.content, c.subject) for c in found] == [
        ("I'm 41 and my left knee hurts after running.", "user:age")
    ]


@pytest.mark.parametrize(
    "user",
    [
        "He said 'at least there won't be 2,000 kids I have to avoid.'",
        "He's wearing the new coat indoors because, quote, 'I need to break it in before winter.'",
        'Mateo said "because my dad\'s actually cool."',
        "She told the couple behind us 'my dad doesn't eat meat but he's still cool.'",
        "He said: 'Dad, I like Austin.",
        "I need to sleep on it.'",  # the second half of a quotation the splitter cut in two
    ],
)
def test_someone_elses_words_are_no_memory_of_the_user(user: str) -> None:
    assert extract_candidates(user, "") == []


@pytest.mark.parametrize(
    "user, mtype",
    [
        # the user's own words around a quotation keep their type
        (
            "She said \u201cI never eat meat\u201d and I need to plan the menu around it.",
            MemoryType.TODO,
        ),
        ("I'm reading 'Dune' again and I love it.", MemoryType.PREFERENCE),
        ("I don't know why, but I need to renew my passport by June.", MemoryType.TODO),
        ("'cause of the move I need to change banks before March.", MemoryType.TODO),
        # a quoted title is a name, not someone's words; the user's own pasted text is theirs
        ('I recently finished "The Seven Husbands of Evelyn Hugo" and loved it.', MemoryType.FACT),
        ('I just finished episode 12 of the "My Favorite Murder" podcast.', MemoryType.EVENT),
        ('"I have been the founder and CEO of Solvik for the past 22 years.', MemoryType.FACT),
    ],
)
def test_own_words_around_a_quotation_keep_their_type(user: str, mtype: MemoryType) -> None:
    assert _single(user).type is mtype


@pytest.mark.parametrize(
    "user, mtype",
    [
        # someone close introduced by name or by who they are is part of who the user is
        ("My wife Ana is a doctor at the clinic.", MemoryType.IDENTITY),
        ("My son is 7 and loves dinosaurs.", MemoryType.IDENTITY),
        ("My daughter's name is Clementine.", MemoryType.IDENTITY),
        ("I've actually changed my name to Eve Rachel Lee.", MemoryType.IDENTITY),
        ("I have two kids and a very old dog.", MemoryType.IDENTITY),
        # a habit in the present tense is a preference
        ("I never eat meat after six in the evening.", MemoryType.PREFERENCE),
        ("I never need an alarm clock on weekdays.", MemoryType.PREFERENCE),
    ],
)
def test_who_the_user_is_and_what_they_do(user: str, mtype: MemoryType) -> None:
    assert _single(user).type is mtype


@pytest.mark.parametrize(
    "user, not_type",
    [
        # a mention of someone close says nothing about who the user is
        ("My mom keeps asking why we need to go to Texas.", MemoryType.IDENTITY),
        ("My dad used to play this record on Sunday mornings.", MemoryType.IDENTITY),
        ("The gallery owner recognized my name from a design article.", MemoryType.IDENTITY),
        # "never" and "always" about the past are no preference
        ("Diana and I never went to yoga here.", MemoryType.PREFERENCE),
        ("I never appreciated how much work it was.", MemoryType.PREFERENCE),
        ("We always used to spend August in Porto.", MemoryType.PREFERENCE),
        ("I always drove to Lyon for work.", MemoryType.PREFERENCE),
        # a question someone asked is no statement
        (
            "The therapist asked if we've decided to separate or if we're still exploring.",
            MemoryType.DECISION,
        ),
        ("My boss asked me whether I need to take Friday off for the move.", MemoryType.TODO),
        # nor is what someone else believes about the user
        ("My mom thinks I live in a dump.", MemoryType.IDENTITY),
        ("My boss thinks I'm a designer.", MemoryType.IDENTITY),
        ("Everyone assumes I'm vegan because I cook so much tofu.", MemoryType.PREFERENCE),
        # what the user must bear in mind is a fact, not a task
        ("I need to remember that my sister is allergic to shellfish.", MemoryType.TODO),
        ("I have to keep in mind that the office closes at 6 on Fridays.", MemoryType.TODO),
    ],
)
def test_mentions_and_past_habits_are_not_typed_as_such(user: str, not_type: MemoryType) -> None:
    assert all(c.type is not not_type for c in extract_candidates(user, ""))


@pytest.mark.parametrize(
    "user, mtype",
    [
        # no rule names these verbs: what the user did, told with a name or a number, is an event...
        ("I drove 300 km to see Anna.", MemoryType.EVENT),
        ("I paid 1200 dollars for the Rome flights.", MemoryType.EVENT),
        ("I spent 3 hours with Dr. Lee.", MemoryType.EVENT),
        # ...and a present need, whose verb only ends like a past one, is a fact
        ("I need 3 copies for Priya Raman.", MemoryType.FACT),
    ],
)
def test_a_statement_no_rule_types_is_an_event_when_its_verb_is_past(
    user: str, mtype: MemoryType
) -> None:
    assert [c.type for c in extract_candidates(user, "")] == [mtype]


def test_what_is_told_of_the_users_people_by_name_is_typed() -> None:
    people = {"Meera", "Lina"}
    [moved] = extract_candidates(
        "Meera moved to Vancouver for a new hospital job.", "", people=people
    )
    assert moved.type is MemoryType.EVENT
    [lessons] = extract_candidates(
        "Lina has swimming lessons every Saturday at 10.", "", people=people
    )
    assert lessons.type is MemoryType.FACT
    # knowing no Meera: kept only if it replaces where someone of that name lived
    [unknown] = extract_candidates("Meera moved to Vancouver for a new hospital job.", "")
    assert unknown.closing_only


@pytest.mark.parametrize(
    "user, name",
    [
        ("Hey, Rafael here", "Rafael"),
        ("yo its tom, need help with meal prep", "Tom"),
        ("hiya, nkechi here. community pharmacist at Boots in Headingley, leeds", "Nkechi"),
        ("hello! this is Marta, I moved to Porto last week", "Marta"),
        ("aloha, keoni here. ER nurse at Queen's in honolulu", "Keoni"),
        ("hola, soy gustavo. accountant in monterrey", "Gustavo"),
        ("servus, lukas here, need a sleep plan", "Lukas"),
    ],
)
def test_a_user_naming_themselves_as_a_chat_opens_is_remembered(user: str, name: str) -> None:
    found = extract_candidates(user, "Hi!")
    assert (MemoryType.IDENTITY, "user:name", f"My name is {name}.") in [
        (c.type, c.subject, c.content) for c in found
    ]
    assert not is_noise(user)


@pytest.mark.parametrize(
    "user",
    [
        "Same here.",
        "hey its late, sorry",
        "hi, its me again",
        "hey there, need help",
        "I moved. this is it.",
    ],
)
def test_no_name_is_read_into_an_opening_that_gives_none(user: str) -> None:
    assert "user:name" not in [c.subject for c in extract_candidates(user, "Hi!")]


@pytest.mark.parametrize(
    "user, content",
    [
        ("we squash-merge everything, PR title = conventional commit", None),
        ("PRs need two approvals, and one of them has to be Tuomas Ekblad", None),
        (
            "rule: no merges to main after 3pm on fridays",
            "Rule: no merges to main after 3pm on fridays",
        ),
        ("we rebase, never merge, and nobody pushes to main directly", None),
        ("no deploys after 4pm pacific, and never on fridays", None),
    ],
)
def test_how_the_team_works_is_kept_as_a_procedure(user: str, content: str | None) -> None:
    [found] = extract_candidates(user, "Noted.")
    assert found.type is MemoryType.PROCEDURE
    assert found.content == (content or user[0].upper() + user[1:])


@pytest.mark.parametrize(
    "user",
    ["we merged the PR yesterday", "no changes needed, thanks", "no worries, we'll push it later"],
)
def test_what_the_team_did_once_is_no_rule(user: str) -> None:
    assert all(c.type is not MemoryType.PROCEDURE for c in extract_candidates(user, "Noted."))


def test_a_sentence_pointing_back_at_the_one_person_named_before_is_told_of_them_by_name() -> None:
    told = (
        "My husband Tomasz is a nurse. He works nights at the Royal. His shifts are 12 hours long."
    )
    assert [c.content for c in extract_candidates(told, "", people={"Tomasz"})] == [
        "My husband Tomasz is a nurse.",
        "Tomasz works nights at the Royal.",
        "Tomasz's shifts are 12 hours long.",
    ]
    meds = "Casimir is 7 and has asthma. he takes Flixotide 50 micrograms, two puffs morning and evening"
    assert "Casimir takes Flixotide 50 micrograms, two puffs morning and evening" in [
        c.content for c in extract_candidates(meds, "", people={"Casimir"})
    ]
    # two people named before: "he" is no one's by name
    assert all(
        not c.content.startswith(("Sarah", "Tom "))
        for c in extract_candidates(
            "I met Sarah and Tom at the fair. He is a carpenter in Leeds.", ""
        )
    )


@pytest.mark.parametrize(
    "user, kept",
    [
        ("and we dropped launchdarkly, too pricey", True),
        ("we're back on jest until after launch", True),
        ("we're also dropping argocd for flux", True),
        ("we migrated off heroku last quarter", True),
        ("I dropped the kids off at school", False),  # a day's errand
        ("I dropped Mateo at school.", False),
    ],
)
def test_a_tool_the_team_dropped_or_went_back_to_is_kept(user: str, kept: bool) -> None:
    assert bool(extract_candidates(user, "Noted.")) is kept


@pytest.mark.parametrize(
    "user",
    [
        "Give me 5 lunch ideas I can prep on Sunday",
        "Help me plan mornings around hearings at 9",
        "Find me a flight to Lisbon on the 12th",
        "pls write me a toast for my brother's wedding on the 27th",
    ],
)
def test_a_request_to_the_assistant_is_no_memory(user: str) -> None:
    assert extract_candidates(user, "Sure.") == []


def test_a_request_to_be_told_later_still_keeps_what_it_tells() -> None:
    [found] = extract_candidates("Tell me when my passport expires, it's March 2027", "")
    assert "March 2027" in found.content


def test_a_sentence_taken_back_in_the_same_message_is_not_kept() -> None:
    said = (
        "I moved last weekend to Suite 1204, 260 Wellington Crescent... no wait, sorry, 260 is my sister's "
        "building. I'm at Suite 1204, 155 Osborne Street in Osborne Village."
    )
    contents = _contents(said)
    assert not any("Wellington" in c for c in contents)
    assert "I'm at Suite 1204, 155 Osborne Street in Osborne Village." in contents
    # "I mean" insists rather than takes back
    assert "I love the food in Lisbon." in _contents(
        "I love the food in Lisbon. I mean, the pastries alone!"
    )
    # "I meant" opening a message takes back nothing said before it
    assert _contents("I meant, I'm fine with it. My dentist is Dr Lee.") == [
        "My dentist is Dr Lee."
    ]


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("My flat number is 112. No wait, 118.", "My flat number is 118."),
        ("My flat number is 112, no wait, 118.", "My flat number is 118."),
        ("My rent is £1,150 a month. Make that £1,200.", "My rent is £1,200 a month."),
        ("I have 2, sorry, 3 kids.", "I have 3 kids."),
    ],
)
def test_a_value_said_again_right_replaces_the_one_said_wrongly(said: str, kept: str) -> None:
    assert _contents(said) == [kept]


def test_what_the_user_was_told_to_do_by_a_professional_is_kept() -> None:
    told = (
        "I had a breath test because my stomach has been awful. Turns out I have fructose malabsorption. "
        "The dietitian says no apples, no pears, no honey, and go easy on dried fruit."
    )
    found = extract_candidates(told, "")
    assert [(c.content, c.subject) for c in found[-2:]] == [
        ("Turns out I have fructose malabsorption.", "user:health:fructose-malabsorption"),
        ("The dietitian says no apples, no pears, no honey, and go easy on dried fruit.", None),
    ]
    assert found[-1].type is MemoryType.FACT
    assert _contents("Mom says don't worry about it.") == []


def test_a_notes_details_after_a_name_stay_with_it() -> None:
    assert _contents("Childminder Gail Urquhart. Tue + Thu. £5.80/hr.") == [
        "My childminder is Gail Urquhart. Tue + Thu. £5.80/hr."
    ]
    # a list's numbers and a video's times are no details of what came before, nor is anything after a long statement
    assert not _detail_fragment("2.", "I love these ideas.")
    assert not _detail_fragment("0:02", "in today's video I'm going to")
    assert not _detail_fragment(
        "Tue + Thu.", "My childminder is Gail Urquhart, " + "she is lovely " * 4
    )


def test_a_no_to_an_offer_stays_with_the_offer() -> None:
    assert _contents(
        "Nordwing offered me a junior designer job, 2,300 gross per month. I said no, it was mostly dashboards"
    ) == [
        "Nordwing offered me a junior designer job, 2,300 gross per month. I said no, it was mostly dashboards"
    ]
    # passing a test is no refusal
    assert _contents("Woohoo! I passed the adoption agency interviews last Friday!") == [
        "I passed the adoption agency interviews last Friday!"
    ]


def test_a_pasted_blob_is_read_as_far_as_a_statement_runs() -> None:
    """A sentence of 200,000 characters (the most a turn keeps) is read only as far as a statement runs."""
    assert _contents("Flat 1 - " + "A" * 200_000) == []
    assert not _detail_fragment("Tue+" + "1" * 20_000, "Childminder Gail Urquhart.")
    assert not _detail_fragment("Today is February 22nd.", "Quit the firm May 15th.")


@pytest.mark.parametrize(
    ("user", "kept"),
    [
        ("I bank with Barclays.", True),
        ("I'm with Vodafone.", True),
        ("I take metformin.", True),  # a drug, however short
        ("I speak Polish.", True),
        ("I wake at 6.", True),
        ("We're on revision 14.", True),
        ("I think so.", False),
        ("I meant Subsidy.", False),
        ("I'll try Rust.", False),  # only thought about
        ("I love you!", False),
        ("I did it!", False),
    ],
)
def test_a_short_statement_of_what_the_user_does_with_something_named_is_kept(
    user: str, kept: bool
) -> None:
    assert bool(extract_candidates(user, "Noted.")) is kept


@pytest.mark.parametrize(
    ("user", "kept"),
    [
        ("I'm reading Middlemarch at the moment.", True),
        ("I'm learning Japanese on Duolingo.", True),
        ("We're currently watching The Great on Hulu.", True),
        ("I'm considering Headspace or Calm.", False),  # only thought about
        ("I'm wondering about Rust.", False),
    ],
)
def test_what_the_user_is_doing_these_days_with_something_named_is_kept(
    user: str, kept: bool
) -> None:
    assert bool(extract_candidates(user, "Noted.")) is kept


def test_a_sentence_opening_with_what_the_user_did_leaves_them_speaking() -> None:
    """'Finished Middlemarch!' is the user's, as 'Mateo got home.' is not: what follows is still theirs."""
    found = extract_candidates("Finished Middlemarch! Now reading The Overstory.", "Nice.")
    assert [c.content for c in found] == ["I'm now reading The Overstory."]


@pytest.mark.parametrize(
    ("user", "kept"),
    [
        ("I take metformin and atorvastatin every morning.", True),  # drugs taken, named
        ("The doctor switched my atorvastatin to rosuvastatin.", True),
        # a drug's family ending alone names none
        ("I shared my ideas with the magazine and they liked them!", False),
        ("We're painting the living room dusty blue this weekend.", True),  # a plan, and when
        ("I'm hiking with some buddies this weekend.", True),
        ("I'm thinking of baking again this weekend.", False),  # only thought of
        ("I'm looking for some date ideas for this weekend.", False),
        ("The team offsite is in Manchester on the 14th.", True),  # when a thing of theirs happens
        ("Bins go out on Tuesday nights here.", True),
        ("The school run is at 8:15 every morning.", True),
        ("The christening is in Cork in May.", True),
        ("The museum is in the old town.", False),  # no when
        ("Our cleaner comes on Thursdays.", True),
        ("The kids' swimming lessons are on Saturday mornings.", True),
        ("The car insurance renews in August.", True),
        # a thing named without "the", on a day or at a time; not a person's whereabouts, nor what starts "in May"
        ("Choir practice is on Tuesdays at 7.", True),
        ("Swimming is every Saturday at 9.", True),
        ("Sam is in Leeds on Monday.", False),
        ("Direct sowing outdoors starts in May after the last frost.", False),
        ("My passport expires next March.", True),  # a thing of their own that runs out
        ("Mum lives with us now.", True),  # a parent called as a name, and what they do
        ("I'm left-handed.", True),  # what the user is for good, however short
        ("I'm colour blind, red-green.", True),
        ("I'm terrified of flying.", True),
        ("Date night is Fridays.", True),  # a thing of theirs and its day, however short
        ("Bin day is Thursday.", True),
        # a thing of theirs named by its make or club, after a verb of having or using it
        ("I ride a Brompton to the office most days, it folds under my desk.", True),
        ("I've had a Celtic season ticket since I was fifteen.", True),
        ("I much prefer a phone call to a long email thread, for what it's worth.", True),
        ("I'm afraid of failing, of not being good enough.", False),  # a fear of how things may go
        ("My blood type is O negative.", True),  # a value of theirs that is a blood group
        ("I take my tea black with no sugar.", True),  # how they take a drink
        ("I have my coffee with oat milk.", True),
        ("I'm tired.", False),  # a passing state
        ("I'm scared.", False),
        ("Gluten makes me ill.", True),  # what sets off a condition, however short
        ("My work email is sam@acme.com.", True),  # a value of theirs that is an address
        ("Traded the Golf in for a Kia EV6.", True),  # what they did, "I" unsaid
    ],
)
def test_what_the_user_takes_plans_or_has_happen_at_a_time_is_kept(user: str, kept: bool) -> None:
    assert bool(extract_candidates(user, "Noted.")) is kept


def test_what_the_user_is_saving_for_is_a_goal() -> None:
    found = extract_candidates("I'm saving for a house deposit.", "Noted.")
    assert [(c.type, c.content) for c in found] == [
        (MemoryType.GOAL, "I'm saving for a house deposit.")
    ]


def test_one_of_the_users_things_opening_a_sentence_is_theirs() -> None:
    assert [c.content for c in extract_candidates("Kids are 7 and 10.", "Noted.")] == [
        "My kids are 7 and 10."
    ]
    assert [c.content for c in extract_candidates("The kids go to St Mary's primary.", "")] == [
        "My kids go to St Mary's primary."
    ]
    # a capital that opens a name is no thing of theirs
    assert extract_candidates("Meridian meetings are on Zoom.", "Noted.") == []


def test_an_amount_of_the_users_named_with_the_is_theirs() -> None:
    found = extract_candidates("The wedding budget is 15,000 pounds all in.", "Noted.")
    assert [c.content for c in found] == ["My wedding budget is 15,000 pounds all in."]
    assert extract_candidates("The price is 12 dollars for adults.", "Noted.") == []


def test_what_the_user_and_theirs_did_is_said_as_we() -> None:
    found = extract_candidates(
        "Changed our minds on the living room, we're going with sage green instead.", "Nice."
    )
    assert [c.content for c in found] == [
        "We changed our minds on the living room, we're going with sage green instead."
    ]


@pytest.mark.parametrize(
    ("user", "subject"),
    [
        ("Just so you know, gluten makes me ill.", "user:health:intolerance:gluten"),
        ("For the record, I'm 41 and not a day older", "user:age"),
        ("P.S. down to 88 kg now!", "user:weight"),
        ("I'm 41 :)", "user:age"),
        ("I'm Brian 🙂", "user:name"),
        ("I'm British ;-)", "user:origin"),
    ],
)
def test_filler_and_faces_around_a_statement_leave_its_slot(user: str, subject: str) -> None:
    assert [c.subject for c in extract_candidates(user, "Noted.")] == [subject]
