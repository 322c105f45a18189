"""A statement that something moved to a new time or amount replaces the memory that gave the old one
(curation/changes.py)."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.changes import (
    AMOUNT_SIMILARITY,
    CHANGE_SIMILARITY,
    HOLDER_SIMILARITY,
    NEW_HOLDER,
    NEW_TIME,
    PLACE_SIMILARITY,
    ROUTINE_SIMILARITY,
    change,
    corrected,
    says_changed,
    says_new_amount,
    says_new_plan_or_place,
    tells_of_someone_moving_on,
    tells_only_of,
)
from hermes_bowerbird.types import MemoryType

CLOSE = CHANGE_SIMILARITY + 0.1
STANDUP = "Our team standup is at 9:30 every weekday."


@pytest.mark.parametrize(
    "text",
    [
        "The standup moved to 10am starting next week.",
        "The dentist appointment was pushed back to Friday at 11am.",
        "Book club is now on Wednesdays.",
        "Sprint planning now starts at 11am on Mondays.",
        "The quarterly review has been postponed to March 19th.",
        "Leo's party was rescheduled to Sunday the 16th.",
        "I negotiated the rent down to 1700.",
        "Netflix went up to 17.99.",
        "I raised my step goal to 10000.",
        "The API now runs on port 9000 in dev.",
        "The rate limit is now 500 requests a minute.",
        "Netflix now costs 17.99.",
        "The bar exam got moved to March.",
        "My flight got changed to TP1250 at 9:15.",
        "Adam just turned 8!",
        "Lina is 5 now.",
        "The team moved the standup to 10am.",
        "I switched climbing days to Mondays.",
        "Penguin extended the deadline to January 10th.",
        "I'm at 27 books now!",
        "Staging moved to staging2.acme.dev.",
        "We migrated the repo to gitlab.com/acme/billing.",
        "I switched my phone to Koodo, $39 for 60GB.",
        "We moved our savings over to Monzo.",
        "I've switched my walk to the evening, around 6:30 pm.",
        "June 15 got pushed, the full draft is now due July 31.",
        "The gym time changed too, so I go Tuesday and Thursday evenings now.",
        "We changed the trip, it's Okinawa now instead of Hokkaido.",
        "Coworking is fridays only now.",
        "The launch slipped, beta is now May 16.",
        "The hearing slipped to June.",
        "Mrs. Pakula retired, new nurse is Mr. Thorsen.",
        "tidewell-auth is now owned by Jun Takeda.",
        "The Boston trip got pushed back a week, it's now 16 to 20 September.",
        "Emirates changed our flight, we now leave on 20 December and come back 8 January.",
        "So the NIE appointment got rebooked as well, it's now 16 April at 9:00.",
        "Cheikh's trip pushed to 2-9 june now.",
        "So the new rent is €1,203 per month from july.",
        "georgian lessons moved to sun mornings",
        # as a learner or a note says it
        "solicitor appointment move to 24 october because Ms Baird is sick",
        "USCIS move it to 4 december, same hour same place",
        "From november they change me to night shift, 10 evening to 6 morning.",
        "Oh and the ENT letter came, it's moved again to 2 October at 2.40 in the afternoon.",
        "The Traversée is pushed back a week to 30 August because of the algae.",
        "Larchmont dashboard launch moved Mar 3 -> Mar 24",
        "the mt hutt shoot was 14 june but snow is late so its now 5 july",
        "the cataract is moved AGAIN, now it's Thursday 19th June at half past one",
        "heart test got bumped again, they called, it's November 12 at 8:15 now.",
        "Klemen change the plan: long run now sunday",
        "Riverbend change my schedule, now I am day shift 7am to 3pm, monday to friday.",
        "New rota from January: gym moves to Tuesday, Thursday and Saturday, same 7am.",
        "Mr Hogan say from march rent is 1450",
        "landlord put rent up to 250 a week from 1 april",
        "day rate going to $1,050 + gst from 1 april",
        "Mr Devlin say rent going up, from january is 520 pound.",
        "Ingeborg want more money, we agree 140 kr per hour from now",
        "Chloe raise her price, now $20 per hour",
        "I send mama now 350 every month because her medicine more expensive",
        "the bank change my mortgage rate, now I pay 1295 euro per month, not 1230 anymore",
        "7 of the Croatian guests can not come, so the final number is 88",
        "guest list up to 165",
        "ugh, Northgate pushed the second interview to Monday 13 October at 2:30",
        "Northgate moved it AGAIN, now Wednesday 15 October at 10am",
    ],
)
def test_a_move_to_a_new_time_or_amount_is_a_change(text: str) -> None:
    assert says_changed(text)


@pytest.mark.parametrize(
    "text",
    [
        "Should we move the standup to 10am?",  # asked
        "We might move the standup to 10am.",  # only thought about
        "I'm thinking of moving yoga to 7pm.",
        "I think the standup moved to 10am.",  # a guess
        "The standup is at 10am.",  # no word that it moved
        "Rent is 1300 a month.",  # no word that it changed
        "Rent might go up to 1300.",  # only thought about
        "I'm looking to bump that up to 10,000 steps.",  # a plan
        "I don't mind driving up to 4 hours.",  # a limit
        "My fixed expenses add up to around $3,500.",  # a sum
        "I just moved to Tokyo today (2023-05-29).",  # no schedule moved
        "I moved to Berlin on the 3rd.",  # no schedule moved, and no new name with a number
        "She may move to the new office.",  # the verb "may" is no month
        "The heating turned 20 degrees warmer.",  # no age
        "I moved my studio to my flat.",  # no time
        "I'm at the gym now.",  # no count
        "I might switch my phone to Koodo.",  # only thought about
        "I switched my plan to the 60GB one.",  # no new name
        "My work hours changed.",  # no new time
        "I might go with Okinawa instead of Hokkaido.",  # only thought about
        "I take the bus instead of driving.",  # no value named
        "I moved up to Leeds in may.",
        "We may move it.",
        "I just got an oil change on March 2nd, so the odometer reading is current.",  # a noun
        "I filled out the paperwork for the name change on January 5th.",
        "I'm going to 3 concerts this summer.",  # a plan, and no price
    ],
)
def test_a_plan_a_question_or_no_new_value_is_no_change(text: str) -> None:
    assert not says_changed(text)


@pytest.mark.parametrize(
    ("item", "statement"),
    [
        (
            "I booked the Boston trip for the FDA meeting: 9 to 13 September.",
            "The Boston trip got pushed back a week, it's now 16 to 20 September.",
        ),
        (
            "I start on September 2 at the new firm.",
            "They pushed my start to September 9, the office is being renovated.",
        ),
    ],
)
def test_a_span_of_days_and_a_start_moved_are_new_times(item: str, statement: str) -> None:
    assert change(MemoryType.EVENT, item, statement, 0.6) == NEW_TIME


def test_a_date_said_to_be_now_is_a_new_time_and_a_price_a_new_amount() -> None:
    beta = "The beta launches on May 9, we're all nervous."
    assert (
        change(MemoryType.EVENT, beta, "The launch slipped, beta is now May 16.", 0.74) == NEW_TIME
    )
    assert change(
        MemoryType.FACT, "Netflix costs 15.99 a month.", "Netflix is now 17.99.", 0.8
    ) == ("changed: a new amount for the same thing")


@pytest.mark.parametrize(
    ("item", "statement", "similarity", "replaced"),
    [
        (
            "Amara's school nurse is Mrs. Pakula, she handles the inhaler forms.",
            "Mrs. Pakula retired, new nurse is Mr. Thorsen.",
            0.6,
            True,
        ),
        (
            "Our team lead is Priya Raman.",
            "Dana is the new team lead, Priya moved to platform.",
            0.42,
            True,
        ),
        (
            "Leo's teacher is Ms. Brandt this year.",
            "Ms. Ruiz took over as Leo's teacher after half term.",
            0.62,
            True,
        ),
        ("Leo's teacher is Ms. Brandt this year.", "Ms. Ruiz is Leo's new teacher.", 0.6, True),
        (
            "My supervisor is Dr Hine Tawhiri in Marine Science.",
            "Hine is going on research leave, so my main supervisor is now Assoc Prof Marcus Lindqvist-Tane",
            0.5,
            True,
        ),
        (
            "My supervisor is Dr Alun Prothero, he takes ages to reply",
            "Dr Prothero is going on leave in March so Dr Hannah Wexley is taking over as my supervisor",
            0.5,
            True,
        ),
        (
            "tidewell-auth is owned by Priya's team.",
            "tidewell-auth is now owned by Jun Takeda.",
            0.81,
            True,
        ),
        # another role, the same holder said again, nobody named before, too far apart
        ("My GP is Dr. Hale.", "Mrs. Pakula retired, new nurse is Mr. Thorsen.", 0.6, False),
        ("Dana joined the team in March.", "Dana is the new team lead.", 0.8, False),
        ("Our team lead is great.", "Dana is the new team lead.", 0.6, False),
        (
            "Our team lead is Priya Raman.",
            "Dana is the new team lead.",
            HOLDER_SIMILARITY - 0.05,
            False,
        ),
        # someone merely new is no successor
        ("Our nurse is Mrs. Pakula.", "We met a new nurse today, Tom is lovely.", 0.6, False),
    ],
)
def test_someone_new_in_a_role_replaces_who_held_it(
    item: str, statement: str, similarity: float, replaced: bool
) -> None:
    assert (change(MemoryType.FACT, item, statement, similarity) == NEW_HOLDER) is replaced


@pytest.mark.parametrize(
    "item, statement",
    [
        (STANDUP, "The standup moved to 10am starting next week."),
        (
            "My dentist appointment is on Thursday at 3pm.",
            "The dentist appointment was pushed to Friday.",
        ),
        (
            "Piano lessons for Mia are on Wednesdays at 4.",
            "Mia's piano lesson moved to Thursdays at 5pm.",
        ),
        (
            "The on-call rotation on my team switches every Monday at 9am.",
            "On-call now switches on Tuesdays at 10am.",
        ),
        (
            "Our book club meets on the last Friday of the month.",
            "Book club now meets on Thursdays.",
        ),
        (
            "I'm studying for the bar exam in February, so I'm pretty stressed.",
            "The bar exam got moved to March.",
        ),
        (
            "My flight to Lisbon is TP1234 on the 12th, leaving at 7:40.",
            "My flight got changed to TP1250 at 9:15.",
        ),
        # moved by someone, of someone's; brought forward, a month in lowercase
        (
            "Amara's 3-year check-up is April 9 at 10:15 with Dr. Okonjo.",
            "Dr. Okonjo moved Amara's check-up to April 16, same time.",
        ),
        ("The investor demo is June 3.", "demo moved up to may 28"),
        # a day ahead, anchored to its date
        (
            "I have a vet appointment for Rex tomorrow at 9 (2026-11-28)",
            "The vet appointment for Rex moved to Friday.",
        ),
        # a deadline
        (
            "My supervisor Dr. Chen wants a full draft by June 15.",
            "June 15 got pushed, the full draft is now due July 31.",
        ),
        # said to have changed, the new time after
        (
            "I go to the gym at 6am on Monday, Wednesday and Friday before work.",
            "The gym time changed too, they opened a 7pm class so I go Tuesday and Thursday evenings now.",
        ),
        # at a time now
        (
            "I work from Whisky Bond coworking on mondays and thursdays.",
            "Coworking is fridays only now.",
        ),
        # a part of the day
        (
            "I walk every morning at 7 for about 40 minutes.",
            "I've switched my walk to the evening, around 6:30 pm, it's cooler.",
        ),
    ],
)
def test_a_new_time_for_the_same_thing_replaces_the_old(item: str, statement: str) -> None:
    assert (
        change(MemoryType.FACT, item, statement, CLOSE) == "changed: a new time for the same thing"
    )


def test_a_routine_needs_a_lower_cosine_only_where_asked() -> None:
    item = "I play bass in a band called The Lowlands, we rehearse on Thursdays."
    statement = "Our rehearsals moved to Wednesdays."
    assert change(MemoryType.PREFERENCE, item, statement, 0.42) is None
    assert (
        change(MemoryType.PREFERENCE, item, statement, 0.42, time_floor=ROUTINE_SIMILARITY)
        == "changed: a new time for the same thing"
    )
    assert change(MemoryType.PREFERENCE, item, "Yoga moved to Wednesdays.", 0.9) is None


def test_a_todo_moved_to_a_new_time_is_replaced() -> None:
    todo = "I need to call the plumber on Tuesday."
    assert change(MemoryType.TODO, todo, "The plumber call moved to Wednesday.", CLOSE) == (
        "changed: a new time for the same thing"
    )


@pytest.mark.parametrize(
    ("item", "statement", "replaced"),
    [
        (
            "My phone is with Fido, $55 a month for 20GB.",
            "I switched my phone to Koodo, $39 for 60GB.",
            True,
        ),
        (
            "Our energy supplier is British Gas.",
            "I've changed my energy supplier to Octopus.",
            True,
        ),
        ("I keep my notes in Notion.", "I moved my notes to Obsidian.", True),
        # someone else's, another thing, the new name already, no name
        ("My sister's phone is with Fido.", "I switched my phone to Koodo.", False),
        ("I pay for Netflix and Spotify.", "I switched my phone to Koodo.", False),
        ("My phone is with Koodo now, $39.", "I switched my phone to Koodo.", False),
        ("My phone is always on silent.", "I switched my phone to Koodo.", False),
    ],
)
def test_a_thing_moved_to_a_new_provider_replaces_the_old(
    item: str, statement: str, replaced: bool
) -> None:
    why = change(MemoryType.FACT, item, statement, CLOSE)
    assert (why == "changed: a new provider for the same thing") == replaced


@pytest.mark.parametrize(
    ("item", "statement", "replaced"),
    [
        (
            "We're planning Golden Week in Hokkaido, Sapporo and Otaru, with our daughter Hana.",
            "We changed the trip, it's Okinawa now instead of Hokkaido, Hana wanted the beach.",
            True,
        ),
        # no word naming the thing besides the value
        ("My sister lives in Tokyo.", "I'm flying to Osaka instead of Tokyo.", False),
        # the old value is not in the memory
        ("We're planning a trip to Kyoto.", "It's Okinawa now instead of Hokkaido.", False),
        # what the user left for another, said as leaving it
        (
            "My gym is PureGym on Leith Walk.",
            "I quit PureGym and joined the climbing gym at Ratho.",
            True,
        ),
        (
            "I booked the Marriott for the Denver conference.",
            "I cancelled the Marriott and booked the Hilton instead.",
            True,
        ),
        (
            "I bank with Barclays, have done for years.",
            "I left Barclays for Monzo last month.",
            True,
        ),
        # ...but what someone else said of it, or a memory that never named it
        ("My brother works at Barclays.", "I left Barclays for Monzo last month.", False),
        ("My gym is on Leith Walk.", "I quit PureGym and joined the climbing gym at Ratho.", False),
        # ...and leaving with nothing in its place
        ("My gym is PureGym on Leith Walk.", "I quit PureGym last week.", False),
    ],
)
def test_a_new_value_instead_of_a_named_old_one_replaces_it(
    item: str, statement: str, replaced: bool
) -> None:
    why = change(MemoryType.FACT, item, statement, CLOSE)
    assert (why == "changed: a new value instead of the old") == replaced


@pytest.mark.parametrize(
    "item, statement",
    [
        (
            "My landlord is raising the rent to 1850 a month from January.",
            "I negotiated the rent down to 1700.",
        ),
        (
            "Our Netflix plan costs 15.49 a month.",
            "Netflix went up to 17.99.",
        ),  # 15.49 is a price, not a time
        ("My daily step goal is 8000 steps.", "I raised my step goal to 10000."),
        (
            "Our API runs on port 8080 in dev.",
            "The API now runs on port 9000 in dev, 8080 clashed with something.",
        ),
        ("My son Adam is 7 and my daughter Lina is 4.", "Adam just turned 8!"),
        ("I'm trying to read 30 books this year, I'm at 22 so far.", "I'm at 27 books now!"),
        # the date it changes from is no old amount
        (
            "I rent a room in Henderson, rent is 230 a week.",
            "landlord put rent up to 250 a week from 1 april",
        ),
        (
            "Sometimes babysitter Chloe come, $18 per hour",
            "Chloe raise her price, now $20 per hour",
        ),
    ],
)
def test_a_new_amount_for_the_same_thing_replaces_the_old(item: str, statement: str) -> None:
    assert (
        change(MemoryType.FACT, item, statement, AMOUNT_SIMILARITY + 0.05)
        == "changed: a new amount for the same thing"
    )


@pytest.mark.parametrize(
    "item, statement, reason",
    [
        (
            "Staging lives at staging.acme.dev.",
            "Staging moved to staging2.acme.dev.",
            "changed: a new address for the same thing",
        ),
        (
            "The repo is github.com/acme/billing.",
            "We migrated the repo to gitlab.com/acme/billing.",
            "changed: a new address for the same thing",
        ),
        # the addresses share "acme", the things nothing
        ("The repo is github.com/acme/billing.", "Staging moved to staging2.acme.dev.", None),
        ("Staging is the place to try things.", "Staging moved to staging2.acme.dev.", None),
    ],
)
def test_a_new_address_for_the_same_thing_replaces_the_old(
    item: str, statement: str, reason: str | None
) -> None:
    assert change(MemoryType.FACT, item, statement, CLOSE) == reason


MEERA = "My sister Meera lives in Toronto and works as a nurse."


@pytest.mark.parametrize(
    "item, statement, reason",
    [
        (
            MEERA,
            "Meera moved to Vancouver for a new hospital job.",
            "changed: a new place for the same thing",
        ),
        (
            "My best friend Jonas lives in Munich.",
            "Jonas has moved to Hamburg.",
            "changed: a new place for the same thing",
        ),
        (
            "My brother Tom is based in Dublin.",
            "Tom relocated to Cork for work.",
            "changed: a new place for the same thing",
        ),
        (
            "My friend Ana lives in Porto.",
            "Ana now lives in Lisbon.",
            "changed: a new place for the same thing",
        ),
        (MEERA, "Jonas moved to Vancouver last month.", None),  # someone else
        (MEERA, "She moved to Vancouver last month.", None),  # whose move is not said
        (MEERA, "Meera moved back to Toronto.", None),  # no new place
        (MEERA, "Meera is moving to Vancouver next month.", None),  # a plan
        (MEERA, "Meera might move to Vancouver.", None),
        (
            "My sister Meera works as a nurse.",
            "Meera moved to Vancouver.",
            None,
        ),  # said nothing of where
        ("Meera and I went to Toronto for a week.", "Meera moved to Vancouver.", None),
    ],
)
def test_someone_named_who_moved_replaces_where_they_lived(
    item: str, statement: str, reason: str | None
) -> None:
    assert change(MemoryType.IDENTITY, item, statement, PLACE_SIMILARITY + 0.05) == reason
    assert change(MemoryType.IDENTITY, item, statement, PLACE_SIMILARITY - 0.01) is None


@pytest.mark.parametrize(
    "item, statement, similarity",
    [
        ("My rent is 1200 a month.", "The deposit went up to 2400.", 0.9),  # another amount
        (
            "Our team meeting is at 3pm.",
            "The team meeting was cut to 30 minutes.",
            0.9,
        ),  # the item gave a time
        ("My rent is 1200 a month.", "Rent went up to 1300 in March.", AMOUNT_SIMILARITY - 0.01),
        ("My son Adam is 7.", "Lina just turned 5!", 0.9),  # another child
        # the thing named beside the new amount, not the one it is of
        (
            "We've booked the venue already, the Tithe Barn near Wells, deposit was £2,500.",
            "Guest list is down to 70 now, the new venue is smaller.",
            0.9,
        ),
    ],
)
def test_other_amounts_and_weak_matches_are_left_alone(
    item: str, statement: str, similarity: float
) -> None:
    assert change(MemoryType.FACT, item, statement, similarity) is None


@pytest.mark.parametrize(
    "item_type, item, statement, similarity",
    [
        # another thing: only times and framing in common ("moved", "Monday", "10am")
        (MemoryType.FACT, STANDUP, "The retro moved to Thursday at 2pm.", CLOSE),
        (
            MemoryType.FACT,
            "The garbage is collected on Mondays.",
            "The recycling pickup moved to Wednesday.",
            CLOSE,
        ),
        # the same thing, but not close enough in meaning
        (
            MemoryType.FACT,
            STANDUP,
            "The standup moved to 10am starting next week.",
            CHANGE_SIMILARITY - 0.01,
        ),
        # the item gives no time; the date it was anchored to says when it happened, not when it is set for
        (MemoryType.FACT, "Our team standup is run by Priya.", "The standup moved to 10am.", CLOSE),
        (
            MemoryType.EVENT,
            "We opened a second branch in Kilimani last week! (around 2026-11-20)",
            "We're now open on Sundays at Kilimani, 8am to 2pm.",
            CLOSE,
        ),
        # a todo is not changed by a new amount
        (
            MemoryType.TODO,
            "I need to pay the 500 deposit for the flat.",
            "The deposit went up to 600.",
            CLOSE,
        ),
        # the statement says no move
        (MemoryType.FACT, STANDUP, "The standup is at 10am on Fridays.", CLOSE),
    ],
)
def test_other_things_and_weak_matches_are_left_alone(
    item_type: MemoryType, item: str, statement: str, similarity: float
) -> None:
    assert change(item_type, item, statement, similarity) is None


@pytest.mark.parametrize(
    ("item", "statement", "similarity", "replaced"),
    [
        (
            "My daughter's name is Clementina and she's 6.",
            "Sorry, I misspelled it: my daughter's name is Clementine, not Clementina.",
            0.76,
            True,
        ),
        (
            "My birthday is on the 12th of April.",
            "Actually my birthday is the 21st of April, not the 12th.",
            0.89,
            True,
        ),
        ("We use MySQL for the app.", "We use Postgres, not MySQL.", 0.7, True),
        # one value set against another of its kind, the sentence going on; a day's number with or without its ending
        (
            "I do spin class tuesday evenings at the leisure centre.",
            "Spin is thursday not tuesday, they changed the timetable in March.",
            0.44,
            True,
        ),
        (
            "My mum's birthday is 3 March, need to get a card.",
            "Mum's birthday is the 13th of March, not the 3rd.",
            0.8,
            True,
        ),
        ("The gym is open on monday.", "I go on friday not monday because of work.", 0.55, False),
        (  # too far apart even so
            "I do spin class tuesday evenings.",
            "Spin is thursday not tuesday.",
            0.35,
            False,
        ),
        ("I have 3 kids.", "I work 4 days not 5.", 0.5, False),  # no thing in common
        # an allergen said to be fine after all, where allergies are spoken of
        (
            "I'm allergic to penicillin so the travel insurance form needs that.",
            "It's sulfa drugs I'm allergic to, penicillin is fine, I checked my file with the GP.",
            0.54,
            True,
        ),
        ("My birthday is the 3rd.", "The 3rd is fine.", 0.7, False),
        # the wrong value in another memory, about another thing
        ("My sister lives in Tokyo.", "I'm flying to Osaka, not Tokyo!", 0.63, False),
        ("I work at Acme with Tom.", "The meeting is with Sarah, not Tom.", 0.51, False),
        # no value named wrong, a question, a hedge, too far apart
        ("I drink coffee every morning.", "I like tea, not coffee.", 0.6, False),
        ("My daughter's name is Clementina.", "Is it Clementine, not Clementina?", 0.8, False),
        ("I'm flying to Tokyo on the 3rd.", "Maybe it's Osaka, not Tokyo.", 0.7, False),
        # a plan corrected is corrected
        (
            "We're going to Sardinia in June for the anniversary.",
            "We're going to Crete, not Sardinia.",
            0.74,
            True,
        ),
        (
            "My birthday is on the 12th of April.",
            "My birthday is the 21st, not the 12th.",
            0.45,
            False,
        ),
    ],
)
def test_a_correction_replaces_the_value_it_names_wrong(
    item: str, statement: str, similarity: float, replaced: bool
) -> None:
    assert (corrected(item, statement, similarity) is not None) is replaced
    if replaced:
        assert says_changed(statement)


def test_a_new_time_said_against_its_old_one_replaces_only_the_memory_of_the_old() -> None:
    due = "Dissertation is now due 16 May instead of 2 May"
    assert (
        change(MemoryType.FACT, "The final dissertation hand-in is 2 May at noon", due, 0.5)
        == NEW_TIME
    )
    exam = "My GIS module exam is on 14 January, so I can't do much dissertation stuff before then"
    assert change(MemoryType.FACT, exam, due, 0.5) is None
    moved = "nephrologist appt got moved from sept 19 to oct 3 at 11:15"
    assert (
        change(MemoryType.FACT, "My nephrologist is Dr. Kessler, appt Sept 19", moved, 0.5)
        == NEW_TIME
    )
    assert change(MemoryType.FACT, "My nephrologist appointment is on Sept 22", moved, 0.5) is None


def test_an_amount_raised_or_bumped_is_a_new_amount() -> None:
    budget = "Our total budget for everything is £42,000, so it's tight"
    raised = "We've agreed to raise the whole budget to £52,000, my dad's lending us the difference"
    assert (
        change(MemoryType.FACT, budget, raised, 0.6) == "changed: a new amount for the same thing"
    )
    pot = "The extras pot is £9,500 for now"
    assert change(MemoryType.FACT, pot, "we bumped the extras pot to £11,000", 0.6) is not None


def test_a_new_amount_said_against_its_old_one_replaces_only_a_memory_holding_the_old() -> None:
    now = "And the afternoon hydrocortisone is now 2.5 mg instead of 5, because I couldn't sleep"
    kit = "I carry an emergency injection kit, 100 mg hydrocortisone, in my bag always"
    assert change(MemoryType.FACT, kit, now, 0.5) is None
    doses = "Hydrocortisone: 10 mg when I wake, 5 mg at noon, 5 mg at 4pm"
    assert change(MemoryType.FACT, doses, now, 0.5) == "changed: a new amount for the same thing"


@pytest.mark.parametrize(
    "text, paid",
    [
        ("Mr Hogan say from march rent is 1450", True),
        ("Chloe raise her price, now $20 per hour", True),
        ("day rate going to $1,050 + gst from 1 april", True),
        ("We now pay Chloe £9.50 an hour.", True),
        ("now I pay her £12 for the afternoon", True),
        ("We now pay attention to 3 things.", False),  # no one paid, no price
        ("rent is €1,450 a month now", True),
        ("it costs $5 now and then", False),
        ("Netflix went up to 17.99.", False),  # a price of the world
        ("I raised my step goal to 10000.", False),
        ("The rent is fine.", False),  # no new amount
    ],
)
def test_a_new_amount_of_what_the_user_pays_is_news_of_its_own(text: str, paid: bool) -> None:
    assert says_new_amount(text) is paid


def test_a_new_amount_in_the_same_currency_is_no_change_to_another_thing() -> None:
    desk = "I work from a fixed desk at Oficina Sete coworking, 120 euro per month"
    rate = "From now my day rate is 450 euro, I tell all clients already"
    assert change(MemoryType.FACT, desk, rate, CLOSE) is None
    assert change(MemoryType.FACT, "My rate is 380 euro per day", rate, CLOSE) is not None


@pytest.mark.parametrize(
    ("item", "statement", "replaced"),
    [
        (
            "My running goal is a sub-50 10k this year.",
            "New goal: I want to run a half marathon under two hours this year.",
            True,
        ),
        ("My laptop is a ThinkPad X1.", "My new laptop is a MacBook Air, the ThinkPad died.", True),
        ("My weekly grocery budget is £80.", "New weekly budget: £95 for groceries.", True),
        # a new thing the memory gave no value of as the user's own, or one only thought about
        ("I'd love a MacBook one day.", "My new laptop is a MacBook Air.", False),
        ("My running goal is a sub-50 10k.", "New goal: maybe a half marathon?", False),
        ("New York is lovely in May.", "New York is where we met.", False),
    ],
)
def test_a_value_said_as_new_replaces_the_users_own_old_value(
    item: str, statement: str, replaced: bool
) -> None:
    why = change(MemoryType.FACT, item, statement, CLOSE)
    assert (why == "changed: a new value instead of the old") == replaced


@pytest.mark.parametrize(
    ("item", "statement"),
    [
        (
            "We pay our babysitter Chloe £8 an hour, she comes Tuesdays.",
            "Chloe comes on Wednesdays now.",
        ),
        ("My physio Anna sees me on Mondays at 8.", "Anna sees me on Thursdays now."),
        ("I do yoga with Priti on Saturdays.", "Priti moved yoga to Sundays."),
    ],
)
def test_a_weekday_said_as_now_or_a_thing_moved_to_one_is_a_new_time(
    item: str, statement: str
) -> None:
    assert change(MemoryType.FACT, item, statement, CLOSE) == NEW_TIME


def test_a_weekday_now_and_then_is_no_new_time() -> None:
    assert not says_changed("We see Anna on Thursdays now and then.")


@pytest.mark.parametrize(
    ("item", "statement", "replaced"),
    [
        (
            "My allergist says I'm allergic to shellfish.",
            "Turns out it's not shellfish, I'm allergic to peanuts.",
            True,
        ),
        (
            "I'm allergic to penicillin.",
            "It isn't penicillin I react to, I'm allergic to sulfa.",
            True,
        ),
        # no allergen said not to be one
        ("I'm allergic to cats.", "It's not a big deal but I'm allergic to dust too.", False),
        ("I'm allergic to shellfish.", "It's not shellfish season yet.", False),  # no allergy said
    ],
)
def test_an_allergen_said_not_to_be_one_is_corrected(
    item: str, statement: str, replaced: bool
) -> None:
    assert (corrected(item, statement, CLOSE) is not None) is replaced


@pytest.mark.parametrize(
    ("item_type", "item", "statement", "replaced"),
    [
        (
            MemoryType.FACT,
            "We're painting the living room dusty blue this weekend.",
            "We changed our minds on the living room, we're going with sage green instead.",
            True,
        ),
        (
            MemoryType.DECISION,
            "We decided on the Golf for the new car.",
            "I've changed my mind about the car, getting the Octavia.",
            True,
        ),
        # no plan, another thing
        (
            MemoryType.FACT,
            "Our living room is four by five metres.",
            "We changed our minds on the living room, we're going with sage green instead.",
            False,
        ),
        (
            MemoryType.FACT,
            "We're painting the kitchen white this weekend.",
            "We changed our minds on the living room, we're going with sage green instead.",
            False,
        ),
    ],
)
def test_a_plan_the_user_changed_their_mind_on_is_replaced(
    item_type: MemoryType, item: str, statement: str, replaced: bool
) -> None:
    why = change(item_type, item, statement, CLOSE)
    assert (why == "changed: the user changed their mind") == replaced


@pytest.mark.parametrize(
    ("item", "statement", "replaced"),
    [
        (
            "The team offsite is in Manchester on the 14th.",
            "Heads up, the offsite moved to Leeds.",
            True,
        ),
        (
            "Book club meets at the Crown on Fridays.",
            "Our book club has moved to the Anchor.",
            True,
        ),
        (
            "We're having the party at our house.",
            "We've moved the party to the village hall.",
            True,
        ),
        (
            "Our standup is in the small meeting room at 9:30.",
            "The standup moved to the big meeting room.",
            True,
        ),
        # a person's move, the new place already, another thing
        (
            "The team offsite is in Leeds on the 14th.",
            "Heads up, the offsite moved to Leeds.",
            False,
        ),
        ("Our wedding is in York in June.", "Heads up, the offsite moved to Leeds.", False),
        ("The Marcus I know lives in Leeds.", "The Marcus who moved to Austin sent a card.", False),
    ],
)
def test_a_thing_moved_to_a_new_place_replaces_where_it_was(
    item: str, statement: str, replaced: bool
) -> None:
    why = change(MemoryType.FACT, item, statement, CLOSE)
    assert (why == "changed: a new venue for the same thing") == replaced


def test_a_plural_names_the_same_thing_as_its_singular() -> None:
    assert (
        change(
            MemoryType.EVENT,
            "Bins go out on Tuesday nights here.",
            "The council changed our bin day to Thursday.",
            CLOSE,
        )
        == NEW_TIME
    )


def test_an_item_telling_only_the_thing_whose_time_changed() -> None:
    moved = "My work-from-home day is Wednesday now."
    assert tells_only_of("I work from home on Fridays.", moved)
    assert not tells_only_of("I work from home on Fridays and swim on Mondays.", moved)
    assert not tells_only_of(
        "I live in Leeds and visit Mum on Sundays.", "Mum's visits moved to Saturdays."
    )


def test_a_new_plan_or_place_is_news_of_its_own() -> None:
    assert says_new_plan_or_place("Changed our minds about the trip, we're doing Lisbon instead.")
    assert says_new_plan_or_place("Heads up, the offsite moved to Leeds.")
    assert not says_new_plan_or_place("I changed my mind.")


@pytest.mark.parametrize(
    ("item", "statement", "replaced"),
    [
        ("I'm reading Middlemarch at the moment.", "I'm reading The Overstory now.", True),
        ("We're watching The Bear on Disney+.", "We're watching Slow Horses now.", True),
        ("I'm learning Spanish on Duolingo.", "I'm learning Italian now instead.", True),
        (
            "I'm training for the Edinburgh marathon.",
            "I'm now training for the Berlin marathon.",
            True,
        ),
        # another doing, the same thing, or nothing named
        ("I'm training for the Edinburgh marathon.", "I'm reading The Overstory now.", False),
        ("I'm reading The Overstory.", "I'm reading The Overstory now.", False),
        ("I'm reading Middlemarch at the moment.", "I'm reading a lot now.", False),
    ],
)
def test_a_new_thing_done_the_same_way_replaces_the_old(
    item: str, statement: str, replaced: bool
) -> None:
    why = change(MemoryType.FACT, item, statement, 0.35)
    assert (why == "changed: a new thing done the same way") == replaced


@pytest.mark.parametrize(
    ("item", "statement", "replaced"),
    [
        ("I'm reading Wolf Hall at the moment.", "I finished Wolf Hall on Sunday.", True),
        ("We're watching Slow Horses.", "We've finally finished watching Slow Horses.", True),
        (
            "I'm reading The Mirror and the Light.",
            "I finished The Mirror and the Light, what a book.",
            True,
        ),
        # not what the user was doing, or another thing finished
        ("Wolf Hall is my favourite book.", "I finished Wolf Hall.", False),
        ("I'm reading Wolf Hall.", "I finished Middlemarch.", False),
        ("I'm reading Wolf Hall.", "Have you finished Wolf Hall?", False),
    ],
)
def test_what_the_user_finished_ends_their_doing_it(
    item: str, statement: str, replaced: bool
) -> None:
    why = change(MemoryType.FACT, item, statement, 0.35)
    assert (why == "changed: the thing the user was doing is done") == replaced


@pytest.mark.parametrize(
    ("item", "statement", "why"),
    [
        (
            "My work email is sam@acme.com.",
            "My work email changed to sam.lee@acme.io.",
            "changed: a new address for the same thing",
        ),
        (
            "Our cleaner comes on Thursdays.",
            "The cleaner can only do Mondays from now on.",
            NEW_TIME,
        ),
        ("I go to the gym at 7am.", "Gym's at 6 now.", NEW_TIME),
    ],
)
def test_an_email_a_day_from_now_on_and_an_hour_now_are_new_values(
    item: str, statement: str, why: str
) -> None:
    assert change(MemoryType.FACT, item, statement, CLOSE) == why


def test_someone_who_has_moved_up_replaces_where_they_lived() -> None:
    assert (
        change(
            MemoryType.IDENTITY,
            "My sister Jo lives in Brighton.",
            "Jo's moved up to Glasgow for work.",
            CLOSE,
        )
        == "changed: a new place for the same thing"
    )


def test_an_amount_bumped_up_with_its_owner_named_is_a_new_amount() -> None:
    assert (
        change(
            MemoryType.FACT,
            "My standing order to Mum is £50 a month.",
            "I bumped Mum's standing order up to £75.",
            CLOSE,
        )
        == "changed: a new amount for the same thing"
    )


@pytest.mark.parametrize(
    ("item", "statement", "replaced"),
    [
        ("Ana works at Deloitte as an auditor.", "Ana started at PwC this week.", True),
        ("Tom is a designer at Monzo.", "Tom has joined Revolut.", True),
        # someone else, the same place, no workplace said, no place named
        ("Priya works at Deloitte.", "Ana started at PwC this week.", False),
        ("Ana works at PwC.", "Ana started at PwC this week.", False),
        ("Ana lives in Leeds.", "Ana started at PwC this week.", False),
        ("Ana works at Deloitte.", "Ana started at the gym today.", False),
    ],
)
def test_someone_who_started_somewhere_new_replaces_where_they_worked(
    item: str, statement: str, replaced: bool
) -> None:
    why = change(MemoryType.FACT, item, statement, CLOSE)
    assert (why == "changed: a new workplace for the same thing") == replaced


def test_news_of_someone_a_memory_names_moving_on() -> None:
    said = "My wife Ana works at Deloitte."
    assert tells_of_someone_moving_on(said, "Ana started at PwC this week.")
    assert tells_of_someone_moving_on(said, "Ana's moved to Leeds.")
    assert not tells_of_someone_moving_on(said, "Priya started at PwC this week.")
