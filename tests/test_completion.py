"""Completion: which statements say a task is done, and which open todo such a statement closes."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.completion import (
    COMPLETION_SIMILARITY,
    DROP_SIMILARITY,
    ECHO_SIMILARITY,
    FIX_SIMILARITY,
    HAPPENED_SIMILARITY,
    closure,
    completion_words,
    says_booked,
    says_dropped,
    says_happened,
)
from hermes_bowerbird.types import MemoryType

TODO, EVENT, FACT = MemoryType.TODO, MemoryType.EVENT, MemoryType.FACT


@pytest.mark.parametrize(
    "text",
    [
        "Rate limiting on /sync is done, I merged it this morning.",
        "I renewed my passport yesterday, finally.",
        "Flights for Lisbon are booked!",
        "Called the plumber, he's coming on Tuesday to fix the tap.",
        "The billing migration to Postgres 16 has been deployed.",
        "We've shipped the 1.0 release notes.",
        "I finally got round to cancelling the gym membership.",
        "Just emailed Priya the quarterly report.",
        "The car insurance is sorted out for another year.",
        "I took care of the council tax bill.",
        "Expense report submitted!",
        "Invoice paid.",
    ],
)
def test_statements_that_say_a_task_is_done(text: str) -> None:
    assert completion_words(text)


@pytest.mark.parametrize(
    "text",
    [
        "I need to renew my passport before June.",
        "Remind me to call the plumber about the leaking kitchen tap.",
        "The plumber hasn't called back yet.",
        "Rate limiting is not done yet.",
        "The report is almost finished.",
        "I booked the hotel but still need to book the flights.",
        "I will have renewed it by June.",
        "TODO: write the release notes for 1.0.",
        "I'm going to cancel the gym membership next week.",
        "The migration is half done.",
        "I'll book the flights once I've finished the report.",
        "Report still not submitted.",
    ],
)
def test_statements_that_leave_a_task_open(text: str) -> None:
    assert completion_words(text) == []


PASSPORT = "I need to renew my passport before June."


@pytest.mark.parametrize(
    ("why", "todo_type", "todo", "statement_type", "statement", "similarity", "closed"),
    [
        (
            "done, alike, a shared thing",
            TODO,
            PASSPORT,
            EVENT,
            "I renewed my passport.",
            0.69,
            True,
        ),
        (
            "at the threshold",
            TODO,
            PASSPORT,
            EVENT,
            "I renewed my passport.",
            COMPLETION_SIMILARITY,
            True,
        ),
        (
            "too far apart in meaning",
            TODO,
            PASSPORT,
            EVENT,
            "The passport is all done.",
            0.5,
            False,
        ),
        # the todo's own verb ("renewed" for "renew") may close it further apart, not "done"
        ("its own verb", TODO, PASSPORT, EVENT, "I renewed my passport.", ECHO_SIMILARITY, True),
        (
            "its own verb, too far apart",
            TODO,
            PASSPORT,
            EVENT,
            "I renewed my passport.",
            0.35,
            False,
        ),
        (
            "a word for what was done that fits a word elsewhere in the todo, not its task",
            TODO,
            "I have to say the winter sale was a bit impulsive, I managed to get a few coats.",
            EVENT,
            "I just bought a new winter coat today.",
            0.45,
            False,
        ),
        (
            "its own verb, and more",
            TODO,
            "I need to renew my car insurance before December 15th.",
            EVENT,
            "Renewed the car insurance with Admiral, it went up to 640 a year.",
            0.41,
            True,
        ),
        (
            "alike, but no thing in common",
            TODO,
            "I have to finish the quarterly report by Friday.",
            EVENT,
            "I finished the annual budget review today.",
            0.59,
            False,
        ),
        ("not done", TODO, PASSPORT, FACT, "My passport renewal is not done yet.", 0.8, False),
        (
            "a word for what was done that the todo did not ask for",
            TODO,
            "I need to explain passive house principles to a developer.",
            EVENT,
            "The proposal I submitted yesterday covers passive design principles.",
            0.6,
            False,
        ),
        (
            "a word of the same task",
            TODO,
            "Remind me to call mum on Sunday.",
            EVENT,
            "I rang mum this afternoon.",
            0.6,
            True,
        ),
        (
            "an irregular past of the todo's verb",
            TODO,
            "I need to buy a birthday present for Tom.",
            EVENT,
            "I bought Tom a bike helmet for his birthday.",
            0.7,
            True,
        ),
        (
            "a plan, not a completion",
            TODO,
            "I need to find the receipt for the vacuum cleaner I bought in February.",
            FACT,
            "I'll check my inbox for the receipt of the vacuum cleaner I bought in February.",
            0.8,
            False,
        ),
        (
            "only todos close",
            FACT,
            "My passport expires in June.",
            EVENT,
            "I renewed my passport.",
            0.7,
            False,
        ),
        (
            "a todo never closes a todo",
            TODO,
            PASSPORT,
            TODO,
            "Renewed passport photos are needed.",
            0.8,
            False,
        ),
    ],
)
def test_which_todo_a_statement_closes(
    why: str,
    todo_type: MemoryType,
    todo: str,
    statement_type: MemoryType,
    statement: str,
    similarity: float,
    closed: bool,
) -> None:
    assert (
        closure(todo_type, todo, statement_type, statement, similarity) is not None
    ) is closed, why


DECISION = MemoryType.DECISION
COMPARING = "I'm comparing PostgreSQL and SQLite for the Quillstack database."
LOCK_BUG = "We hit a bug: SQLite returned 'database is locked' under concurrent syncs."


@pytest.mark.parametrize(
    ("why", "item", "statement_type", "statement", "similarity", "reason"),
    [
        (
            "a decision settles the choice",
            COMPARING,
            DECISION,
            "We decided to use SQLite in WAL mode for Quillstack.",
            0.7,
            "decided: settles a choice that was open",
        ),
        (
            "a choice made in other words",
            "I can't decide between the Fuji X-T5 and the Sony A7 IV.",
            EVENT,
            "I went with the Fuji X-T5 in the end.",
            0.78,
            "decided: settles a choice that was open",
        ),
        (
            "a noise is a problem, and its repair fixes it",
            "The dishwasher is making a weird grinding noise.",
            EVENT,
            "I got the dishwasher repaired, the noise is gone.",
            0.8,
            "fixed: resolves a problem",
        ),
        (
            "a squeak fixed on another thing",
            "My bike's rear brake squeaks every time I stop.",
            EVENT,
            "I fixed the squeaky door hinge.",
            0.5,
            None,
        ),
        (
            "a decision about another thing",
            COMPARING,
            DECISION,
            "We decided to use Tailscale.",
            0.6,
            None,
        ),
        (
            "a leaning is no decision",
            COMPARING,
            FACT,
            "We're probably going with SQLite for Quillstack.",
            0.7,
            None,
        ),
        (
            "a fix resolves the problem",
            LOCK_BUG,
            EVENT,
            "We fixed the locking error by setting busy_timeout to 5000 ms.",
            0.5,
            "fixed: resolves a problem",
        ),
        (
            "a fix of another thing",
            "My laptop keeps crashing after two hours.",
            EVENT,
            "I fixed the locking error in the sync server.",
            0.5,
            None,
        ),
        ("not fixed yet", LOCK_BUG, FACT, "The locking error is not fixed yet.", 0.6, None),
        (
            "too far apart",
            LOCK_BUG,
            EVENT,
            "We fixed the locking error.",
            FIX_SIMILARITY - 0.01,
            None,
        ),
        (
            "a problem told with its fix is no open item",
            "The sync bug is fixed now.",
            EVENT,
            "I fixed the sync bug again.",
            0.9,
            None,
        ),
    ],
)
def test_a_decision_settles_a_choice_and_a_fix_resolves_a_problem(
    why: str,
    item: str,
    statement_type: MemoryType,
    statement: str,
    similarity: float,
    reason: str | None,
) -> None:
    assert closure(FACT, item, statement_type, statement, similarity) == reason, why


MARATHON = "I'm training for the Berlin marathon, my target is under 4 hours."
DROPPED = "dropped: a plan given up"
REACHED = "done: a goal reached"


@pytest.mark.parametrize(
    "why, item_type, item, statement, reason",
    [
        (
            "saved up for, then bought",
            FACT,
            "I'm saving up for a new iPad Pro, about 1200 euros.",
            "I finally bought the iPad Pro!",
            REACHED,
        ),
        (
            "trained for, then run",
            FACT,
            MARATHON,
            "I finished the Berlin marathon in 3:58!",
            REACHED,
        ),
        # a wish or a plan is not under way: "I finished ..." may be something else
        (
            "a wish",
            MemoryType.GOAL,
            "I want to name the affordable housing initiative after him.",
            "Finished the affordable housing proposal.",
            None,
        ),
        (
            "a plan to train",
            MemoryType.GOAL,
            "I'm planning to start training for my next marathon.",
            "I've completed one marathon, the Chicago Marathon.",
            None,
        ),
        (
            "something else bought",
            FACT,
            "I'm saving up for a house deposit.",
            "I bought a new couch.",
            None,
        ),
        (
            "no word that it was done",
            FACT,
            MARATHON,
            "The Berlin marathon is in three weeks.",
            None,
        ),
        (
            "a plan is no pursuit",
            FACT,
            "I'm going to Lisbon in May.",
            "Flights for Lisbon are booked!",
            None,
        ),
    ],
)
def test_a_goal_is_reached_by_doing_it(
    why: str, item_type: MemoryType, item: str, statement: str, reason: str | None
) -> None:
    assert closure(item_type, item, EVENT, statement, COMPLETION_SIMILARITY + 0.05) == reason, why


@pytest.mark.parametrize(
    "text, dropped",
    [
        ("I hurt my ankle so I had to pull out of the marathon.", True),
        ("We called off the Lisbon trip.", True),
        ("I gave up on Japanese, it was too much with work.", True),
        ("I injured my knee, so the half marathon is off.", True),
        ("The Lisbon trip's off for now.", True),
        ("The heating is off at night.", False),
        ("The trip isn't off, we're still going.", False),  # denied
        ("I withdrew my application to Stripe.", True),
        ("I might pull out of the marathon.", False),  # only thought about
        ("Should I quit the pottery class?", False),  # asked
        ("I won't pull out of the marathon, whatever happens.", False),  # denied
        ("I'm training for the Berlin marathon.", False),
        ("Mom's doing better, which is progress from 'Marcus abandoned me.'", False),  # quoted
        ("Then the drummer bailed on us two days before the gig.", False),  # someone left the user
    ],
)
def test_statements_that_give_a_plan_up(text: str, dropped: bool) -> None:
    assert says_dropped(text) is dropped


@pytest.mark.parametrize(
    "why, item_type, item, statement, similarity, reason",
    [
        (
            "a pursuit under way, given up",
            FACT,
            MARATHON,
            "I hurt my ankle so I had to pull out of the marathon.",
            DROP_SIMILARITY + 0.02,
            DROPPED,
        ),
        (
            "a todo no longer needed",
            TODO,
            "I still need to book flights for the Lisbon trip.",
            "We called off the Lisbon trip.",
            0.68,
            DROPPED,
        ),
        (
            "a goal given up",
            MemoryType.GOAL,
            "My goal is to run a half marathon in under two hours.",
            "I dropped out of the half marathon.",
            0.64,
            DROPPED,
        ),
        (
            "a pursuit called off",
            MemoryType.GOAL,
            "I'm training for the Berlin half marathon in April.",
            "I injured my knee, so the half marathon is off.",
            0.6,
            DROPPED,
        ),
        ("another race", FACT, MARATHON, "I dropped out of the cycling race.", 0.9, None),
        (
            "not close enough in meaning",
            FACT,
            MARATHON,
            "I pulled out of the marathon.",
            DROP_SIMILARITY - 0.01,
            None,
        ),
        (
            "nothing under way",
            FACT,
            "The Berlin marathon is in September.",
            "I pulled out of the marathon.",
            0.9,
            None,
        ),
        (
            "a todo cancelled is done, in its own words",
            TODO,
            "I need to cancel my gym membership.",
            "I cancelled my gym membership.",
            0.9,
            "done: closes an open todo",
        ),
    ],
)
def test_a_plan_given_up_closes_only_that_plan(
    why: str,
    item_type: MemoryType,
    item: str,
    statement: str,
    similarity: float,
    reason: str | None,
) -> None:
    assert closure(item_type, item, EVENT, statement, similarity) == reason, why


VET = "I have a vet appointment for my dog Biscuit tomorrow at 9. (2026-11-27)"
HAPPENED = "happened: an appointment now past"


@pytest.mark.parametrize(
    "text, happened",
    [
        ("Biscuit's vet appointment went fine, just a sprain.", True),
        ("The Stripe interview went really well!", True),
        ("I passed my driving test!", True),
        ("Just got back from the dentist, no cavities.", True),
        ("Back home from Tokyo, jet lag is killing me.", True),
        ("I will be back from Tokyo on Friday.", False),  # not yet
        ("The interview will go well, I hope.", False),  # not yet
        ("How did the interview go?", False),  # asked
        ("She said 'the surgery went fine' but I'm not sure.", False),  # quoted
    ],
)
def test_statements_that_say_how_something_went(text: str, happened: bool) -> None:
    assert says_happened(text) is happened


@pytest.mark.parametrize(
    "why, item, statement, similarity, reason",
    [
        (
            "the appointment, past",
            VET,
            "Biscuit's vet appointment went fine, just a sprain.",
            0.6,
            HAPPENED,
        ),
        (
            "the test, passed",
            "I have my driving test next Tuesday.",
            "I passed my driving test!",
            HAPPENED_SIMILARITY + 0.01,
            HAPPENED,
        ),
        # only the appointment word in common
        (
            "another review",
            "My performance review with Sarah is on Friday.",
            "The code review went fine.",
            0.9,
            None,
        ),
        (
            "no day or time: no appointment ahead",
            "I hate job interviews.",
            "The Stripe interview went well.",
            0.9,
            None,
        ),
        (
            "told after it took place",
            "Had my first real design review with Meridian today. (2025-09-12)",
            "The Meridian design review went fine.",
            0.9,
            None,
        ),
        (
            "not close enough",
            VET,
            "Biscuit's vet appointment went fine.",
            HAPPENED_SIMILARITY - 0.01,
            None,
        ),
    ],
)
def test_an_appointment_closes_when_the_user_says_how_it_went(
    why: str, item: str, statement: str, similarity: float, reason: str | None
) -> None:
    assert closure(FACT, item, EVENT, statement, similarity) == reason, why


STAY = "I'm in Tokyo this week for a conference."
BACK = "Back home from Tokyo, jet lag is killing me."


@pytest.mark.parametrize(
    "why, item, statement, reason",
    [
        ("the stay, over", STAY, BACK, "happened: a stay now over"),
        (
            "a weekend away",
            "I'm visiting my parents in Leeds this weekend.",
            "Back from Leeds, long drive.",
            "happened: a stay now over",
        ),
        ("where someone lives is no stay", "My sister lives in Tokyo.", BACK, None),
        ("another place", STAY, "Back from Osaka, what a week.", None),
        ("not back yet", STAY, "I'll be back from Tokyo on Friday.", None),
        (
            "a visit, and how it went, but no coming back",
            "We're at Diana's parents' place this weekend.",
            "Diana ate three and looked offended that they were so good.",
            None,
        ),
    ],
)
def test_a_stay_away_closes_when_the_user_is_back(
    why: str, item: str, statement: str, reason: str | None
) -> None:
    assert closure(FACT, item, FACT, statement, HAPPENED_SIMILARITY + 0.03) == reason, why


@pytest.mark.parametrize(
    "item, statement, similarity, closed",
    [
        (
            "Larchmont invoice #2207, $7,600, 12 days late",
            "Larchmont finally paid 2207",
            0.64,
            True,
        ),
        (
            "Northbeam currently owes me CAD 5,760 on invoice WA-0093, which is eight days past due.",
            "Northbeam has settled WA-0093 in full.",
            0.58,
            True,
        ),
        (
            "Corran still haven't paid invoice 028, that's £840 and it's six weeks overdue now",
            "Idris did finally pay the £840 though",
            0.53,
            True,
        ),
        # another client's payment
        (
            "Harbourline owes me £2,100 for the distillery brochure",
            "Bramble & Oak have paid invoice KS-112, £3,300, thank god",
            0.43,
            False,
        ),
        (
            "harcourt still havent paid SL-204, 45 days now",
            "rugby academy paid SL-201 $1,800",
            0.38,
            False,
        ),
        # not paid yet, or denied
        ("Vinhal Labs owe me 2.280 euro", "Vinhal will pay the 2.280 next week", 0.6, False),
        (
            "Vinhal Labs owe me 2.280 euro",
            "Vinhal say they paid the 2.280 but it isn't in the account",
            0.6,
            False,
        ),
    ],
)
def test_a_debt_is_settled_by_its_payment(
    item: str, statement: str, similarity: float, closed: bool
) -> None:
    why = closure(MemoryType.FACT, item, MemoryType.EVENT, statement, similarity)
    assert (why == "paid: a debt settled") is closed


@pytest.mark.parametrize(
    ("text", "booked"),
    [
        ("I booked the Marriott for the Denver conference.", True),
        ("We've reserved a cottage at Ravenglass for half term.", True),
        ("I just booked Dr Patel for Tuesday.", True),
        ("Flights booked.", False),  # nothing named
        ("I still haven't booked the Marriott.", False),
        ("She booked the Hilton for us.", False),  # not the user's own
    ],
)
def test_a_booking_of_something_named_is_news_of_its_own(text: str, booked: bool) -> None:
    assert says_booked(text) is booked
