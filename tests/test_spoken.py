"""Chat shorthand said plainly before extraction: "im", a dropped "I", a thing named without "my"."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.extract import extract_candidates
from hermes_bowerbird.curation.spoken import plain
from hermes_bowerbird.types import MemoryType


@pytest.mark.parametrize(
    "typed, meant",
    [
        ("im allergic to peanuts", "I'm allergic to peanuts"),
        ("ive been vegan for years and i love it", "I've been vegan for years and I love it"),
        # a "not" typed without its apostrophe
        ("i dont eat meat anymore", "I don't eat meat anymore"),
        ("Doesnt matter, I cant do Tuesdays", "Doesn't matter, I can't do Tuesdays"),
        ("switched physio to Dr. Khan at Peak", "I switched physio to Dr. Khan at Peak"),
        ("just moved to Berlin last week", "I just moved to Berlin last week"),
        ("budget is $45k total", "My budget is $45k total"),
        (
            "contractor is Bill Novak, his cell is 614-555-0142",
            "My contractor is Bill Novak, his cell is 614-555-0142",
        ),
        ("new manager is Tom Becker", "My new manager is Tom Becker"),
        ("doctor is dr patel at covenant", "My doctor is dr patel at covenant"),
        # after something else was said, and a drug whose dose changed
        ("kate left, new manager is Lou", "kate left, my new manager is Lou"),
        (
            "we argued, and contractor is Bill Novak now",
            "we argued, and my contractor is Bill Novak now",
        ),
        ("metformin went up to 1000", "My metformin went up to 1000"),
        ("Sertraline dose is down to 50mg", "My sertraline dose is down to 50mg"),
        # "I'm" and "I've" left unsaid
        ("now on escitalopram 10 mg", "I'm now on escitalopram 10 mg"),
        ("moving into a share house in brunswick", "I'm moving into a share house in brunswick"),
        ("been seeing someone, Anika", "I've been seeing someone, Anika"),
        # notes, as a terse user types them
        ("boss: Imogen Tate", "My boss is Imogen Tate"),
        ("rent 1450", "My rent is 1450"),
        ("salary 78k", "My salary is 78k"),
        ("commute 25 min by bike", "My commute is 25 min by bike"),
        ("allergic: penicillin", "I'm allergic to penicillin"),
        (
            "new job at Lumen Studio starting march",
            "I have a new job at Lumen Studio starting march",
        ),
        ("cat named Pickle, vet visit fri", "My cat is named Pickle, vet visit fri"),
        ("gf Juno moving in may", "My gf Juno moving in may"),
        ("boss there: Anand Ferreira", "My boss is Anand Ferreira"),
        ("kid's school: Harrow Lane Primary, yr 2", "My kid's school is Harrow Lane Primary, yr 2"),
        ("shift change: now tue-fri 10-18", "My shift is now tue-fri 10-18"),
        ("rent now 1810 from oct", "My rent is now 1810 from oct"),
        ("new job @ Brightwell Logistics", "I have a new job @ Brightwell Logistics"),
        # a terse user's notes
        ("rate: $95/hr.", "My rate is $95/hr."),
        (
            "CPA = Marisa Delvecchio, Delvecchio Tax Group",
            "My CPA is Marisa Delvecchio, Delvecchio Tax Group",
        ),
        ("subs: Figma $15, Maze $99/mo", "My subs are Figma $15, Maze $99/mo"),
        (
            "clients rn: Larchmont Health (contact Bev Tran) + Cascadia Credit Union",
            "My clients are Larchmont Health (contact Bev Tran) + Cascadia Credit Union",
        ),
        ("Childminder Gail Urquhart.", "My childminder is Gail Urquhart."),
        (
            "GP Dr Rennie, Culloden Medical Practice.",
            "My GP is Dr Rennie, Culloden Medical Practice.",
        ),
        ("Son is Ren, 7 years old", "My son is Ren, 7 years old"),
        ("84kg.", "My weight is 84kg."),
        ("taking creatine 5g a day and vit d", "I'm taking creatine 5g a day and vit d"),
        # one of the user's people by role and name, what is said of them going on
        (
            "Sometimes babysitter Chloe come, she is UVic student, $18 per hour",
            "My babysitter Chloe come, she is UVic student, $18 per hour",
        ),
        ("Physio Jorge Beltrán says it is a strain", "My physio Jorge Beltrán says it is a strain"),
    ],
)
def test_shorthand_is_said_plainly(typed: str, meant: str) -> None:
    assert plain(typed) == meant


@pytest.mark.parametrize(
    "typed",
    [
        "My budget is $58k.",  # said plainly already
        "Doctor Who is my favourite show",  # a role's word opening a title
        "Dentist Tuesday at 4",  # a day, no name
        "Paris is 2 hours away",  # a name, not the user's thing
        "Budget is $45k",  # a capital may open a name
        "Meridian meetings are on Zoom",
        "the meeting is at 3",
        "weather is nice in May",
        "Finally some good news",
        "the id is on the card and I'll be there",
        # a price or a fact of the world, someone else's thing: no one's own
        "copper is like 14 euro a metre now mad",
        "customers boiler is a worcester bosch 30i",
        "weber says einkommensteuer is due july 31",
        # a thing already someone's after the comma
        "I'm in the city, and my budget is around $500.",
        "I'm looking at a 30-year mortgage, and the interest rate is around 4%.",
        "metformin is a diabetes drug",
        "Living in Berlin is expensive",  # a doing that is the subject
        "Seeing my goals written down really helps",
        # a pasted form's labels are no notes of the user's
        "Date: February 9th (Thursday) 3pm",
        "Goal: Compare a list of desired skills",
        "Email: user1@example.com",
        "Name: Geetesh Gupta",
        "pay 40 bucks for the tickets",
        # words that end as a "not" typed without its apostrophe does
        "I want a pint and a rant about the rent",
    ],
)
def test_plain_text_stays_as_typed(typed: str) -> None:
    assert plain(typed) == typed


@pytest.mark.parametrize(
    "user, content, subject",
    [
        (
            "also im allergic to peanuts, proper allergy",
            "I'm allergic to peanuts, proper allergy",
            "user:allergy:peanuts",
        ),
        ("we're redoing the kitchen. budget is $45k total", "My budget is $45k total", None),
        ("news: new manager is Tom Becker", "My new manager is Tom Becker", "user:manager"),
        (
            "update: switched physio to Dr. Aisha Khan at Peak",
            "I switched physio to Dr. Aisha Khan at Peak",
            "user:contact:physio",
        ),
        ("My rent is £1,200.", "My rent is £1,200.", None),  # short, but a value of the user's own
        # one of the user's contacts, named with "the"
        (
            "the landlady is Montserrat Puig",
            "My landlady is Montserrat Puig",
            "user:contact:landlady",
        ),
        (
            "the landlord is a guy called Réjean Thibodeau, he lives downstairs",
            "My landlord is a guy called Réjean Thibodeau, he lives downstairs",
            "user:contact:landlord",
        ),
        ("landlord is a guy called levan", "My landlord is a guy called levan", None),
        # a terse user's plans and finds, named however cased
        (
            "flying home to bris for xmas 19 dec, back in tbilisi 8 jan",
            "I'm flying home to bris for xmas 19 dec, back in tbilisi 8 jan",
            None,
        ),
        ("moving to tbilisi in sept for a year", "I'm moving to tbilisi in sept for a year", None),
        (
            "found an english speaking gp, dr tamar kvaratskhelia at medi club",
            "I found an english speaking gp, dr tamar kvaratskhelia at medi club",
            None,
        ),
        # a diagnosis, a specialist, a dose noted tersely
        (
            "diagnosed w graves disease last week",
            "I was diagnosed with graves disease last week",
            "user:health:graves-disease",
        ),
        (
            "endocrinologist is dr aubanel at la timone",
            "My endocrinologist is dr aubanel at la timone",
            "user:contact:endocrinologist",
        ),
        (
            "dose down again, carbimazole 10mg now.",
            "My carbimazole dose is down to 10mg now.",
            "user:medication:carbimazole",
        ),
        (
            "stopping propranolol completely, pulse now 78",
            "I'm stopping propranolol completely, pulse now 78",
            "user:medication:propranolol",
        ),
        (
            "I dont live in Leeds anymore, moved to York",
            "I don't live in Leeds anymore, moved to York",
            "user:residence",
        ),
        # a state of the user's, "I'm" unsaid
        ("allergic to bees me not her.", "I'm allergic to bees me not her.", "user:allergy:bees"),
        (
            "btw lactose intolerant af so no dairy in any recipes pls",
            "I'm lactose intolerant af so no dairy in any recipes pls",
            "user:health:lactose-intolerance",
        ),
        (
            "also on buspirone 10mg 2x day for anxiety",
            "I'm on buspirone 10mg 2x day for anxiety",
            "user:medication:buspirone",
        ),
    ],
)
def test_what_chat_shorthand_tells_is_kept(user: str, content: str, subject: str | None) -> None:
    assert [(c.content, c.subject) for c in extract_candidates(user, "Noted.")] == [
        (content, subject)
    ]


def test_a_short_statement_of_one_of_the_users_people_is_kept() -> None:
    found = extract_candidates("Sam is pescatarian now.", "Noted.", people=("Sam",))
    assert [(c.type, c.content) for c in found] == [(MemoryType.FACT, "Sam is pescatarian now.")]
    # what anyone eats or is told by name is kept as theirs ("Giedre is vegan, so no meat places"); other news of
    # someone unknown is not
    assert [c.content for c in extract_candidates("Sam is pescatarian now.", "Noted.")] == [
        "Sam is pescatarian now."
    ]
    assert extract_candidates("Sam got a new car.", "Noted.") == []


@pytest.mark.parametrize(
    "user, content",
    [
        (
            "so the custody got modified by the court. now i have them every wednesday night",
            "Now I have them every wednesday night",
        ),  # a day names a when as a number does
        (
            "my thesis is on coral bleaching recovery in the red sea",
            "My thesis is on coral bleaching recovery in the red sea",
        ),
        # a change to what the user has, however plainly named
        (
            "not great. moving into a share house in brunswick with callum for now",
            "I'm moving into a share house in brunswick with callum for now",
        ),
    ],
)
def test_a_statement_without_a_name_or_number_may_still_be_kept(user: str, content: str) -> None:
    assert [(c.type, c.content) for c in extract_candidates(user, "Noted.")] == [
        (MemoryType.FACT, content)
    ]


@pytest.mark.parametrize(
    "user, content",
    [
        (
            "also cancelled my fitness first membership, can't afford it on my own",
            "I cancelled my fitness first membership, can't afford it on my own",
        ),
        ("found a new place in roncesvalles!!", "I found a new place in roncesvalles!!"),
        ("we changed banks last month", "We changed banks last month"),
    ],
)
def test_a_change_to_what_the_user_has_is_kept(user: str, content: str) -> None:
    assert [(c.type, c.content) for c in extract_candidates(user, "Noted.")] == [
        (MemoryType.EVENT, content)
    ]


@pytest.mark.parametrize(
    "user",
    [
        "my back is really sore right now",
        "can u paste me a summary of this review",
        "I changed my mind",
        "I left my keys at home",
    ],
)
def test_how_things_are_just_now_and_requests_are_not_kept(user: str) -> None:
    assert extract_candidates(user, "Noted.") == []


def test_one_of_the_users_people_may_be_named_in_lowercase() -> None:
    found = extract_candidates(
        "maddie has a peanut allergy, carry the epipen always.", "Noted.", people=("Maddie",)
    )
    assert [c.content for c in found] == ["Maddie has a peanut allergy, carry the epipen always."]


@pytest.mark.parametrize(
    "user, content",
    [
        ("this is margaret. 74. live in lubbock texas", "I live in lubbock texas"),
        ("take lisinopril 10mg mornings", "I take lisinopril 10mg mornings"),
        (
            "studying nursing at monash. work at a cafe in brunswick on weekends",
            "I work at a cafe in brunswick on weekends",
        ),
        (
            "The lab got renovated. Moved my slots to tuesday 1-5pm",
            "I moved my slots to tuesday 1-5pm",
        ),
    ],
)
def test_the_user_is_who_a_sentence_without_a_subject_speaks_of(user: str, content: str) -> None:
    assert content in [c.content for c in extract_candidates(user, "Noted.")]


@pytest.mark.parametrize(
    "user, people",
    [
        ("Mateo got home. Went to his room, put on headphones.", ()),
        ("mateo got home. went to his room, put on headphones", ("Mateo",)),
        ("She called at six. Booked the vet for Tuesday at 10.", ()),
    ],
)
def test_after_someone_else_a_sentence_without_a_subject_is_theirs(
    user: str, people: tuple[str, ...]
) -> None:
    assert not any(
        c.content.startswith("I ") for c in extract_candidates(user, "Noted.", people=people)
    )


def test_a_terse_users_notes_are_kept_in_their_slots() -> None:
    told = {
        "boss: Imogen Tate. v nice": "user:manager",
        "allergic: penicillin. just fyi for the health form": "user:allergy:penicillin",
        "cat named Pickle, vet visit fri": "user:pet:cat",
        "gf Juno moving in may": "user:relationship",
    }
    for user, subject in told.items():
        assert [c.subject for c in extract_candidates(user, "Noted.")] == [subject]
    assert [c.content for c in extract_candidates("salary 78k. commute 25 min by bike", "Ok.")] == [
        "My salary is 78k. My commute is 25 min by bike"
    ]


@pytest.mark.parametrize(
    "user, content, subject",
    [
        ("resting hr 60 now", "My resting heart rate is 60 now", "user:metric:resting-heart-rate"),
        (
            "bp this morning at home 126/80",
            "My blood pressure this morning at home is 126/80",
            "user:metric:blood-pressure",
        ),
        (
            "ferritin up to 34!! feeling human again",
            "My ferritin is up to 34!!",
            "user:metric:ferritin",
        ),
        (
            "SQUAT PR 150kg today!!!",
            "My squat personal record is 150kg today!!!",
            "user:metric:squat-best",
        ),
        (
            "checkup with dra benavides: LDL now 128!! she's happy",
            "Checkup with dra benavides: my LDL is now 128!!",
            "user:metric:ldl",
        ),
        ("My 10k PB is 56:40 from last spring", "My 10k PB is 56:40 from last spring", None),
    ],
)
def test_a_tracking_users_measures_are_kept_one_slot_each(
    user: str, content: str, subject: str | None
) -> None:
    [found] = extract_candidates(user, "Noted.")
    assert found.content == content
    assert found.subject == (subject or "user:metric:10k-best")


@pytest.mark.parametrize(
    "user",
    [
        "pulse of the city is 5 stars",
        "mile 3 was hard",
        "10k is a long way",
        "my dad's blood pressure is 150/90",  # his, not the user's
    ],
)
def test_what_only_names_a_measure_fills_no_slot(user: str) -> None:
    assert all(
        not (c.subject or "").startswith("user:metric:") for c in extract_candidates(user, "Noted.")
    )


def test_a_new_reading_of_a_measure_shares_the_old_ones_slot() -> None:
    [old] = extract_candidates("My resting pulse is about 64.", "")
    [new] = extract_candidates("resting hr 57 now", "")
    assert old.subject == new.subject == "user:metric:resting-heart-rate"


@pytest.mark.parametrize(
    "user, kept",
    [
        ("152/94 this morning, pulse 78. Taken sitting, left arm.", True),
        ("Readings this week averaged 141/88.", True),
        ("This month's home average is 128/79! Lowest in years.", True),
        ("Edith's pressure is always perfect, 118/76, she's 71!", False),  # hers
        ("my dad's bp was 150/90 today", False),
        ("I got 110/120 marks", False),  # no reading
    ],
)
def test_a_blood_pressure_reading_said_without_its_name_is_the_users(user: str, kept: bool) -> None:
    subjects = [c.subject for c in extract_candidates(user, "Noted.")]
    assert ("user:metric:blood-pressure" in subjects) is kept


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("My car's a 2016 Skoda Octavia estate.", "My car is a 2016 Skoda Octavia estate."),
        ("My bank's Monzo.", "My bank is Monzo."),
        ("My GP's Dr Okafor.", "My GP is Dr Okafor."),
        ("My mum's in Galway.", "My mum is in Galway."),
        ("My dad's 70.", "My dad is 70."),
        # possessives stay
        ("My daughter's name is Clementine.", "My daughter's name is Clementine."),
        ("My sister's Honda broke down.", "My sister's Honda broke down."),
        (
            "I drove my friend's Ford F-150, which is huge.",
            "I drove my friend's Ford F-150, which is huge.",
        ),
        ("A gift for my dad for Father's Day.", "A gift for my dad for Father's Day."),
    ],
)
def test_an_s_for_is_after_the_users_own_thing_is_said_in_full(typed: str, said: str) -> None:
    assert plain(typed) == said


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("Mum's in hospital again.", "My mum is in hospital again."),
        ("Dad's been unwell since Friday.", "My dad has been unwell since Friday."),
        ("Gran's retiring in May.", "My gran is retiring in May."),
        ("Mum's car broke down.", "Mum's car broke down."),  # hers, not "is"
    ],
)
def test_a_parent_called_as_a_name_is_the_users(typed: str, meant: str) -> None:
    assert plain(typed) == meant
