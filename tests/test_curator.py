"""The curator and its worker: episodes, memories, merge, model batches (host and Gemini stubs), failures, resume."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gemini_stub import GeminiStub
from openai_stub import OpenAIStub, Reply, write_hermes_config

from hermes_bowerbird.config import Config, build_config
from hermes_bowerbird.curation.claims import worker_name
from hermes_bowerbird.curation.curator import Curator, CuratorWorker
from hermes_bowerbird.curation.llm_batch import BatchTurn, build_prompt, parse_decisions
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.errors import LLMError
from hermes_bowerbird.llm.budget import BudgetedLLM
from hermes_bowerbird.llm.gemini import GeminiLLM
from hermes_bowerbird.llm.host import HostLLM
from hermes_bowerbird.retrieval import RecallRequest, Retriever
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import (
    LLM,
    AuditAction,
    ItemKind,
    JournalStatus,
    Memory,
    MemoryFilter,
    MemoryType,
    NewMemory,
    Provenance,
    QuestionOrigin,
    Relation,
    Source,
    TurnCapture,
)

SCOPE = "user:alice"
NOW = 1_750_000_000.0


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return LocalEmbedder()


@dataclass
class Env:
    store: Store
    vectors: VectorTier | None
    config: Config
    path: Path

    def curator(self, llm: LLM | None = None, **kw: Any) -> Curator:
        return Curator(self.store, self.vectors, self.config, self.store.clock, llm, **kw)

    def capture(
        self,
        user: str,
        assistant: str = "",
        *,
        session: str = "s1",
        turn: int | None = None,
        scope: str = SCOPE,
    ) -> int:
        index = self.store.journal.next_turn_index(session) if turn is None else turn
        return self.store.journal.append(
            TurnCapture(
                scope=scope,
                session_id=session,
                turn_index=index,
                platform="cli",
                user=user,
                assistant=assistant,
                created_at=NOW + index,
            )
        )

    def entry(self, journal_id: int):  # type: ignore[no-untyped-def]
        entry = self.store.journal.get(journal_id)
        assert entry is not None
        return entry


def _env(tmp_path: Path, embedder: LocalEmbedder | None, **settings: Any) -> Iterator[Env]:
    store = Store.open(tmp_path / "c.db", clock=lambda: NOW + 1000)
    vectors = (
        VectorTier(store, EmbeddingService.from_embedder(embedder, store)) if embedder else None
    )
    yield Env(store, vectors, build_config(tmp_path, settings), tmp_path / "c.db")
    store.close()


@pytest.fixture
def env(tmp_path: Path, embedder: LocalEmbedder) -> Iterator[Env]:
    yield from _env(tmp_path, embedder, llm_batch_turns=2)


@pytest.fixture
def bare(tmp_path: Path) -> Iterator[Env]:
    """No embedding model at all (still loading, or none configured)."""
    yield from _env(tmp_path, None)


# -- one turn ------------------------------------------------------------------------------------------------


def test_a_turn_becomes_episodes_memories_entities_and_vectors(env: Env) -> None:
    jid = env.capture(
        "My name is Alice and I work at Acme Corp as a data engineer.",
        "Great to meet you, Alice. Data engineering at Acme Corp sounds like interesting work.",
    )
    result = env.curator().process(env.entry(jid))
    assert env.store.journal.get(jid).status is JournalStatus.DONE  # type: ignore[union-attr]
    episodes = env.store.episodes.get_many(result.episode_ids)
    assert sorted(
        (e.role, e.turn_index, e.chunk_index, e.journal_id, e.session_id) for e in episodes.values()
    ) == [("assistant", 0, 0, jid, "s1"), ("user", 0, 0, jid, "s1")]
    memories = [env.store.memories.require(i) for i in result.created]
    assert [(m.content, m.subject) for m in memories] == [
        ("My name is Alice.", "user:name"),
        ("I work at Acme Corp as a data engineer.", "user:employer"),
    ]
    memory = memories[0]
    assert (memory.type, memory.valid_from) == (MemoryType.IDENTITY, NOW)
    assert env.store.provenance.of([memory.id])[memory.id] == [Provenance("s1", 0)]
    linked = env.store.graph.entities_of_memories(result.created)
    names = [
        {e.name for e in env.store.graph.get_entities(linked[m.id]).values()} for m in memories
    ]
    assert "Alice" in names[0] and "Acme Corp" in names[1]
    counts = env.store.vectors.model_counts()
    assert (
        counts[("memory", "all-MiniLM-L6-v2", 384)] == 2
        and counts[("episode", "all-MiniLM-L6-v2", 384)] == 2
    )
    assert env.vectors is not None
    query = env.vectors.embed_query("Where does Alice work?")
    assert query is not None
    hits = env.vectors.search(ItemKind.MEMORY, query, 1)
    assert hits[0][0] == memory.id  # searchable at once, without a reload
    assert [a.action for a in env.store.audit.of_memory(memory.id)] == [AuditAction.CREATE]


@pytest.mark.parametrize(
    ("user", "assistant"),
    [
        ("thanks!", "You're welcome."),
        ("ok cool", "Sure, here is the summary you asked for."),
        ("hi there", "Hello! How can I help today?"),
    ],
)
def test_noise_makes_no_memories(env: Env, user: str, assistant: str) -> None:
    result = env.curator().process(env.entry(env.capture(user, assistant)))
    assert result.created == [] and result.merged == []
    assert env.store.health.counts()["memories"] == 0
    assert env.store.journal.counts() == {"done": 1}


def test_a_row_is_never_curated_twice(env: Env) -> None:
    jid = env.capture("I am allergic to peanuts.", "Noted, I'll keep that in mind for recipes.")
    curator = env.curator()
    first = curator.process(env.entry(jid))
    again = curator.process(env.entry(jid))
    assert not first.skipped and again.skipped
    assert env.store.health.counts()["memories"] == 1
    assert len(env.store.episodes.find([SCOPE])) == 2


def test_repeats_reinforce_and_changes_supersede(env: Env) -> None:
    curator = env.curator()
    porto = curator.process(
        env.entry(env.capture("I live in Porto.", "Porto is a lovely city."))
    ).created[0]
    tea = curator.process(env.entry(env.capture("I prefer green tea in the morning."))).created[0]
    repeat = curator.process(env.entry(env.capture("I prefer green tea in the morning.")))
    assert repeat.merged == [tea] and repeat.created == []
    moved = curator.process(
        env.entry(env.capture("I moved to Lisbon last month.", "Enjoy Lisbon!"))
    )
    lisbon = moved.created[0]
    assert moved.superseded == [(porto, lisbon)]
    assert env.store.memories.require(porto).superseded_by == lisbon
    assert [m.id for m in env.store.memories.current_by_subject(SCOPE, "user:residence")] == [
        lisbon
    ]
    edges = env.store.graph.edges_of([lisbon])
    assert (lisbon, porto, Relation.UPDATES) in [(e.src_id, e.dst_id, e.relation) for e in edges]
    assert env.store.provenance.of([tea])[tea] == [Provenance("s1", 1), Provenance("s1", 2)]


def _teller(env: Env) -> Callable[[str], list[int]]:
    """Tell the curator one user turn at a time; each call returns the ids of the memories it created."""
    curator = env.curator()
    return lambda text: curator.process(env.entry(env.capture(text))).created


def _replaced_by(env: Env, said: Callable[[str], list[int]], old: int, text: str) -> int:
    """Tell `text`: it makes one memory, which supersedes `old`; its id."""
    created = said(text)
    assert len(created) == 1
    assert env.store.memories.require(old).superseded_by == created[0]
    return created[0]


def test_a_value_said_in_chat_shorthand_replaces_the_old_one(env: Env) -> None:
    said = _teller(env)
    budget = said("we're redoing the kitchen. budget is $45k total")[0]
    _replaced_by(
        env, said, budget, "bad news, found knob and tube wiring, so budget went up to $58k"
    )
    manager = said("btw my manager is Priya Raman")[0]
    _replaced_by(env, said, manager, "news: new manager is Tom Becker")
    physio = said("my physio is Mark at City Physio")[0]
    _replaced_by(
        env, said, physio, "update: switched physio to Dr. Aisha Khan at Peak Sports Clinic"
    )


def test_im_working_and_im_taking_take_their_slot_and_a_call_asked_for_none(env: Env) -> None:
    said = _teller(env)
    job = said("I work at Deloitte as an auditor.")[0]
    kpmg = _replaced_by(env, said, job, "I'm working at KPMG now, in their tax team.")
    vitamins = said("I'm taking vitamin D tablets over the winter.")[0]
    assert env.store.memories.require(vitamins).subject == "user:medication:vitamin-d"
    # working "at the moment" names no employer, and a call asked for no name
    name = said("My name is Priya Raman.")[0]
    said("I'm working at the moment, call me later about the holiday.")
    assert env.store.memories.require(kpmg).is_current(NOW + 1)
    assert env.store.memories.require(name).is_current(NOW + 1)


def test_a_value_told_after_btw_is_kept_and_replaced(env: Env) -> None:
    said = _teller(env)
    budget = said("btw the wedding budget is 15,000 pounds all in.")[0]
    _replaced_by(env, said, budget, "btw we bumped the wedding budget up to 18,000.")


def test_more_said_of_a_partner_or_pet_adds_to_what_is_known(env: Env) -> None:
    said = _teller(env)
    gluten = said("My partner Jordan is gluten intolerant.")[0]
    fireworks = said("My dog Biscuit is scared of fireworks.")[0]
    job = said("My partner Jordan just started a new job at Monzo.")[0]
    beach = said("My dog Biscuit loves the beach.")[0]
    pixel = said("We have a cat called Pixel.")[0]
    byte = said("We adopted a second cat, Byte!")[0]
    for memory in (gluten, fireworks, job, beach, pixel, byte):
        assert env.store.memories.require(memory).is_current(NOW + 1)
    # the relationship itself changing is a new value: what was said of the partner becomes history
    single = said("Jordan and I broke up, I'm single again.")[0]
    assert env.store.memories.require(single).subject == "user:relationship"
    for memory in (gluten, job):
        assert env.store.memories.require(memory).superseded_by == single
    for memory in (fireworks, beach):
        assert env.store.memories.require(memory).is_current(NOW + 1)


def test_what_was_told_of_a_partner_holds_while_the_relationship_goes_on(env: Env) -> None:
    said = _teller(env)
    lactose = said("My girlfriend Anna is lactose intolerant.")[0]
    gluten = said("My brother's partner Jordan is gluten intolerant.")
    engaged = said("Anna and I got engaged last weekend!")[0]
    assert env.store.memories.require(engaged).subject == "user:relationship"
    assert env.store.memories.require(lactose).is_current(NOW + 1)
    # ending the relationship makes it history, even naming her
    ended = said("Anna and I broke up, I'm single again.")[0]
    assert env.store.memories.require(lactose).superseded_by == ended
    assert all(env.store.memories.require(m).is_current(NOW + 1) for m in gluten)


def test_what_is_told_of_the_users_people_by_name_is_kept_and_linked(env: Env) -> None:
    said = _teller(env)
    assert (
        said("Meera moved to Vancouver for a new hospital job.") == []
    )  # whose move? no one known
    toronto = said("My sister Meera lives in Toronto and works as a nurse.")[0]
    moved = _replaced_by(env, said, toronto, "Meera moved to Vancouver for a new hospital job.")
    meera = env.store.graph.names_and_roles([SCOPE])[0]["sister"]
    assert meera in env.store.graph.entities_of_memories([moved])[moved]
    # known from earlier in the same turn too, and by first name
    first = said("My colleague Priya Raman runs the data team. Priya started a book club at work.")
    assert any("book club" in env.store.memories.require(m).content for m in first)
    assert said("Tess moved out on Sunday.") == []  # not one the user called by a role


def test_a_place_that_closed_ends_the_favourite_that_names_it(env: Env) -> None:
    said = _teller(env)
    assert said("Sad news, Casa Pepe closed down last week.") == []  # nothing named it
    favourite = said("Our favourite restaurant is Casa Pepe on Mill Road, we go every Friday.")[0]
    pizza = said("Our favourite pizza place is Franco Manca.")[0]
    closed = _replaced_by(env, said, favourite, "Sad news, Casa Pepe closed down last week.")
    assert env.store.memories.require(closed).subject is None  # no new favourite
    assert env.store.memories.require(pizza).is_current(NOW + 1)


def test_a_thing_the_user_gave_up_ends_what_they_said_of_it(env: Env) -> None:
    said = _teller(env)
    # said without "I", and nothing of it was kept before: the new tool is still news
    affinity = said("cancelled Adobe CC and moved everything to Affinity Designer, so much cheaper")
    assert len(affinity) == 1
    editor = said("I code in VS Code with the Python and Ruff extensions.")[0]
    paying = said("I pay for Spotify student ($6) and Crunchyroll ($10) every month.")[0]
    _replaced_by(env, said, editor, "They use PyCharm here so I switched from VS Code to it.")
    # named among others: kept, and the word it was cancelled is a memory of its own beside it
    cancelled = said("also I cancelled Crunchyroll, I wasn't watching anything")
    assert [env.store.memories.require(i).content for i in cancelled] == [
        "I cancelled Crunchyroll, I wasn't watching anything"
    ]
    assert env.store.memories.require(paying).is_current(NOW + 1)


def test_saying_a_todo_is_done_closes_it_and_only_it(env: Env) -> None:
    said = _teller(env)
    passport = said("I need to renew my passport before June.")[0]
    report = said("I have to finish the quarterly report by Friday.")[0]
    budget = said("I finished the annual budget review today.")[0]
    renewed = said("I renewed my passport yesterday, finally.")[0]
    assert env.store.memories.require(passport).superseded_by == renewed
    # alike in meaning, but about another thing
    assert env.store.memories.require(report).is_current(NOW + 1)
    assert env.store.memories.require(budget).is_current(NOW + 1)
    todos = MemoryFilter(types=(MemoryType.TODO,), current_only=True)
    assert [m.id for m in env.store.memories.find([SCOPE], todos)] == [report]


def test_a_reminder_asked_for_is_a_todo_and_a_short_word_closes_it(env: Env) -> None:
    said = _teller(env)
    present = said(
        "Can you remind me to buy a birthday present for Jordan? His birthday is June 3rd."
    )
    assert [env.store.memories.require(i).type for i in present] == [MemoryType.TODO]
    report = said("I have to submit my expense report by Friday.")[0]
    insurance = said("I need to renew my car insurance before December 15th.")[0]
    assert said("Expense report submitted!")
    assert said("Renewed the car insurance with Admiral, it went up to 640 a year.")
    for todo in (report, insurance):
        assert not env.store.memories.require(todo).is_current(NOW + 1)
    assert env.store.memories.require(present[0]).is_current(NOW + 1)


@pytest.mark.parametrize(
    "user",
    [
        "TODO: buy milk.",
        "todo: email Dr. Chen the results chapter by Friday",
        "Note to self: renew the TLS cert.",
        "Don't forget the milk.",
    ],
)
def test_a_message_that_only_sets_a_task_down_keeps_it(env: Env, user: str) -> None:
    created = _teller(env)(user)
    assert [env.store.memories.require(i).type for i in created] == [MemoryType.TODO]


@pytest.mark.parametrize(
    ("user", "kept"),
    [
        (
            "I'm on a Personal plan with 8GB and it runs out every month. is it worth going to 15GB?",
            "I'm on a Personal plan with 8GB and it runs out every month.",
        ),
        (
            "i moved my business banking from Starling to Tide, what do I need to update?",
            "I moved my business banking from Starling to Tide.",
        ),
    ],
)
def test_a_fact_told_before_a_question_is_kept(env: Env, user: str, kept: str) -> None:
    created = _teller(env)(user)
    assert [env.store.memories.require(i).content for i in created] == [kept]


def test_a_turn_that_only_says_something_is_done_is_kept_when_it_closes_a_todo(env: Env) -> None:
    said = _teller(env)
    assert said("Flights for Lisbon are booked!") == []  # nothing was open
    todo = said("I still need to book flights for the Lisbon trip.")[0]
    _replaced_by(env, said, todo, "Flights for Lisbon are booked!")


def test_a_decision_settles_a_choice_and_a_fix_resolves_a_bug(env: Env) -> None:
    tell = _teller(env)

    def said(text: str) -> int:
        created = tell(text)
        assert len(created) == 1, text
        return created[0]

    weighing = said("I can't decide between the Fuji X-T5 and the Sony A7 IV.")
    bug = said("We hit a bug: SQLite returned 'database is locked' under concurrent syncs.")
    chosen = said("I went with the Fuji X-T5 in the end.")
    fixed = said("We fixed the locking error by setting busy_timeout to 5000 ms.")
    assert env.store.memories.require(weighing).superseded_by == chosen
    assert env.store.memories.require(bug).superseded_by == fixed
    reasons = [
        a.reason
        for m in (weighing, bug)
        for a in env.store.audit.of_memory(m)
        if a.action is AuditAction.SUPERSEDE
    ]
    assert reasons == ["decided: settles a choice that was open", "fixed: resolves a problem"]


def test_giving_a_plan_up_closes_it(env: Env) -> None:
    said = _teller(env)
    marathon = said("I'm training for the Berlin marathon, my target is under 4 hours.")[0]
    pottery = said("I signed up for a pottery class on Thursdays.")[0]
    _replaced_by(env, said, marathon, "I hurt my ankle so I had to pull out of the marathon.")
    assert env.store.memories.require(pottery).is_current(NOW + 1)
    assert said("I gave up on Japanese, it was too much with work.") == []  # nothing was under way


def test_saying_how_an_appointment_went_closes_it(env: Env) -> None:
    said = _teller(env)
    dentist = said("I have a dentist appointment on Thursday at 3pm.")[0]
    interview = said("I have a job interview at Stripe on Thursday.")[0]
    # also where the user's dog is named: how the appointment went leaves it to the pet's own updates
    vet = said("I have a vet appointment for my dog Biscuit tomorrow at 9.")[0]
    _replaced_by(env, said, dentist, "The dentist appointment went fine, no cavities.")
    assert env.store.memories.require(interview).is_current(NOW + 1)
    said("Biscuit's vet appointment went fine, just a sprain.")
    assert env.store.memories.require(vet).is_current(NOW + 1)
    tokyo = said("I'm in Tokyo this week for a conference.")[0]
    home = said("I live in Rotterdam with my wife Sara.")[0]
    _replaced_by(env, said, tokyo, "Back home from Tokyo, jet lag is killing me.")
    assert env.store.memories.require(home).is_current(NOW + 1)


def test_a_new_time_replaces_the_old_one_for_the_same_thing_only(env: Env) -> None:
    said = _teller(env)
    # a new time is news even when nothing gave the old one; someone moving out on a day is no new time
    assert len(said("The planning call got pushed to 10am starting next week.")) == 1
    assert said("Tess moved out on Sunday.") == []
    standup = said("Our team standup is at 9:30 every weekday.")[0]
    dentist = said("My dentist appointment is on Thursday at 3pm.")[0]
    said("The retro moved to Thursday at 2pm.")  # another meeting's time
    said("We might move the standup to 11am.")  # only thought about
    assert env.store.memories.require(standup).is_current(NOW + 1)
    _replaced_by(env, said, standup, "The standup moved to 10am starting next week.")
    assert env.store.memories.require(dentist).is_current(NOW + 1)
    reasons = [
        a.reason for a in env.store.audit.of_memory(standup) if a.action is AuditAction.SUPERSEDE
    ]
    assert reasons == ["changed: a new time for the same thing"]
    deadline = said("I have a deadline for the Penguin book on December 15th.")[0]
    extended = _replaced_by(env, said, deadline, "Penguin extended the deadline to January 10th.")
    assert env.store.memories.require(extended).type is MemoryType.TODO  # still to do
    exam = said("I'm studying for the bar exam in February, so I'm pretty stressed.")[0]
    _replaced_by(env, said, exam, "The bar exam got moved to March.")
    assert env.store.memories.require(dentist).is_current(NOW + 1)


def test_a_routine_moved_to_a_new_time_takes_its_slot(env: Env) -> None:
    said = _teller(env)
    band = said("I play bass in a band called The Lowlands, we rehearse on Thursdays.")[0]
    job = said("I'm a nurse at St Mary's, I work on Thursdays and Fridays.")[0]
    assert env.store.memories.require(band).subject == "user:routine:music"
    moved = _replaced_by(env, said, band, "Our rehearsals moved to Wednesdays.")
    assert env.store.memories.require(moved).subject == "user:routine:music"
    climbing = said("I go climbing at Klätterverket on Tuesdays and Thursdays.")[0]
    switched = said("I switched climbing days to Mondays.")
    assert env.store.memories.require(climbing).superseded_by == switched[0]
    # another slot holds more than its time: left to its own updates
    said("My shifts moved to Mondays.")
    assert env.store.memories.require(job).is_current(NOW + 1)


def test_short_statements_that_hold_a_value_are_kept(env: Env) -> None:
    said = _teller(env)
    assert len(said("Jordan's birthday is on June 3rd.")) == 1
    assert said("Google's new model is great.") == []
    # short, but giving a value of its own or filling a profile slot
    staging = said("Staging lives at staging.acme.dev.")
    assert len(staging) == 1
    assert len(said("Use pnpm, not npm.")) == 1
    moved = said("Staging moved to staging2.acme.dev.")
    assert len(moved) == 1
    assert env.store.memories.require(staging[0]).superseded_by == moved[0]


def test_a_correction_replaces_the_value_said_wrongly(env: Env) -> None:
    said = _teller(env)
    name = said("My daughter's name is Clementina and she's 6.")[0]
    birthday = said("My birthday is on the 12th of April.")[0]
    tokyo = said("My sister lives in Tokyo.")[0]
    fixed = said("Sorry, I misspelled it: my daughter's name is Clementine, not Clementina.")[0]
    assert env.store.memories.require(name).superseded_by == fixed
    later = said("Actually my birthday is the 21st of April, not the 12th.")[0]
    assert env.store.memories.require(birthday).superseded_by == later
    said("I'm flying to Osaka, not Tokyo!")  # about another thing than where the sister lives
    assert env.store.memories.require(tokyo).is_current(NOW + 1)


def test_a_new_amount_replaces_the_old_one(env: Env) -> None:
    said = _teller(env)
    rent = said("My landlord is raising the rent to 1850 a month from January.")[0]
    netflix = said("Our Netflix plan costs 15.49 a month.")[0]
    _replaced_by(env, said, rent, "I negotiated the rent down to 1700.")
    assert env.store.memories.require(netflix).is_current(NOW + 1)
    port = said("Our API runs on port 8080 in dev.")[0]
    _replaced_by(
        env, said, port, "The API now runs on port 9000 in dev, 8080 clashed with something."
    )
    assert env.store.memories.require(netflix).is_current(NOW + 1)
    ages = said("My son Adam is 7.")[0]
    _replaced_by(env, said, ages, "Adam just turned 8!")


def test_a_thing_moved_to_a_new_provider_replaces_the_old_one(env: Env) -> None:
    said = _teller(env)
    fido = said("My phone is with Fido, $55 a month for 20GB.")[0]
    notes = said("I keep my notes in Notion.")[0]
    _replaced_by(env, said, fido, "I switched my phone to Koodo, $39 for 60GB.")
    assert env.store.memories.require(notes).is_current(NOW + 1)


def test_without_a_model_hash_and_subject_rules_still_work(bare: Env) -> None:
    curator = bare.curator()
    porto = curator.process(bare.entry(bare.capture("I live in Porto."))).created[0]
    assert curator.process(bare.entry(bare.capture("I live in Porto."))).merged == [porto]
    lisbon = curator.process(bare.entry(bare.capture("I moved to Lisbon last month."))).created[0]
    assert bare.store.memories.require(porto).superseded_by == lisbon
    assert bare.store.vectors.model_counts() == {}  # left for catch-up once a model is ready
    assert (
        len(bare.store.vectors.missing_texts(ItemKind.EPISODE, "all-MiniLM-L6-v2", 384, 100)) == 3
    )


def test_scopes_never_mix(env: Env) -> None:
    curator = env.curator()
    mine = curator.process(env.entry(env.capture("I live in Porto.", scope="user:alice"))).created
    theirs = curator.process(
        env.entry(env.capture("I live in Porto.", session="s2", scope="user:bob"))
    ).created
    assert len(mine) == 1 and len(theirs) == 1 and mine != theirs
    assert env.store.memories.require(mine[0]).access_count == 0


def test_store_memory_dedups_explicit_writes(env: Env) -> None:
    curator = env.curator()
    new = NewMemory(
        scope=SCOPE,
        type=MemoryType.FACT,
        content="The staging database is db-staging-2",
        source=Source.TOOL,
    )
    first = curator.store_memory(new, actor="tool")
    second = curator.store_memory(new, actor="tool")
    assert first.id == second.id and second.access_count == 1
    assert [a.actor for a in env.store.audit.of_memory(first.id)] == ["tool", "tool"]


# -- the model batch path, for both backends -----------------------------------------------------------------


_EXISTING = re.compile(r"^- \[(\d+)\] \S+ (\S+): (.*)$", re.MULTILINE)


def _decide(prompt: str) -> str:
    """A scripted model: supersedes the residence memory it is shown and adds one fact."""
    existing = {subject: int(i) for i, subject, _ in _EXISTING.findall(prompt)}
    decisions: list[dict[str, Any]] = [
        {
            "action": "add",
            "type": "fact",
            "content": "The user is learning Rust.",
            "subject": "user:learning",
            "importance": 0.65,
            "turn": 2,
            "entities": ["Rust"],
            "questions": ["which programming language am I learning?", "what am I studying now?"],
        }
    ]
    if "user:residence" in existing:
        decisions.append(
            {
                "action": "supersede",
                "type": "identity",
                "subject": "user:residence",
                "turn": 1,
                "content": "The user lives in Lisbon.",
                "target_id": existing["user:residence"],
            }
        )
    decisions.append({"action": "ignore", "content": "The user said thanks."})
    return json.dumps({"decisions": decisions})


@dataclass
class Backend:
    llm: LLM  # answers with _decide(prompt) unless scripted otherwise
    malformed: Callable[[], None]  # the next call answers with text that is not JSON
    slow: Callable[[], None]  # every call is slower than the timeout
    rate_limited_then_good: Callable[[], None]
    prompts: Callable[[], list[str]]


def _openai_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


@pytest.fixture
def host_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    aux = pytest.importorskip("agent.auxiliary_client")
    aux.shutdown_cached_clients()
    with OpenAIStub() as stub:
        write_hermes_config(tmp_path / "hermes", stub)
        monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes"))
        for name in ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
            monkeypatch.delenv(name, raising=False)
        stub.responder = lambda body: Reply.of_text(_decide(_openai_prompt(body)))

        def slow() -> None:
            stub.responder = lambda body: Reply.slow(2.0, _decide(_openai_prompt(body)))

        yield Backend(
            llm=HostLLM(wait_max=0.05),
            malformed=lambda: stub.script(
                Reply.of_text("Sure! Here are the memories: {decisions: [oops")
            ),
            slow=slow,
            rate_limited_then_good=lambda: stub.script(Reply.rate_limited()),
            prompts=lambda: [_openai_prompt(b) for b in stub.chat_requests],
        )
    aux.shutdown_cached_clients()


@pytest.fixture
def gemini_backend() -> Iterator[Backend]:
    with GeminiStub(api_key="good-key") as stub:
        stub.reply_fn = lambda body: _decide(body["contents"][0]["parts"][0]["text"])

        def slow() -> None:
            stub.delay_seconds = 2.0

        yield Backend(
            llm=GeminiLLM(
                "good-key", model="gemini-test", base_url=stub.url, attempts=2, wait_max=0.05
            ),
            malformed=lambda: stub.replies.append("{decisions: [oops"),
            slow=slow,
            rate_limited_then_good=lambda: stub.fail_next(1, status=429),
            prompts=lambda: [
                r.body["contents"][0]["parts"][0]["text"]
                for r in stub.requests
                if "generateContent" in r.action
            ],
        )


@pytest.fixture(params=["host", "gemini"])
def backend(request: pytest.FixtureRequest) -> Backend:
    backend: Backend = request.getfixturevalue(f"{request.param}_backend")
    return backend


_TURNS = [
    ("I live in Porto.", "Porto is lovely."),
    ("I moved to Lisbon last month and I'm learning Rust now.", "Congratulations on the move!"),
]


def _run_batch(env: Env, curator: Curator) -> list[Any]:
    """Curate the first turn, then the second (which fills the batch of 2 and triggers the model)."""
    results = []
    for user, assistant in _TURNS:
        results.append(curator.process(env.entry(env.capture(user, assistant))))
    return results


def test_model_batch_applies_decisions(env: Env, backend: Backend) -> None:
    curator = env.curator(backend.llm, llm_timeout=10)
    first, second = _run_batch(env, curator)
    assert first.llm == "" and second.llm == "applied"
    prompt = backend.prompts()[-1]
    assert "## Turn 1" in prompt and "I live in Porto." in prompt and "I moved to Lisbon" in prompt
    # the model saw the nearest memories
    assert re.search(r"- \[\d+\] identity user:residence:", prompt)
    rust = [
        m
        for m in env.store.memories.find([SCOPE], MemoryFilter(current_only=True))
        if m.subject == "user:learning"
    ]
    assert (
        len(rust) == 1
        and rust[0].metadata == {"role": "model", "origin": "user"}
        and rust[0].confidence == 0.85
    )
    assert env.store.provenance.of([rust[0].id])[rust[0].id] == [Provenance("s1", 1)]
    residence = env.store.memories.current_by_subject(SCOPE, "user:residence")
    assert [m.content for m in residence] == ["The user lives in Lisbon."]
    assert env.store.journal.counts() == {"done": 2}
    assert curator.pending_batches() == []
    # the model's questions are stored with its memory, embedded, and found by recall
    asked = env.store.questions.of([rust[0].id])[rust[0].id]
    assert [(q.text, q.origin) for q in asked] == [
        ("which programming language am I learning?", QuestionOrigin.MODEL),
        ("what am I studying now?", QuestionOrigin.MODEL),
    ]
    assert env.vectors is not None
    model = env.vectors.embeddings.current()
    assert model is not None
    stored = set(
        env.store.vectors.ids(ItemKind.QUESTION, model.model_name, model.dimension).tolist()
    )
    assert {q.id for q in asked} <= stored
    # a memory the model wrote no questions for gets those of the rules
    lisbon = env.store.questions.of([residence[0].id])[residence[0].id]
    assert {q.origin for q in lisbon} == {QuestionOrigin.RULES}


def test_a_model_that_ignores_a_known_memory_may_still_give_its_questions(env: Env) -> None:
    def decide(prompt: str) -> str:
        existing = {subject: int(i) for i, subject, _ in _EXISTING.findall(prompt)}
        known = existing["user:residence"]
        return json.dumps(
            {
                "decisions": [
                    {
                        "action": "ignore",
                        "content": "The user lives in Porto.",
                        "target_id": known,
                        "questions": ["which city do I call home?"],
                    },
                    {"action": "ignore", "content": "Nothing new.", "target_id": 999_999},
                ]
            }
        )

    with GeminiStub(api_key="good-key") as stub:
        stub.reply_fn = lambda body: decide(body["contents"][0]["parts"][0]["text"])
        llm = GeminiLLM("good-key", model="gemini-test", base_url=stub.url, wait_max=0.05)
        curator = env.curator(llm, llm_timeout=10)
        curator.process(env.entry(env.capture("I live in Porto.", "Lovely.")))
        result = curator.process(env.entry(env.capture("Porto is great in spring.", "Indeed.")))
    [porto] = env.store.memories.current_by_subject(SCOPE, "user:residence")
    asked = env.store.questions.of([porto.id])[porto.id]
    assert result.llm == "applied"
    assert [(q.text, q.origin) for q in asked] == [
        ("which city do I call home?", QuestionOrigin.MODEL)
    ]


def test_the_models_questions_cost_no_call_of_their_own(env: Env, gemini_backend: Backend) -> None:
    llm = BudgetedLLM(gemini_backend.llm, env.store, daily_budget=5, clock=env.store.clock)
    curator = env.curator(llm, llm_timeout=10)
    _, second = _run_batch(env, curator)
    learning = env.store.memories.current_by_subject(SCOPE, "user:learning")
    assert env.vectors is not None
    hits = Retriever(env.store, env.vectors, env.config, env.store.clock, parallel=False).search(
        RecallRequest(
            "What coding language am I picking up?",
            (SCOPE,),
            limit=5,
            explain=True,
            include_episodes=False,
        )
    )
    found = {h.id: h.signals.get("question", 0.0) for h in hits if h.kind is ItemKind.MEMORY}
    assert (second.llm, llm.calls_today()) == ("applied", 1)
    assert found[learning[0].id] > 0.7


@pytest.mark.parametrize("failure", ["malformed", "slow", "budget"])
def test_model_failure_falls_back_to_heuristics(env: Env, backend: Backend, failure: str) -> None:
    llm: LLM = backend.llm
    if failure == "budget":
        llm = BudgetedLLM(backend.llm, env.store, daily_budget=0, clock=env.store.clock)
    else:
        getattr(backend, failure)()
    curator = env.curator(llm, llm_timeout=0.5)
    _, second = _run_batch(env, curator)
    assert second.llm == "fallback"
    current = {m.content for m in env.store.memories.find([SCOPE], MemoryFilter(current_only=True))}
    assert any("Lisbon" in c for c in current)  # the heuristic result stands; nothing was lost
    assert env.store.journal.counts() == {"done": 2}
    assert curator.pending_batches() == []
    assert [e.turn_index for e in env.store.episodes.find([SCOPE]) if e.role == "user"] == [0, 1]


def test_model_rate_limit_then_success(env: Env, backend: Backend) -> None:
    backend.rate_limited_then_good()
    _, second = _run_batch(env, env.curator(backend.llm, llm_timeout=10))
    assert second.llm == "applied"
    current = env.store.memories.current_by_subject(SCOPE, "user:residence")
    assert [m.content for m in current] == ["The user lives in Lisbon."]


def test_a_short_batch_waits_for_the_session_end(env: Env, gemini_backend: Backend) -> None:
    curator = env.curator(gemini_backend.llm, llm_timeout=10)
    curator.process(env.entry(env.capture(*_TURNS[0])))
    assert curator.pending_batches() == [(SCOPE, "s1")] and gemini_backend.prompts() == []
    assert curator.end_session(SCOPE, "s1").llm == "applied"
    assert curator.pending_batches() == [] and len(gemini_backend.prompts()) == 1


# -- the worker ----------------------------------------------------------------------------------------------


def test_worker_resumes_pending_rows_on_start_and_follows_notifications(env: Env) -> None:
    for i in range(5):
        env.capture(f"I am working on project number {i} called Falcon{i}.", "Sounds good.")
    worker = CuratorWorker(env.curator(), env.store)
    worker.start()
    try:
        assert worker.drain(60)
        assert env.store.journal.counts() == {"done": 5}
        thread = worker._thread
        assert (
            thread is not None
            and thread.name == "bowerbird-curator"
            and thread in threading.enumerate()
        )
        env.capture("I live in Porto.")
        worker.notify()
        assert worker.drain(30)
        assert env.store.journal.counts() == {"done": 6}
    finally:
        assert worker.stop(10)
    assert not worker.is_alive()
    assert thread not in threading.enumerate()  # other tests' workers may share the name


def _attempts(store: Store, journal_id: int) -> int:
    entry = store.journal.get(journal_id)
    return entry.attempts if entry is not None else 0


def test_a_failing_row_is_retried_later_and_does_not_block_the_queue(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    # a row the database refuses, as a damaged disk or bad data would
    with sqlite3.connect(env.path) as conn:
        conn.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON episodes WHEN new.content LIKE '%POISON%' "
            "BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
    env.capture("I live in Porto.")
    bad = env.capture("This message is POISON and cannot be stored anywhere.")
    env.capture("I prefer green tea in the morning.")
    store = Store.open(env.path)  # retry times need a clock that moves
    worker = CuratorWorker(
        Curator(store, env.vectors, env.config), store, retry_base=0.05, retry_delay=0.05
    )
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while _attempts(store, bad) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.journal.counts() == {"done": 2, "pending": 1}
        assert store.journal.retrying()["rows"] == 1
        # the cause goes away: the next retry curates the row
        with sqlite3.connect(env.path) as conn:
            conn.execute("DROP TRIGGER poison")
        while store.journal.counts() != {"done": 3} and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.stop(10)
    assert store.journal.counts() == {"done": 3}
    assert store.health.counts()["memories"] == 2
    store.close()
    assert any(r.exc_info for r in caplog.records if "journal row" in r.getMessage())


def test_worker_runs_session_end_batches_in_order(env: Env, gemini_backend: Backend) -> None:
    worker = CuratorWorker(env.curator(gemini_backend.llm, llm_timeout=10), env.store)
    worker.start()
    try:
        env.capture(*_TURNS[0])
        worker.end_session(SCOPE, "s1")
        assert worker.drain(30)
    finally:
        worker.stop(10)
    assert len(gemini_backend.prompts()) == 1
    assert env.store.journal.counts() == {"done": 1}


def test_drain_times_out_while_rows_remain(env: Env) -> None:
    worker = CuratorWorker(env.curator(), env.store)  # never started
    env.capture("I live in Porto.")
    assert worker.drain(0.2) is False
    assert env.store.journal.counts() == {"pending": 1}


# -- parsing the model's decisions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            '{"decisions": [{"action": "add", "type": "goal", "content": "The user wants to run a marathon."}]}',
            [("add", MemoryType.GOAL, "The user wants to run a marathon.", None)],
        ),
        (
            '```json\n{"decisions": [{"action": "supersede", "content": "Lives in Lisbon", "target_id": 5}]}\n```',
            [("supersede", MemoryType.FACT, "Lives in Lisbon", 5)],
        ),
        # unknown target: a plain add; unknown type: fact
        (
            'Here you go: [{"action": "update", "type": "nonsense", "content": "x y", "target_id": 99}] thanks',
            [("add", MemoryType.FACT, "x y", None)],
        ),
        (
            '{"decisions": [{"action": "explode", "content": "a"}, {"action": "add", "content": ""}, 7]}',
            [],
        ),
        (
            '{"decisions": [{"action": "ignore", "content": "small talk"}]}',
            [("ignore", MemoryType.FACT, "small talk", None)],
        ),
    ],
)
def test_parse_decisions(
    reply: str, expected: list[tuple[str, MemoryType, str, int | None]]
) -> None:
    decisions = parse_decisions(reply, known_ids={5}, turns=2)
    assert [
        (d.action, d.candidate.type, d.candidate.content, d.candidate.supersedes) for d in decisions
    ] == expected


@pytest.mark.parametrize(
    "reply", ["", "no json here", '{"decisions": [', '{"memories": []}', "{oops}"]
)
def test_unusable_replies_raise(reply: str) -> None:
    with pytest.raises(LLMError):
        parse_decisions(reply, known_ids=set(), turns=1)


def test_model_content_is_redacted_and_relations_checked() -> None:
    secret = "AKIA" + "IOSFODNN7EXAMPLE"
    reply = json.dumps(
        {
            "decisions": [
                {
                    "action": "add",
                    "content": f"The key is {secret}",
                    "turn": 9,
                    "relations": [
                        {"relation": "caused_by", "target_id": 5},
                        {"relation": "updates", "target_id": 5},
                        {"relation": "part_of", "target_id": 77},
                    ],
                }
            ]
        }
    )
    [decision] = parse_decisions(reply, known_ids={5}, turns=2)
    assert secret not in decision.candidate.content and decision.turn is None
    assert decision.candidate.relations == ((Relation.CAUSED_BY, 5),)


def test_the_prompt_shows_existing_memories_and_turns() -> None:
    memory = Memory(
        id=12,
        scope=SCOPE,
        type=MemoryType.IDENTITY,
        content="I live in Porto.",
        importance=1.0,
        confidence=1.0,
        created_at=NOW,
        updated_at=NOW,
        source=Source.TURN,
        subject="user:residence",
    )
    prompt = build_prompt([BatchTurn(1, "I moved to Lisbon.", "Nice!")], [memory])
    assert "- [12] identity user:residence: I live in Porto." in prompt
    assert "## Turn 1\nUser: I moved to Lisbon.\nAssistant: Nice!" in prompt
    assert '"decisions"' in prompt


def test_he_or_she_opening_a_message_is_the_one_person_the_last_message_named(env: Env) -> None:
    said = _teller(env)
    said("different thing. my colleague Hideo is leaving the firm and I'm organising the present")
    vinyl = said("he collects vinyl, mostly 60s Blue Note jazz pressings")
    assert [env.store.memories.require(m).content for m in vinyl] == [
        "Hideo collects vinyl, mostly 60s Blue Note jazz pressings"
    ]
    # two people named before: whom "she" means is not said
    said("I had lunch with Tom and Ana Ruiz at the Brasserie today")
    assert said("she loves orchids") == []
    # in another session the last message is another conversation's
    other = env.curator().process(env.entry(env.capture("he collects stamps", session="s2")))
    assert other.created == []


def test_the_message_before_is_the_same_users(env: Env) -> None:
    curator = env.curator()
    curator.process(
        env.entry(env.capture("my colleague Hideo is leaving the firm", scope="u:other"))
    )
    told = curator.process(env.entry(env.capture("he collects vinyl, mostly jazz pressings")))
    assert told.created == []  # the turn before was another user's


def test_rows_a_killed_process_on_this_host_claimed_are_curated_at_once(bare: Env) -> None:
    ids = [bare.capture(f"I moved the deploy of service {i} to Friday.") for i in range(3)]
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    # its claim holds its row and every later row of the scope until the lease runs out, ten minutes on
    held = bare.store.journal.claim(worker_name(gone.pid), limit=1, lease_seconds=600.0)
    assert [e.id for e in held] == ids[:1]
    assert bare.curator().run_pending() == 3
    assert {bare.entry(i).status for i in ids} == {JournalStatus.DONE}
