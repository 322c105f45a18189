"""Dedup, merge and supersede: the pure planner on tables of cases, then the executor on a real store and model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_bowerbird.config import build_config
from hermes_bowerbird.curation.changes import NEW_AMOUNT, NEW_HOLDER
from hermes_bowerbird.curation.merge import (
    MergePlan,
    Merger,
    Neighbour,
    distinct_values,
    plan_merge,
)
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import (
    AuditAction,
    Candidate,
    ItemKind,
    Memory,
    MemoryType,
    NewMemory,
    Provenance,
    Relation,
    Source,
)

NOW = 1_750_000_000.0
SCOPE = "user:alice"


def _memory(
    i: int,
    content: str,
    subject: str | None = None,
    memory_type: MemoryType = MemoryType.FACT,
    **kw: Any,
) -> Memory:
    return Memory(
        id=i,
        scope=SCOPE,
        type=memory_type,
        content=content,
        importance=0.6,
        confidence=1.0,
        created_at=NOW - 100,
        updated_at=NOW - 100,
        source=Source.TURN,
        subject=subject,
        **kw,
    )


def _candidate(
    content: str, subject: str | None = None, supersedes: int | None = None
) -> Candidate:
    return Candidate(
        type=MemoryType.FACT,
        content=content,
        importance=0.6,
        subject=subject,
        supersedes=supersedes,
    )


def _plan(
    candidate: Candidate,
    *,
    exact: Memory | None = None,
    same: list[Memory] | None = None,
    neighbours: list[tuple[Memory, float]] | None = None,
    closable: bool = False,
) -> MergePlan:
    """`closable`: the candidate's source may close any neighbour (the user's word on the user's todo)."""
    near = [Neighbour(m, s) for m, s in neighbours or []]
    return plan_merge(
        candidate,
        exact=exact,
        same_subject=same or [],
        neighbours=near,
        dedup_threshold=0.92,
        related_threshold=0.75,
        now=NOW,
        closable=near if closable else (),
    )


PORTO = _memory(1, "I live in Porto", "user:city")
TEA = _memory(2, "I prefer green tea in the morning")
GARDEN = _memory(3, "Planning a vegetable garden this spring")


@pytest.mark.parametrize(
    ("name", "candidate", "kwargs", "action", "target", "supersede", "related"),
    [
        (
            "exact hash reinforces",
            _candidate("I live in Porto"),
            {"exact": PORTO},
            "reinforce",
            1,
            (),
            (),
        ),
        (
            "exact hash of a superseded memory is new again",
            _candidate("I live in Porto", "user:city"),
            {"exact": _memory(1, "I live in Porto", "user:city", superseded_by=9)},
            "create",
            None,
            (),
            (),
        ),
        (
            "near-identical reinforces",
            _candidate("I prefer green tea in the mornings"),
            {"neighbours": [(TEA, 0.97)]},
            "reinforce",
            2,
            (),
            (),
        ),
        (
            "near-identical but a changed value is not a duplicate",
            _candidate("I live in Lisbon", "user:city"),
            {"same": [PORTO], "neighbours": [(PORTO, 0.95)]},
            "create",
            None,
            (1,),
            (),
        ),
        (
            "same subject, changed value supersedes",
            _candidate("I moved to Lisbon last month", "user:city"),
            {"same": [PORTO], "neighbours": [(PORTO, 0.70)]},
            "create",
            None,
            (1,),
            (),
        ),
        (
            "different subjects never merge",
            _candidate("I prefer green tea in the mornings", "user:drink"),
            {
                "neighbours": [
                    (_memory(4, "I prefer green tea in the morning", "user:breakfast"), 0.97)
                ]
            },
            "create",
            None,
            (),
            ((4, 0.97),),
        ),
        (
            "related gets an edge, not a merge",
            _candidate("Bought seeds for the vegetable garden"),
            {"neighbours": [(GARDEN, 0.80), (TEA, 0.40)]},
            "create",
            None,
            (),
            ((3, 0.8),),
        ),
        (
            "no subject: similar but not identical never supersedes",
            _candidate("I live near the beach"),
            {"neighbours": [(PORTO, 0.85)]},
            "create",
            None,
            (),
            ((1, 0.85),),
        ),
        (
            "model-named target is superseded",
            _candidate("Works at Rivera Design", supersedes=7),
            {"neighbours": [(_memory(7, "Works at a NYC firm"), 0.78)]},
            "create",
            None,
            (7,),
            (),
        ),
        (
            "nothing known: plain create",
            _candidate("My sister is called Ana"),
            {},
            "create",
            None,
            (),
            (),
        ),
    ],
)
def test_plan_merge(
    name: str,
    candidate: Candidate,
    kwargs: dict[str, object],
    action: str,
    target: int | None,
    supersede: tuple[int, ...],
    related: tuple[tuple[int, float], ...],
) -> None:
    plan = _plan(candidate, **kwargs)  # type: ignore[arg-type]
    assert (plan.action, plan.target, plan.supersede, plan.related) == (
        action,
        target,
        supersede,
        related,
    ), name


def test_a_statement_that_a_todo_is_done_supersedes_it() -> None:
    todo = _memory(5, "I need to renew my passport before June.", memory_type=MemoryType.TODO)
    done = Candidate(type=MemoryType.EVENT, content="I renewed my passport.", importance=0.6)
    plan = _plan(done, neighbours=[(todo, 0.8)], closable=True)
    assert (plan.action, plan.supersede, plan.related) == ("create", (5,), ())
    assert plan.reason == "done: closes an open todo"
    # a todo the candidate's source may not close (the user's, against the assistant's word) stays open
    assert _plan(done, neighbours=[(todo, 0.8)]).supersede == ()


@pytest.mark.parametrize(
    "item",
    [
        _memory(
            6,
            "I have a vet appointment for my dog Biscuit tomorrow.",
            memory_type=MemoryType.IDENTITY,
        ),
        _memory(7, "I have a vet appointment for Biscuit tomorrow.", "user:pet:dog"),
    ],
)
def test_what_says_who_the_user_is_is_not_closed(item: Memory) -> None:
    went = Candidate(
        type=MemoryType.EVENT, content="Biscuit's vet appointment went fine.", importance=0.6
    )
    assert _plan(went, neighbours=[(item, 0.8)], closable=True).supersede == ()
    # the same appointment, holding no slot, is closed
    plain = _memory(8, item.content)
    assert _plan(went, neighbours=[(plain, 0.8)], closable=True).supersede == (8,)


def test_a_new_time_replaces_an_identity_memory_and_a_routine_but_no_other_slot_holder() -> None:
    practice = _memory(
        6,
        "My son Max has football practice every Tuesday at 5pm.",
        memory_type=MemoryType.IDENTITY,
    )
    moved = Candidate(
        type=MemoryType.FACT, content="Max's football practice moved to Wednesdays.", importance=0.5
    )
    plan = _plan(moved, neighbours=[(practice, 0.8)], closable=True)
    assert plan.supersede == (6,) and plan.reason == "changed: a new time for the same thing"
    # a routine's slot holds its time: the new time replaces it and takes the slot
    routine = _memory(7, practice.content, "user:routine:football")
    plan = _plan(moved, neighbours=[(routine, 0.8)], closable=True)
    assert plan.supersede == (7,) and plan.subject == "user:routine:football"
    held = _memory(8, practice.content, "user:children")
    assert _plan(moved, neighbours=[(held, 0.8)], closable=True).supersede == ()


@pytest.mark.parametrize(
    ("a", "b", "distinct"),
    [
        ("I live in Porto", "I live in Lisbon", True),
        ("My daughter is 9", "My daughter is 10", True),
        ("I love Python", "I really love python.", False),
        ("Deploys happen on Fridays.", "We deploy on Fridays", False),
        ("Meeting with Tom at 3pm", "meeting with tom at 3pm", False),
    ],
)
def test_distinct_values(a: str, b: str, distinct: bool) -> None:
    assert distinct_values(a, b) is distinct


# -- the executor on a real store with the real model -----------------------------------------------------------


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return LocalEmbedder()


@pytest.fixture
def env(tmp_path: Path, embedder: LocalEmbedder) -> Iterator[tuple[Store, VectorTier, Merger]]:
    store = Store.open(tmp_path / "m.db", clock=lambda: NOW)
    vectors = VectorTier(store, EmbeddingService.from_embedder(embedder, store))
    config = build_config(tmp_path, {})
    yield store, vectors, Merger(store, vectors, config)
    store.close()


def _store(
    store: Store, vectors: VectorTier, merger: Merger, candidate: Candidate, turn: int = 0
) -> tuple[str, int]:
    vector = vectors.embed_query(candidate.content)
    neighbours = merger.neighbours(SCOPE, vector, store.memories.live_ids([SCOPE]))
    plan = merger.plan(SCOPE, candidate, neighbours)
    new = NewMemory(
        scope=SCOPE,
        type=candidate.type,
        content=candidate.content,
        source=Source.TURN,
        importance=candidate.importance,
        subject=candidate.subject,
        provenance=(Provenance("s1", turn),),
    )
    with store.transaction():
        outcome = merger.apply(plan, new, candidate)
    if outcome.action == "created":
        vectors.add(ItemKind.MEMORY, [(outcome.memory_id, candidate.content)])
    return outcome.action, outcome.memory_id


def test_near_duplicate_reinforces_with_provenance_and_audit(
    env: tuple[Store, VectorTier, Merger],
) -> None:
    store, vectors, merger = env
    _, first = _store(
        store, vectors, merger, _candidate("I prefer green tea in the morning"), turn=0
    )
    action, second = _store(
        store, vectors, merger, _candidate("I prefer green tea in the mornings."), turn=3
    )
    assert (action, second) == ("merged", first)
    memory = store.memories.require(first)
    assert memory.access_count == 1
    assert store.provenance.of([first])[first] == [Provenance("s1", 0), Provenance("s1", 3)]
    assert [a.action for a in store.audit.of_memory(first)] == [
        AuditAction.CREATE,
        AuditAction.MERGE,
    ]
    assert store.health.counts()["memories"] == 1


def test_exact_repeat_reinforces_even_without_vectors(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "n.db", clock=lambda: NOW)
    merger = Merger(store, None, build_config(tmp_path, {}))
    results = []
    for turn in range(3):
        candidate = _candidate("Deploys happen on Fridays")
        plan = merger.plan(SCOPE, candidate, merger.neighbours(SCOPE, None, None))
        new = NewMemory(
            scope=SCOPE,
            type=MemoryType.FACT,
            content=candidate.content,
            source=Source.TURN,
            provenance=(Provenance("s1", turn),),
        )
        with store.transaction():
            results.append(merger.apply(plan, new, candidate).action)
    assert results == ["created", "merged", "merged"]
    assert store.health.counts()["memories"] == 1


def test_changed_value_supersedes_with_updates_edge(env: tuple[Store, VectorTier, Merger]) -> None:
    store, vectors, merger = env
    _, old = _store(store, vectors, merger, _candidate("I live in Porto", "user:city"))
    action, new = _store(
        store, vectors, merger, _candidate("I moved to Lisbon", "user:city"), turn=1
    )
    assert action == "created"
    stale = store.memories.require(old)
    assert stale.superseded_by == new and stale.valid_until == NOW and not stale.is_current(NOW + 1)
    assert store.memories.require(new).is_current(NOW + 1)
    edges = store.graph.edges_of([new])
    assert [(e.src_id, e.dst_id, e.relation) for e in edges] == [(new, old, Relation.UPDATES)]
    assert AuditAction.SUPERSEDE in [a.action for a in store.audit.of_memory(old)]
    assert [m.id for m in store.memories.current_by_subject(SCOPE, "user:city")] == [new]


def test_related_memory_gets_a_weighted_edge(env: tuple[Store, VectorTier, Merger]) -> None:
    store, vectors, merger = env
    _, garden = _store(
        store, vectors, merger, _candidate("I am planting a vegetable garden this spring")
    )
    _, seeds = _store(
        store, vectors, merger, _candidate("Planting vegetables in the garden this spring")
    )
    assert seeds != garden
    a = vectors.embed_query("I am planting a vegetable garden this spring")
    b = vectors.embed_query("Planting vegetables in the garden this spring")
    assert a is not None and b is not None
    similarity = float(np.dot(a, b))
    assert 0.75 <= similarity < 0.92  # the model agrees these are related, not duplicates
    edges = store.graph.edges_of([seeds])
    assert [(e.src_id, e.dst_id, e.relation) for e in edges] == [
        (seeds, garden, Relation.RELATED_TO)
    ]
    assert edges[0].weight == pytest.approx(similarity, abs=1e-3)


def test_unrelated_memories_stay_apart(env: tuple[Store, VectorTier, Merger]) -> None:
    store, vectors, merger = env
    _store(store, vectors, merger, _candidate("My sister is called Ana"))
    _, other = _store(
        store, vectors, merger, _candidate("The deploy script lives in tools/release.sh")
    )
    assert store.graph.edges_of([other]) == []
    assert store.health.counts()["memories"] == 2


def test_neighbours_never_cross_scopes(env: tuple[Store, VectorTier, Merger]) -> None:
    store, vectors, merger = env
    other = store.insert_memory(
        NewMemory(
            scope="user:bob",
            type=MemoryType.FACT,
            content="I prefer green tea in the morning",
            source=Source.TURN,
        )
    )
    vectors.add(ItemKind.MEMORY, [(other.id, other.content)])
    action, mine = _store(store, vectors, merger, _candidate("I prefer green tea in the morning"))
    assert action == "created" and mine != other.id
    assert store.memories.require(other.id).access_count == 0


def test_a_statement_kept_only_to_close_is_dropped_when_nothing_is_open() -> None:
    booked = Candidate(
        type=MemoryType.EVENT,
        content="Flights for Lisbon are booked!",
        importance=0.5,
        closing_only=True,
    )
    todo = _memory(
        6, "I still need to book flights for the Lisbon trip.", memory_type=MemoryType.TODO
    )
    assert _plan(booked, neighbours=[(GARDEN, 0.2)]).action == "drop"
    plan = _plan(booked, neighbours=[(todo, 0.83)], closable=True)
    assert (plan.action, plan.supersede) == ("create", (6,))


def test_a_done_todo_is_superseded_by_the_users_word_not_the_assistants(
    env: tuple[Store, VectorTier, Merger],
) -> None:
    store, vectors, merger = env

    def statement(kind: MemoryType, content: str, origin: str) -> Candidate:
        return Candidate(type=kind, content=content, importance=0.6, origin=origin)

    _, todo = _store(
        store,
        vectors,
        merger,
        statement(MemoryType.TODO, "I need to renew my passport before June.", "user"),
    )
    said = "I renewed your passport online this morning."
    _, assistant = _store(
        store, vectors, merger, statement(MemoryType.EVENT, said, "assistant"), turn=1
    )
    assert store.memories.require(todo).is_current(NOW + 1)
    _, user = _store(
        store,
        vectors,
        merger,
        statement(MemoryType.EVENT, "I renewed my passport this morning.", "user"),
        turn=2,
    )
    assert assistant != user
    closed = store.memories.require(todo)
    assert closed.superseded_by == user and not closed.is_current(NOW + 1)
    assert (user, todo, Relation.UPDATES) in [
        (e.src_id, e.dst_id, e.relation) for e in store.graph.edges_of([user])
    ]
    assert [a.reason for a in store.audit.of_memory(todo)][-1] == "done: closes an open todo"


def test_a_value_said_wrongly_is_corrected_in_a_slot_too() -> None:
    penicillin = _memory(
        9,
        "I'm allergic to penicillin so the travel insurance form needs that",
        "user:allergy:penicillin",
    )
    sulfa = Candidate(
        type=MemoryType.FACT,
        content="It's sulfa drugs I'm allergic to, penicillin is fine, I checked my file with the GP",
        importance=0.9,
        subject="user:allergy:sulfa",
    )
    plan = _plan(sulfa, neighbours=[(penicillin, 0.54)], closable=True)
    assert plan.supersede == (9,) and plan.reason.startswith("corrected")
    # another allergy stays
    peanuts = _memory(10, "I'm allergic to peanuts", "user:allergy:peanuts")
    assert _plan(sulfa, neighbours=[(peanuts, 0.6)], closable=True).supersede == ()


def test_someone_new_in_a_role_ends_a_slot_holder_too() -> None:
    manager = _memory(11, "My manager is Priya Raman, she's pretty hands-off.", "user:manager")
    dana = Candidate(
        type=MemoryType.FACT,
        content="Dana is the new manager, Priya moved to platform.",
        importance=0.5,
        closing_only=True,
    )
    plan = _plan(dana, neighbours=[(manager, 0.5)], closable=True)
    assert plan.supersede == (11,) and plan.reason == NEW_HOLDER
    dentist = _memory(12, "My dentist is Dr. Lim in Camden.", "user:contact:dentist")
    assert _plan(dana, neighbours=[(dentist, 0.5)], closable=True).action == "drop"


@pytest.mark.parametrize(
    "said",
    [
        "Chloe put her rate up to £9.50 an hour from this month.",
        "Our babysitter's rate went up to £9.50 an hour.",
        "We now pay Chloe £9.50 an hour.",
        "Chloe's rate is now £9.50 an hour.",
        "Chloe charges £9.50 an hour now.",
        "Chloe is £9.50 an hour now.",
    ],
)
def test_a_contacts_new_price_ends_the_old_and_takes_the_contacts_slot(said: str) -> None:
    chloe = _memory(
        13, "We pay our babysitter Chloe £8 an hour, she comes Tuesdays.", "user:contact:babysitter"
    )
    rate = Candidate(type=MemoryType.FACT, content=said, importance=0.5, closing_only=True)
    plan = _plan(rate, neighbours=[(chloe, 0.7)], closable=True)
    assert plan.action == "create" and plan.supersede == (13,)
    assert plan.reason == NEW_AMOUNT and plan.subject == "user:contact:babysitter"


def test_a_price_said_of_someone_else_leaves_a_contact_alone() -> None:
    chloe = _memory(
        14, "We pay our babysitter Chloe £8 an hour, she comes Tuesdays.", "user:contact:babysitter"
    )
    plumber = Candidate(
        type=MemoryType.FACT, content="The plumber put his rate up to £60 an hour.", importance=0.5
    )
    assert _plan(plumber, neighbours=[(chloe, 0.5)], closable=True).supersede == ()
    # who the contact is, with no price, is no value a price replaces
    named = _memory(15, "Our babysitter is Chloe, she comes Tuesdays.", "user:contact:babysitter")
    raised = Candidate(
        type=MemoryType.FACT, content="Chloe put her rate up to £9.50 an hour.", importance=0.5
    )
    assert _plan(raised, neighbours=[(named, 0.6)], closable=True).supersede == ()


def test_a_new_time_or_rent_is_kept_when_nothing_gave_the_old_one() -> None:
    pushed = Candidate(
        type=MemoryType.FACT,
        content="Infusion got pushed to Monday 16 September, 10am, because the unit was short-staffed",
        importance=0.5,
        closing_only=True,
    )
    assert _plan(pushed, neighbours=[], closable=True).action == "create"
    done = Candidate(
        type=MemoryType.EVENT,
        content="The plumber fixed the tap",
        importance=0.5,
        closing_only=True,
    )
    assert _plan(done, neighbours=[], closable=True).action == "drop"
    rent = Candidate(
        type=MemoryType.FACT,
        content="Landlord put rent up to 250 a week from 1 april",
        importance=0.5,
        closing_only=True,
    )
    assert _plan(rent, neighbours=[], closable=True).action == "create"
    price = Candidate(
        type=MemoryType.FACT, content="Netflix went up to 17.99.", importance=0.5, closing_only=True
    )
    assert _plan(price, neighbours=[], closable=True).action == "drop"


def test_a_slot_holder_telling_only_a_thing_and_its_time_gives_way_to_its_new_time() -> None:
    fridays = _memory(16, "I work from home on Fridays.", "user:work-location")
    moved = Candidate(
        type=MemoryType.FACT, content="My work-from-home day is Wednesday now.", importance=0.5
    )
    plan = _plan(moved, neighbours=[(fridays, 0.73)], closable=True)
    assert plan.supersede == (16,) and plan.subject == "user:work-location"
    # a holder telling more than the thing keeps its slot
    more = _memory(17, "I work at Monzo in London, from home on Fridays.", "user:work-location")
    assert _plan(moved, neighbours=[(more, 0.73)], closable=True).supersede == ()


def test_a_provider_named_for_a_contacts_role_succeeds_the_contact() -> None:
    vet = _memory(18, "Our vet is Dr Patel at Meadow Vets.", "user:contact:vet")
    moved = Candidate(
        type=MemoryType.FACT,
        content="We've moved the cat to Oakwood Vets, Dr Lewis is lovely.",
        importance=0.5,
    )
    plan = _plan(moved, neighbours=[(vet, 0.59)], closable=True)
    assert plan.supersede == (18,) and plan.reason == NEW_HOLDER
    assert plan.subject == "user:contact:vet"
    # so does the user's own move to one
    dentist = _memory(19, "Our dentist is Dr Shah at Bright Smiles.", "user:contact:dentist")
    moved_to = Candidate(
        type=MemoryType.FACT, content="We've moved to Parkside Dental.", importance=0.5
    )
    plan = _plan(moved_to, neighbours=[(dentist, 0.5)], closable=True)
    assert plan.supersede == (19,) and plan.subject == "user:contact:dentist"
    # a provider of another kind leaves the vet alone
    phone = Candidate(
        type=MemoryType.FACT, content="We've moved our broadband to Octopus.", importance=0.5
    )
    assert _plan(phone, neighbours=[(vet, 0.4)], closable=True).supersede == ()
