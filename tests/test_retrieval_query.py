"""Query analysis: keywords, entity matching, time expressions and type hints."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hermes_bowerbird.retrieval.query import (
    analyze_query,
    extract_keywords,
    first_person,
    match_entities,
    name_roles,
    named_subjects,
    parse_time,
    question_core,
    subject_hints,
    type_hints,
)
from hermes_bowerbird.types import MemoryType

NOW = datetime(2026, 3, 4, 15, 30, tzinfo=UTC).timestamp()  # a Wednesday afternoon


def day(y: int, m: int, d: int, h: int = 0) -> float:
    return datetime(y, m, d, h, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What did Caroline research?", ("caroline", "research")),
        ("Where does the user deploy the service", ("user", "deploy", "service")),
        ("the the THE Database database", ("database",)),
        ("who am I", ("who", "am", "i")),  # only stop words: keep them rather than search nothing
        ("", ()),
        ("Python 3 and C++", ("python", "3")),
    ],
)
def test_keywords(text: str, expected: tuple[str, ...]) -> None:
    assert extract_keywords(text) == expected


NORMS = {"caroline": 1, "new york": 2, "art": 3, "project falcon": 4, "falcon": 4, "it": 5}


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("Caroline's trip to New York", (2, 1)),
        ("What is new in York?", ()),  # words must be adjacent
        ("artistic carts and startups", ()),  # no substring matches
        ("How is Project Falcon going?", (4,)),
        ("falcon and art", (4, 3)),
        ("is it done", ()),  # stop-word names never match on their own
    ],
)
def test_entity_matching_uses_whole_words(text: str, ids: tuple[int, ...]) -> None:
    assert match_entities(text, NORMS)[0] == ids


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("Is the site on Next.js yet?", (1,)),
        ("ask jean-luc's opinion", (2,)),
        ("flights to St. Louis", (3,)),
        ("is it C++ or C#?", (4, 5)),
        ("next js and jean luc", ()),  # the written punctuation is part of the name
        ("c and c", ()),
    ],
)
def test_entity_names_with_inner_punctuation_match_as_written(
    text: str, ids: tuple[int, ...]
) -> None:
    norms = {"next.js": 1, "jean-luc": 2, "st. louis": 3, "c++": 4, "c#": 5}
    assert match_entities(text, norms)[0] == ids


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("what did I do yesterday", day(2026, 3, 3), day(2026, 3, 4)),
        ("anything this morning?", day(2026, 3, 4), NOW + 1),
        ("what happened last week", day(2026, 2, 23), day(2026, 3, 2)),
        ("this week's plans", day(2026, 3, 2), NOW + 1),
        ("what did we decide in March", day(2026, 3, 1), day(2026, 4, 1)),
        ("the trip in December", day(2025, 12, 1), day(2026, 1, 1)),
        ("during june 2024", day(2024, 6, 1), day(2024, 7, 1)),
        ("2 days ago", day(2026, 3, 2), day(2026, 3, 3)),
        ("a day ago", day(2026, 3, 3), day(2026, 3, 4)),
        ("last month", day(2026, 2, 1), day(2026, 3, 1)),
        ("last year", day(2025, 1, 1), day(2026, 1, 1)),
        ("in the past 3 days", NOW - 3 * 86400, NOW + 1),
        ("last night", day(2026, 3, 3, 17), day(2026, 3, 4, 6)),
    ],
)
def test_time_windows(text: str, start: float, end: float) -> None:
    window, _ = parse_time(text, NOW, UTC)
    assert window is not None
    assert window.start == pytest.approx(start)
    assert window.end == pytest.approx(end)


def test_two_weeks_ago_is_centred_on_that_week() -> None:
    window, _ = parse_time("two weeks ago", NOW, UTC)
    assert window is not None and window.start is not None and window.end is not None
    assert window.contains(NOW - 14 * 86400)
    assert not window.contains(NOW - 3 * 86400)


@pytest.mark.parametrize("text", ["may I ask something", "march forward", "the deploy script", ""])
def test_no_time_window(text: str) -> None:
    assert parse_time(text, NOW, UTC)[0] is None


@pytest.mark.parametrize(
    ("text", "recency"),
    [
        ("what have I been working on recently", 1.0),
        ("my current job", 1.0),
        ("my job", 0.0),
        ("what do I know about Rome", 0.0),
    ],
)
def test_recency(text: str, recency: float) -> None:
    assert parse_time(text, NOW, UTC)[1] == recency


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what did we decide about the database", {MemoryType.DECISION}),
        ("when did the meeting happen", {MemoryType.EVENT}),
        ("my preferences for editors", {MemoryType.PREFERENCE}),
        ("what's my favourite food", {MemoryType.PREFERENCE}),
        ("remind me what's on my todo list", {MemoryType.TODO}),
        ("how do I release a new version", {MemoryType.PROCEDURE}),
        ("what are my goals this year", {MemoryType.GOAL}),
        ("who am I", {MemoryType.IDENTITY}),
        ("the deploy script", set()),
    ],
)
def test_type_hints(text: str, expected: set[MemoryType]) -> None:
    assert type_hints(text) == expected


def test_analyze_query_combines_everything() -> None:
    analysis = analyze_query("What did Caroline decide yesterday?", NOW, NORMS, UTC)
    assert analysis.keywords == ("caroline", "decide")
    assert analysis.entity_ids == (1,)
    assert analysis.window is not None and analysis.window.contains(day(2026, 3, 3, 12))
    assert MemoryType.DECISION in analysis.type_hints


@pytest.mark.parametrize(
    "text",
    [
        '"',
        "NEAR(a b)",
        "*",
        "'; DROP TABLE memories; --",
        "\x00\x01",
        "())((",
        "content:foo",
        "🦜🦜",
        "a" * 100_000,
        "in 99999 years ago",
    ],
)
def test_hostile_queries_analyse(text: str) -> None:
    analysis = analyze_query(text, NOW, NORMS, UTC)
    assert len(analysis.text) <= 2_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Where do I live now?", ("user:residence", "user:home")),
        ("What do I do for work?", ("user:job", "user:employer", "user:work-location")),
        # with what decides what the user can eat
        (
            "what's my diet like these days",
            (
                "user:diet",
                "user:health:lactose-intolerance",
                "user:health:celiac",
                "user:health:intolerance:",
            ),
        ),
        ("Am I still married?", ("user:relationship",)),
        ("how old am I", ("user:age",)),
        ("What did we decide about the deploy?", ()),
        ("Do I have kids?", ("user:children",)),
        ("What are my hobbies?", ("user:routine:", "user:habit:")),
        ("How are my parents doing?", ()),  # not the user's children
        ("What are the conditions of my lease?", ()),  # not health
        ("Where is my mother based?", ()),  # someone else's home
        # only the slot the person word names
        (
            "What does my spouse do for a living?",
            ("user:relationship",),
        ),
        ("What is my little girl called?", ()),  # not the user's name
        # a living is a job, not a home
        ("What do I do for a living?", ("user:job", "user:employer", "user:work-location")),
        ("How do I make a living these days?", ("user:job", "user:employer", "user:work-location")),
        ("Where am I living now?", ("user:residence", "user:home")),
        ("What's my brother's name?", ()),
        ("Where are my overseas colleagues based?", ()),
        ("What's my mother-in-law's name?", ()),
        ("How much do I weigh these days?", ("user:weight",)),
        ("What religion am I?", ("user:faith",)),
        ("Who is my accountant these days?", ("user:contact:",)),
        # a contact asked for by what they do for the user
        ("who does my books?", ("user:contact:",)),
        ("who handles our taxes?", ("user:contact:",)),
        ("Who cuts my hair?", ("user:contact:",)),
        ("Who does the dishes tonight?", ()),  # no one the user goes to
        ("Who is my boss?", ("user:manager",)),
        ("How do I get to the office?", ("user:job", "user:employer", "user:work-location")),
        ("What am I studying?", ("user:study:",)),
        ("Which language am I learning at the moment?", ("user:study:",)),
        ("Who do I report to?", ("user:manager",)),
        ("What dose of sertraline am I on?", ("user:health:", "user:medication:")),
    ],
)
def test_subject_hints(text: str, expected: tuple[str, ...]) -> None:
    assert subject_hints(text) == expected


@pytest.mark.parametrize(
    ("text", "about_user"),
    [
        ("How much do we pay for Netflix?", True),
        ("Where do we live?", True),
        ("Tell us about our plans.", True),
        ("Which US cities did John visit?", False),  # the country
        ("When are Yusuf's violin lessons?", False),
    ],
)
def test_we_and_our_speak_of_the_user(text: str, about_user: bool) -> None:
    assert analyze_query(text, NOW, {}, UTC).about_user is about_user


@pytest.mark.parametrize(
    ("text", "names", "about_user", "keywords", "subjects", "semantic"),
    [
        (
            "What is Marcus's diet?",
            {"marcus"},
            True,
            ("diet",),
            ("user:diet", "user:health:lactose-intolerance", "user:health:celiac"),
            "What is my diet?",
        ),
        (
            "Where does Marcus Rivera live?",
            {"marcus rivera", "marcus"},
            True,
            ("live",),
            ("user:residence", "user:home"),
            "Where does I live?",
        ),
        ("Where do I live?", set(), True, ("live",), ("user:residence", "user:home"), ""),
        # someone else: no slots
        (
            "Where does Caroline live?",
            {"marcus"},
            False,
            ("caroline", "live"),
            (),
            "",
        ),
        # whole words only
        (
            "Is Marcusville far?",
            {"marcus"},
            False,
            ("marcusville", "far"),
            (),
            "",
        ),
    ],
)
def test_the_users_own_name_is_a_self_reference(
    text: str,
    names: set[str],
    about_user: bool,
    keywords: tuple[str, ...],
    subjects: tuple[str, ...],
    semantic: str,
) -> None:
    analysis = analyze_query(text, NOW, {"marcus": 7, "caroline": 8}, UTC, self_names=names)
    assert analysis.about_user is about_user
    assert analysis.keywords == keywords
    assert analysis.subjects == subjects
    assert analysis.semantic_text == semantic
    assert 7 not in analysis.entity_ids or not names


@pytest.mark.parametrize(
    ("text", "subjects"),
    [
        (
            "What are my hobbies?",
            ("user:routine:meditation", "user:routine:running", "user:habit:drinking"),
        ),
        ("How is my health?", ("user:health:asthma",)),
        ("What am I allergic to?", ("user:allergy:peanuts",)),
        ("Do I have pets?", ()),  # no pet stored: the family names nothing
        ("What are Caroline's hobbies?", ()),  # someone else's
    ],
)
def test_slot_families_expand_to_the_stored_keys(text: str, subjects: tuple[str, ...]) -> None:
    known = {
        "user:routine:meditation",
        "user:routine:running",
        "user:habit:drinking",
        "user:health:asthma",
        "user:allergy:peanuts",
        "user:diet",
        "project:routine",
    }
    assert analyze_query(text, NOW, {}, UTC, known_subjects=known).subjects == subjects


def test_first_person_rewrite() -> None:
    assert (
        first_person("Tell me about Marcus's property. Does Marcus rent?", {"marcus"})
        == "Tell me about my property. Does I rent?"
    )


@pytest.mark.parametrize(
    "keywords, about_user, expected",
    [
        (("editor",), True, ("project:editor", "user:editor")),
        (("editors",), False, ("project:editor",)),
        (("database", "choose"), False, ("project:database",)),
        (("diet",), True, ("user:diet",)),
        (("diet",), False, ()),
        (("car",), True, ("user:car",)),  # a key of one short word, said whole
        (("ca",), True, ()),  # never a prefix of a short word
        (("ci", "use"), False, ("project:ci",)),
        (("app", "use"), True, ()),  # one word of several: names none of the apps
        (("weather",), True, ()),
    ],
)
def test_query_words_name_stored_subjects(
    keywords: tuple[str, ...], about_user: bool, expected: tuple[str, ...]
) -> None:
    known = {
        "project:editor",
        "user:editor",
        "project:database",
        "user:diet",
        "user:car",
        "user:favourite:food",
        "project:ci",
        "user:music-app",
        "project:notes-app",
    }
    assert named_subjects(keywords, known, about_user) == expected


ROLES = {"husband": "Tomasz", "best friend": "Joaquin", "girl": "Clementine"}


@pytest.mark.parametrize(
    ("text", "matched", "expanded", "named"),
    [
        (
            "When is my husband's birthday?",
            ("husband",),
            "When is my husband Tomasz's birthday?",
            ("Tomasz",),
        ),
        (
            "What is my little girl called?",
            ("girl",),
            "What is my little girl Clementine called?",
            ("Clementine",),
        ),
        (
            "Gift ideas for our best friend",
            ("best friend",),
            "Gift ideas for our best friend Joaquin",
            ("Joaquin",),
        ),
        # someone else's husband, or a role said without the user's own "my"
        ("What does Melanie's husband do?", ("husband",), "What does Melanie's husband do?", ()),
        ("Is a husband a spouse?", ("husband",), "Is a husband a spouse?", ()),
        # the name is there already, or the word matched no role
        ("Is my husband Tomasz home?", ("husband", "tomasz"), "Is my husband Tomasz home?", ()),
        ("What's my boss called?", ("boss",), "What's my boss called?", ()),
    ],
)
def test_a_role_of_the_users_own_gets_its_name(
    text: str, matched: tuple[str, ...], expanded: str, named: tuple[str, ...]
) -> None:
    assert name_roles(text, matched, ROLES) == (expanded, named)


def test_a_named_role_searches_for_the_name_by_keyword_and_meaning() -> None:
    norms = {"husband": 9, "tomasz": 9}
    analysis = analyze_query("When is my husband's birthday?", NOW, norms, UTC, alias_names=ROLES)
    assert analysis.entity_ids == (9,)
    assert analysis.role_names == ("Tomasz",)
    assert analysis.keywords == ("husband", "birthday", "tomasz")
    assert analysis.semantic_text == "When is my husband Tomasz's birthday?"
    assert analysis.unnamed_text == "When is my husband's birthday?"
    plain = analyze_query("When is my husband's birthday?", NOW, norms, UTC)
    assert (plain.role_names, plain.semantic_text, plain.unnamed_text) == ((), "", "")


@pytest.mark.parametrize(
    ("text", "present"),
    [
        ("How many people are coming to the wedding?", True),
        ("Which day does the babysitter come?", True),
        ("What time is standup?", True),
        ("What's the Wi-Fi password?", True),
        ("Who's the landlord?", True),
        ("Which day did the babysitter come?", False),
        ("What was the old rate?", False),
        ("What time was standup before?", False),
        ("What is the plan for tomorrow?", True),  # a time to come: what holds now
        ("What is on in February?", False),  # a time gone by
        ("Caroline's trip to Paris", False),  # no verb to tell the tense by
    ],
)
def test_a_question_in_the_present_asks_what_holds_now(text: str, present: bool) -> None:
    assert analyze_query(text, NOW, {}, UTC).present is present


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("Who is my favourite author?", ("user:favourite:author",)),
        ("What's my favourite film?", ()),  # the family only: another favourite is no answer
        ("Who is my babysitter?", ("user:contact:babysitter",)),
        ("Which deploy tool do we use?", ("project:deploy-tool",)),
    ],
)
def test_a_question_names_a_familys_member_by_its_own_words(
    text: str, named: tuple[str, ...]
) -> None:
    known = ("user:favourite:author", "user:contact:babysitter", "project:deploy-tool")
    assert named_subjects(extract_keywords(text), known, about_user=True) == named


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("Who is my husband?", ("Tomasz",)),
        ("What's my hubby called again?", ("Tomasz",)),
        ("What is the name of my husband?", ("Tomasz",)),
        ("Who is my husband's favourite band?", ()),  # asks something else of him
        ("When is my husband's birthday?", ()),
        ("Who is Melanie's husband?", ()),  # someone else's
    ],
)
def test_a_question_asking_who_holds_a_role_of_the_users_names_its_holder(
    text: str, asked: tuple[str, ...]
) -> None:
    aliases = {"husband": "Tomasz", "hubby": "Tomasz", "spouse": "Tomasz"}
    norms = {"husband": 9, "hubby": 9, "spouse": 9, "tomasz": 9}
    analysis = analyze_query(text, NOW, norms, UTC, alias_names=aliases)
    assert analysis.names_asked == asked
    assert set(analysis.asked_roles) == ({"husband", "hubby", "spouse"} if asked else set())


@pytest.mark.parametrize(
    ("typed", "core"),
    [
        (
            "Hey, quick question - which app do I use for notes? Thanks!",
            "which app do I use for notes?",
        ),
        ("Can you remind me: who is my closest mate? cheers :)", "who is my closest mate?"),
        ("ok, so, um, which tool do I deploy with?", "which tool do I deploy with?"),
        ("Sorry, which day is bin day? ta", "which day is bin day?"),
        # a question typed without its mark gets one
        ("which instrument am I practising", "which instrument am I practising?"),
        ("When is the dentist :)", "When is the dentist?"),
        # what only looks like a wrapper stays
        ("Well-known bands from Leeds?", "Well-known bands from Leeds?"),
        ("Where do I buy pasta?", "Where do I buy pasta?"),
        ("Tell me about my trip to Japan", "Tell me about my trip to Japan"),
        ("Thanks!", "Thanks!"),
    ],
)
def test_a_question_is_read_without_the_words_around_it_that_ask_nothing(
    typed: str, core: str
) -> None:
    assert question_core(typed) == core
    assert analyze_query(typed, NOW).keywords == analyze_query(core, NOW).keywords


@pytest.mark.parametrize(
    ("text", "alone"),
    [
        ("I'm cooking tonight. Which nuts must my kid avoid?", "Which nuts must my kid avoid?"),
        ("Which nuts must my kid avoid?", ""),
        # an abbreviation ends no sentence
        ("I saw someone new today. Is Dr. Okafor my dentist now?", "Is Dr. Okafor my dentist now?"),
        ("Which nuts? I'm cooking tonight.", ""),  # the question is not what it ends with
        ("Hey! Which nuts must my kid avoid?", ""),  # a greeting is no sentence said before it
    ],
)
def test_the_question_said_after_something_else_is_read_alone_too(text: str, alone: str) -> None:
    assert analyze_query(text, NOW).asked_alone == alone
