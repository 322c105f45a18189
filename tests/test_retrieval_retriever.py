"""The Retriever end to end on small hand-made stores: scopes, supersession, graph, filters, budget, hostile input."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_bowerbird.config import Config, build_config
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.retrieval import (
    Hit,
    RecallRequest,
    Retriever,
    estimate_tokens,
    format_hits,
    item_key,
)
from hermes_bowerbird.retrieval import retriever as retriever_module
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import (
    ItemKind,
    MemoryType,
    NewEpisode,
    NewMemory,
    Provenance,
    Relation,
    Source,
)

DAY = 86_400.0
START = 1_750_000_000.0
MINE = ("user:a", "profile:default")


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


@dataclass
class World:
    store: Store
    vectors: VectorTier
    retriever: Retriever
    clock: Clock
    config: Config

    def remember(
        self,
        content: str,
        type: MemoryType = MemoryType.FACT,
        scope: str = "user:a",
        provenance: tuple[Provenance, ...] = (),
        **kwargs: Any,
    ) -> int:
        memory = self.store.insert_memory(
            NewMemory(
                scope=scope,
                type=type,
                content=content,
                source=Source.TOOL,
                provenance=provenance,
                **kwargs,
            )
        )
        self.vectors.add(ItemKind.MEMORY, [(memory.id, content)])
        return memory.id

    def episode(
        self,
        content: str,
        session: str = "s1",
        turn: int = 0,
        scope: str = "user:a",
        role: str = "user",
    ) -> int:
        episode_id = self.store.episodes.insert(
            NewEpisode(
                scope=scope,
                session_id=session,
                turn_index=turn,
                chunk_index=0,
                role=role,
                content=content,
            )
        )
        self.vectors.add(ItemKind.EPISODE, [(episode_id, content)])
        return episode_id

    def search(self, query: str, **kwargs: object) -> list[Hit]:
        return self.retriever.search(RecallRequest(query, kwargs.pop("scopes", MINE), **kwargs))  # type: ignore[arg-type]


def _world(tmp_path: Path, embedder: LocalEmbedder | None) -> Iterator[World]:
    clock = Clock()
    config = build_config(tmp_path, {})
    store = Store.open(tmp_path / "memory.db", clock=clock)
    service = (
        EmbeddingService.from_embedder(embedder, store)
        if embedder
        else EmbeddingService(None, store)
    )
    vectors = VectorTier(store, service)
    retriever = Retriever(store, vectors, config, clock)
    yield World(store, vectors, retriever, clock, config)
    retriever.close()
    store.close()


@pytest.fixture
def world(tmp_path: Path, embedder: LocalEmbedder) -> Iterator[World]:
    yield from _world(tmp_path, embedder)


@pytest.fixture
def keyword_world(tmp_path: Path) -> Iterator[World]:
    """No embedding model: full-text and graph signals only."""
    yield from _world(tmp_path, None)


def test_finds_by_keyword_and_by_meaning(world: World) -> None:
    deploy = world.remember(
        "The team deploys the API with Ansible every Tuesday", MemoryType.PROCEDURE
    )
    cat = world.remember("The user's cat is called Miso")
    world.remember("Lunch is usually at noon")
    assert world.search("Ansible")[0].id == deploy
    assert world.search("what is the name of my pet kitten")[0].id == cat


def test_vector_signal_off_still_finds_keywords_and_says_so(keyword_world: World) -> None:
    deploy = keyword_world.remember("The team deploys the API with Ansible every Tuesday")
    hits = keyword_world.search("how do we deploy with ansible", explain=True)
    assert hits[0].id == deploy
    assert hits[0].signals["vector_unavailable"] == 1.0
    assert "fts_memory" in hits[0].signals


def test_scope_isolation(world: World) -> None:
    world.remember("Alice's bank PIN hint is the blue door", scope="user:b")
    world.episode("Alice: my bank PIN hint is the blue door", scope="user:b")
    mine = world.remember("My bank is the credit union on Main Street")
    hits = world.search("bank PIN hint blue door", limit=20)
    assert [h.id for h in hits] == [mine]
    assert world.search("bank PIN hint", scopes=("user:b",))[0].id != mine


def test_superseded_fact_ranks_below_its_successor(world: World) -> None:
    old = world.remember(
        "The user lives in Berlin, Germany, in a flat in Kreuzberg", subject="user:residence"
    )
    world.clock.now += 30 * DAY
    new = world.remember("The user moved to Lisbon", subject="user:residence")
    world.store.supersede(old, new, reason="moved", actor="test")
    hits = world.search("Where does the user live? Berlin Kreuzberg flat")
    ids = [h.id for h in hits]
    assert ids.index(new) < ids.index(old)
    assert next(h for h in hits if h.id == old).superseded
    assert not next(h for h in hits if h.id == new).superseded


def test_successor_is_brought_in_when_only_the_old_fact_matches(keyword_world: World) -> None:
    old = keyword_world.remember("Standup meeting is at 9:30 in room Kepler")
    new = keyword_world.remember("Moved to 10:00, online only")
    keyword_world.store.supersede(old, new, reason="moved", actor="test")
    ids = [h.id for h in keyword_world.search("Kepler standup")]
    assert ids[:2] == [new, old]


def test_near_duplicates_are_not_both_returned(world: World) -> None:
    first = world.remember("The user prefers dark mode in every editor", MemoryType.PREFERENCE)
    world.remember("The user prefers dark mode in every editor.", MemoryType.PREFERENCE)
    other = world.remember("The user prefers a light terminal theme", MemoryType.PREFERENCE)
    ids = [h.id for h in world.search("which editor theme does the user prefer", limit=2)]
    assert other in ids and len({first, first + 1} & set(ids)) == 1


def test_graph_edges_bring_in_linked_memories(keyword_world: World) -> None:
    cause = keyword_world.remember("The outage on Monday was traced to the expired TLS certificate")
    effect = keyword_world.remember("Certificates now renew automatically thirty days early")
    unrelated = keyword_world.remember("Lunch order for Friday: pizza")
    keyword_world.store.add_edge(effect, cause, Relation.RESULT_OF)
    hits = keyword_world.search("Monday outage", explain=True)
    ids = [h.id for h in hits]
    assert ids[0] == cause and effect in ids and unrelated not in ids
    assert "graph_edge" in next(h for h in hits if h.id == effect).signals


def test_entities_named_in_the_query_seed_the_graph(keyword_world: World) -> None:
    linked = keyword_world.remember("The deadline moved to June")
    keyword_world.remember("The falconry club meets on Sundays")  # 'falcon' only as a substring
    entity = keyword_world.store.graph.upsert_entity(
        "user:a", "Project Falcon", "project falcon", "project"
    )
    keyword_world.store.graph.add_aliases(entity, [("Falcon", "falcon")])
    keyword_world.store.graph.link_memory_entities(linked, [entity])
    hits = keyword_world.search("status of falcon", explain=True)
    assert hits[0].id == linked and hits[0].signals["graph_entity"] == 1.0
    assert len(hits) == 1


def test_type_hint_and_type_filter(keyword_world: World) -> None:
    fact = keyword_world.remember("The database is Postgres 16")
    decision = keyword_world.remember("We chose Postgres as the database", MemoryType.DECISION)
    assert keyword_world.search("what did we decide about the database")[0].id == decision
    only_facts = keyword_world.search("database Postgres", types=(MemoryType.FACT,))
    assert [h.id for h in only_facts] == [fact]


def test_time_window_from_the_query(keyword_world: World) -> None:
    keyword_world.clock.now = START - 10 * DAY
    older = keyword_world.remember("Reviewed the quarterly budget spreadsheet")
    keyword_world.clock.now = START - 1 * DAY
    recent = keyword_world.remember("Reviewed the hiring budget spreadsheet")
    keyword_world.clock.now = START
    assert keyword_world.search("what budget did I review yesterday")[0].id == recent
    assert keyword_world.search("quarterly budget")[0].id == older


def test_since_until_and_exclude(keyword_world: World) -> None:
    keyword_world.clock.now = START - 5 * DAY
    old = keyword_world.remember("Kubernetes upgrade planned")
    keyword_world.clock.now = START
    new = keyword_world.remember("Kubernetes upgrade finished")
    assert [h.id for h in keyword_world.search("kubernetes", since=START - DAY)] == [new]
    assert [h.id for h in keyword_world.search("kubernetes", until=START - DAY)] == [old]
    excluded = frozenset({item_key(ItemKind.MEMORY, new)})
    assert [h.id for h in keyword_world.search("kubernetes", exclude_ids=excluded)] == [old]


def test_episodes_carry_their_provenance(keyword_world: World) -> None:
    keyword_world.episode("Caroline: I went to a support group yesterday", session="conv:1", turn=3)
    memory = keyword_world.remember(
        "Caroline attends a support group",
        provenance=(Provenance("conv:1", 5), Provenance("conv:2", 0)),
    )
    hits = keyword_world.search("support group")
    by_kind = {h.kind: h for h in hits}
    assert by_kind[ItemKind.EPISODE].provenance == (Provenance("conv:1", 3),)
    assert set(by_kind[ItemKind.MEMORY].provenance) == {
        Provenance("conv:1", 5),
        Provenance("conv:2", 0),
    }
    assert by_kind[ItemKind.MEMORY].id == memory
    assert all(
        h.kind is ItemKind.MEMORY
        for h in keyword_world.search("support group", include_episodes=False)
    )


def test_memory_and_its_source_episode_take_one_place(keyword_world: World) -> None:
    keyword_world.episode("Melanie: we went camping by the lake with the kids", session="c", turn=2)
    keyword_world.remember(
        "Melanie went camping by the lake with her kids", provenance=(Provenance("c", 2),)
    )
    keyword_world.episode("Melanie: the lake was cold", session="c", turn=9)
    hits = keyword_world.search("camping lake kids")
    assert [p.turn_index for h in hits for p in h.provenance] == [2, 9]


@pytest.mark.parametrize(("origin", "places"), [("user", 2), ("assistant", 1)])
def test_the_assistants_reply_is_no_copy_of_what_the_user_told_in_its_turn(
    keyword_world: World, origin: str, places: int
) -> None:
    keyword_world.episode(
        "Thanks. The till number is not secret, it's fine in the config.",
        session="c",
        turn=1,
        role="assistant",
    )
    keyword_world.remember(
        "Our till number is 5123456",
        provenance=(Provenance("c", 1),),
        metadata={"origin": origin},
    )
    hits = keyword_world.search("till number")
    # the reply in the turn the user told a fact says something else, unless the fact came from the reply
    assert len(hits) == places


def test_budget_and_touch(keyword_world: World) -> None:
    ids = [
        keyword_world.remember(f"Release note {i}: the exporter gained a new option. " * 6)
        for i in range(6)
    ]
    hits = keyword_world.search("exporter release note", budget_tokens=120)
    assert hits and estimate_tokens(format_hits(hits, 120)) <= 120
    touched = keyword_world.store.memories.get_many(ids)
    assert {m.id for m in touched.values() if m.access_count == 1} == {h.id for h in hits}
    keyword_world.retriever.search(RecallRequest("exporter", MINE), touch=False)
    assert keyword_world.store.memories.get_many(ids) == touched  # touch=False leaves them alone


def test_forgotten_memories_are_never_returned(world: World) -> None:
    secret = world.remember("The staging password rotates on the first of the month")
    world.store.forget(secret, reason="test", actor="test")
    assert world.search("staging password rotation") == []


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "NEAR(a b)",
        "*",
        "'; DROP TABLE memories; --",
        "\x00",
        "())((",
        "content:foo OR",
        "🦜",
        "a" * 50_000,
        "AND OR NOT",
        "   ",
        "",
    ],
)
def test_hostile_queries_never_raise(keyword_world: World, query: str) -> None:
    keyword_world.remember("content: foo bar")
    hits = keyword_world.search(query)
    assert isinstance(hits, list)
    assert keyword_world.store.health.counts()["memories"] == 1


def test_empty_scopes_return_nothing(keyword_world: World) -> None:
    keyword_world.remember("anything at all")
    assert keyword_world.search("anything", scopes=()) == []


def test_old_turns_that_stated_a_superseded_fact_rank_below_the_current_one(
    keyword_world: World,
) -> None:
    w = keyword_world
    stale = [
        w.episode("I live in Lisbon, in an old flat near the river, and I love Lisbon", turn=t)
        for t in range(3)
    ]
    old = w.remember(
        "I live in Lisbon",
        MemoryType.IDENTITY,
        subject="user:residence",
        provenance=(Provenance("s1", 0), Provenance("s1", 1), Provenance("s1", 2)),
    )
    w.clock.now += 30 * DAY
    w.episode("We finally moved to Berlin last week", session="s2", turn=0)
    new = w.remember(
        "I moved to Berlin",
        MemoryType.IDENTITY,
        subject="user:residence",
        provenance=(Provenance("s2", 0),),
    )
    w.store.supersede(old, new, reason="moved", actor="test")
    hits = w.search("Where do I live now? Lisbon?", limit=6)
    keys = [h.key for h in hits]
    assert keys[0] == item_key(ItemKind.MEMORY, new)
    for episode_id in stale:
        if item_key(ItemKind.EPISODE, episode_id) in keys:
            assert keys.index(item_key(ItemKind.EPISODE, episode_id)) > 0


@pytest.mark.parametrize(
    ("query", "demoted"),
    [
        ("How much do we pay for Netflix?", True),  # about the user: what holds now
        ("How much does Netflix cost?", True),  # in the present tense: what holds now
        ("How much did Netflix cost?", False),  # in the past: history may be asked
        ("What was the old Netflix price?", False),
    ],
)
def test_a_question_about_us_or_now_demotes_turns_that_stated_a_superseded_fact(
    keyword_world: World, query: str, demoted: bool
) -> None:
    w = keyword_world
    stale = w.episode("Our Netflix plan is 15.49 a month")
    old = w.remember("Our Netflix plan is 15.49 a month", provenance=(Provenance("s1", 0),))
    w.clock.now += DAY
    w.episode("Netflix went up to 17.99", session="s2", turn=0)
    new = w.remember("Netflix went up to 17.99", provenance=(Provenance("s2", 0),))
    w.store.supersede(old, new, reason="changed", actor="test")
    hits = w.search(query, limit=6, explain=True)
    flagged = {h.key for h in hits if h.signals.get("superseded")}
    assert (item_key(ItemKind.EPISODE, stale) in flagged) is demoted


def test_the_users_own_name_reads_as_first_person(keyword_world: World) -> None:
    w = keyword_world
    name = w.remember("I'm Marcus, by the way.", MemoryType.IDENTITY, subject="user:name")
    marcus = w.store.graph.upsert_entity("user:a", "Marcus", "marcus", "person")
    w.store.graph.link_memory_entities(name, [marcus])
    for turn in range(4):
        w.episode(f"Have a good day, Marcus. See you at {turn}.", turn=turn)
    diet = w.remember(
        "I eat mostly plants now, with local eggs", MemoryType.PREFERENCE, subject="user:diet"
    )
    hits = w.search("What is Marcus's diet?", limit=3, explain=True)
    assert hits[0].id == diet and hits[0].kind is ItemKind.MEMORY
    assert "subject" in hits[0].signals
    analysis = w.retriever.analyze("What is Marcus's diet?", MINE)
    assert analysis.about_user and "marcus" not in analysis.keywords and not analysis.entity_ids


@pytest.mark.parametrize(
    ("query", "floor", "expected"),
    [
        ("what is a good name for a cat?", 0.3, set()),  # unrelated to anything stored
        # no floor: something always comes back
        (
            "what is a good name for a cat?",
            0.0,
            {"kubernetes", "pasta"},
        ),
        ("how do we deploy to kubernetes?", 0.3, {"kubernetes"}),
    ],
)
def test_min_relevance_drops_unrelated_items(
    world: World, query: str, floor: float, expected: set[str]
) -> None:
    world.remember(
        "We deploy the billing service to Kubernetes with Helm charts", MemoryType.DECISION
    )
    world.remember("The user's favourite pasta is cacio e pepe", MemoryType.PREFERENCE)
    hits = world.search(query, min_relevance=floor, explain=True)
    found = {word for word in ("kubernetes", "pasta") for h in hits if word in h.content.lower()}
    assert found == expected
    if floor:
        assert all(h.signals["relevance"] >= floor for h in hits)


def test_a_stale_fact_that_passes_the_gate_carries_its_successor(world: World) -> None:
    old = world.remember(
        "I work at Deloitte as an auditor, it's a 40 minute train ride.", subject="user:employer"
    )
    world.remember("We deploy the billing service to Kubernetes with Helm charts")
    world.remember("The user's favourite pasta is cacio e pepe", MemoryType.PREFERENCE)
    world.clock.now += 30 * DAY
    new = world.remember("I started a new job at KPMG last Monday.", subject="user:employer")
    world.store.supersede(old, new, reason="changed", actor="test")
    floor = world.config.prefetch_gate
    hits = world.search("Where do I work?", min_relevance=floor, explain=True)
    ids = [h.id for h in hits]
    assert old in ids  # the old fact answers the words of the question best ...
    assert ids.index(new) < ids.index(old)  # ... and never comes without what replaced it
    carried = next(h for h in hits if h.id == new)
    assert carried.signals["relevance"] < floor and carried.signals["carried"] == 1.0
    assert format_hits(hits).count(", superseded]") == 1


def test_what_a_fact_carries_comes_right_after_it_past_the_limit(world: World) -> None:
    old = world.remember("I take metformin and atorvastatin every morning.", subject="user:health")
    world.remember("We deploy the billing service to Kubernetes with Helm charts")
    world.clock.now += 30 * DAY
    new = world.remember("The doctor switched my atorvastatin to rosuvastatin.")
    query = "Which medicines am I on?"
    floor = world.config.prefetch_gate
    assert world.search(query, min_relevance=floor)[0].id == old
    hits = world.search(query, min_relevance=floor, limit=1)
    assert [h.id for h in hits] == [old, new]
    assert hits[0].amended_by == (new,) and hits[0].carries == (("memory", new),)


def test_prefetch_gate_is_an_operating_point_inside_the_relevance_range(world: World) -> None:
    assert 0.0 < world.config.prefetch_gate < 1.0


def test_a_request_has_no_gate_unless_asked() -> None:
    assert RecallRequest("q", ("user:a",)).min_relevance == 0.0


def test_the_vector_stage_run_beside_the_keyword_queries_changes_no_answer(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.remember("The team deploys the API with Ansible every Tuesday", MemoryType.PROCEDURE)
    world.remember("The user's cat is called Miso")
    world.remember("My sister Ines lives in Porto and works as a vet")
    world.episode("we moved the standup to 10am because of the time zones", turn=1)
    world.episode("Ines said the clinic is closed on Mondays", turn=2)
    queries = ["how do we ship the API?", "what is my pet called", "when is the standup", "Ines"]
    # a store this small runs one stage after the other...
    alone = [world.retriever.search(RecallRequest(q, MINE), touch=False) for q in queries]
    # ...and one past the threshold runs the vector stage on the retriever's own thread: the same hits
    monkeypatch.setattr("hermes_bowerbird.retrieval.retriever.PARALLEL_FROM_ITEMS", 1)
    beside = [world.retriever.search(RecallRequest(q, MINE), touch=False) for q in queries]
    assert [[(h.kind, h.id, h.score, dict(h.signals)) for h in hits] for hits in beside] == [
        [(h.kind, h.id, h.score, dict(h.signals)) for h in hits] for hits in alone
    ]
    assert any(t.name.startswith("bowerbird-recall") for t in threading.enumerate())


def test_a_search_beside_the_vector_stage_reads_each_vector_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(12):
        world.remember(f"The release checklist step {n} is owned by the platform team")
        world.episode(f"we talked about the release checklist and its step {n}", turn=n + 1)
    monkeypatch.setattr("hermes_bowerbird.retrieval.retriever.PARALLEL_FROM_ITEMS", 1)
    request = RecallRequest("who owns the release checklist?", MINE, min_relevance=0.01)
    # a first search reads the scopes' ids, so the next one runs beside the vector stage
    before = world.retriever.search(request, touch=False)
    read: list[tuple[ItemKind, int]] = []
    ahead: list[tuple[ItemKind, int]] = []
    read_ahead, stage_done = threading.Event(), threading.Event()
    stage, original = world.retriever._vector_signals, world.vectors.vectors
    read_vectors_of = retriever_module._read_vectors

    def slow_stage(*args: Any) -> Any:
        read_ahead.wait(10)  # a vector stage slower than the keyword queries
        found = stage(*args)
        stage_done.set()
        return found

    def vectors(kind: ItemKind, ids: Sequence[int]) -> dict[int, np.ndarray]:
        if sys._getframe(1).f_code.co_name == "_read_vectors":
            read.extend((kind, i) for i in ids)
            if not stage_done.is_set():
                ahead.extend((kind, i) for i in ids)
        return original(kind, ids)

    def read_vectors(*args: Any) -> None:
        read_vectors_of(*args)
        read_ahead.set()

    monkeypatch.setattr(world.retriever, "_vector_signals", slow_stage)
    monkeypatch.setattr(world.vectors, "vectors", vectors)
    monkeypatch.setattr(retriever_module, "_read_vectors", read_vectors)
    hits = world.retriever.search(request, touch=False)
    assert [(h.kind, h.id, h.score) for h in hits] == [(h.kind, h.id, h.score) for h in before]
    # the keyword matches' vectors were read while the vector stage ran, the rest for the rerank: none twice
    assert ahead and len(read) == len(set(read))
