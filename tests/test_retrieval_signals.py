"""The signal registry: each entry's weight from config, and a signal added in one place is run and fused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_bowerbird.config import RetrievalWeights, build_config
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.retrieval import Hit, RecallRequest, Retriever
from hermes_bowerbird.retrieval.candidates import Ranked
from hermes_bowerbird.retrieval.query import analyze_query
from hermes_bowerbird.retrieval.signals import (
    SIGNALS,
    Match,
    SignalInput,
    SignalSpec,
    Stage,
    fusion_weights,
    lean_on_meaning,
)
from hermes_bowerbird.retrieval.tuning import KEYWORDS_BY_SCOPE_FROM_ITEMS
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewEpisode, NewMemory, Source

NOW = 1_750_000_000.0
SCOPES = ("user:a",)


class Home:
    """A store without an embedding model, and a way to search it with a given registry."""

    def __init__(self, tmp_path: Path) -> None:
        self.store = Store.open(tmp_path / "memory.db", clock=lambda: NOW)
        self.vectors = VectorTier(self.store, EmbeddingService(None, self.store))
        self.config = build_config(tmp_path, {})

    def remember(self, content: str) -> int:
        memory = self.store.insert_memory(
            NewMemory(scope="user:a", type=MemoryType.FACT, content=content, source=Source.TOOL)
        )
        return memory.id

    def episode(self, content: str) -> int:
        return self.store.episodes.insert(
            NewEpisode(
                scope="user:a",
                session_id="s1",
                turn_index=0,
                chunk_index=0,
                role="user",
                content=content,
            )
        )

    def search(self, query: str, signals: tuple[SignalSpec, ...], **kwargs: object) -> list[Hit]:
        retriever = Retriever(self.store, self.vectors, self.config, lambda: NOW, signals=signals)
        try:
            return retriever.search(
                RecallRequest(query, SCOPES, explain=True, **kwargs),  # type: ignore[arg-type]
                touch=False,
            )
        finally:
            retriever.close()


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    made = Home(tmp_path)
    yield made
    made.store.close()


def pinned(item_id: int, kind: ItemKind = ItemKind.MEMORY, weight: float = 1.0) -> SignalSpec:
    """A signal that always proposes one item (what a new generator looks like to the retriever)."""

    def find(given: SignalInput) -> Ranked:
        return ((item_id, 0.9),)

    return SignalSpec("pinned", kind, Stage.QUERY, find, lambda w: weight)


def test_a_signal_added_to_the_registry_is_fused(home: Home) -> None:
    deploy = home.remember("We deploy the billing service with Ansible")
    lunch = home.remember("Lunch is usually at noon")
    hits = home.search("ansible deploy", (*SIGNALS, pinned(lunch)))
    assert [h.id for h in hits] == [deploy, lunch]


def test_the_added_signal_names_its_raw_score(home: Home) -> None:
    lunch = home.remember("Lunch is usually at noon")
    hits = home.search("ansible deploy", (*SIGNALS, pinned(lunch)))
    assert hits[0].signals["pinned"] == 0.9


def test_without_the_added_signal_the_item_is_not_found(home: Home) -> None:
    home.remember("We deploy the billing service with Ansible")
    lunch = home.remember("Lunch is usually at noon")
    assert lunch not in [h.id for h in home.search("ansible deploy", SIGNALS)]


def test_a_signal_weighted_zero_adds_no_score(home: Home) -> None:
    lunch = home.remember("Lunch is usually at noon")
    assert [
        h.score for h in home.search("ansible deploy", (*SIGNALS, pinned(lunch, weight=0.0)))
    ] == [0.0]


def test_an_episode_signal_is_not_run_when_only_memories_are_asked_for(home: Home) -> None:
    turn = home.episode("Lunch is usually at noon")
    assert (
        home.search("ansible", (*SIGNALS, pinned(turn, ItemKind.EPISODE)), types=(MemoryType.FACT,))
        == []
    )


def test_an_episode_signal_finds_episodes(home: Home) -> None:
    turn = home.episode("Lunch is usually at noon")
    hits = home.search("ansible", (*SIGNALS, pinned(turn, ItemKind.EPISODE)))
    assert [(h.kind, h.id) for h in hits] == [(ItemKind.EPISODE, turn)]


def test_registry_names_are_unique() -> None:
    names = [spec.name for spec in SIGNALS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fts_memory", 0.7),
        ("fts_episode", 1.0),
        ("vector_memory", 0.5),
        ("vector_episode", 0.8),
        ("graph_entity", 0.3),
        ("graph_entity_episode", 0.3),
        ("graph_edge", 0.3),
        ("subject", 1.0),
        ("question", 0.6),
    ],
)
def test_each_signal_reads_its_weight_from_config(name: str, expected: float) -> None:
    assert fusion_weights(SIGNALS, RetrievalWeights())[name] == expected


def test_a_configured_weight_reaches_its_signal() -> None:
    assert fusion_weights(SIGNALS, RetrievalWeights(vector_episode=0.25))["vector_episode"] == 0.25


def test_a_vector_signal_without_a_query_vector_says_so(home: Home) -> None:
    given = SignalInput(home.store, home.vectors, analyze_query("anything", NOW), SCOPES)
    vector = next(spec for spec in SIGNALS if spec.stage is Stage.VECTOR)
    assert vector.run(given).note == "vector index not ready"


BASE = {"fts_memory": 0.7, "vector_memory": 0.5, "vector_episode": 0.8}


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        (0.0, 1.5),  # no keyword of the question found: the vector signal counts 1 + 2 times
        (0.25, 1.0),  # half of `enough`: 1 + 2 x 0.5
        (0.5, 0.5),  # enough keyword evidence: unchanged
        (1.0, 0.5),
    ],
)
def test_a_question_the_keywords_miss_leans_on_meaning(evidence: float, expected: float) -> None:
    assert lean_on_meaning(SIGNALS, BASE, evidence, lean=2.0, enough=0.5)[
        "vector_memory"
    ] == pytest.approx(expected)


def test_the_lean_leaves_keyword_signals_alone() -> None:
    assert lean_on_meaning(SIGNALS, BASE, 0.0, lean=2.0, enough=0.5)["fts_memory"] == 0.7


def test_no_lean_leaves_every_weight() -> None:
    assert lean_on_meaning(SIGNALS, BASE, 0.0, lean=0.0) == BASE


@pytest.mark.parametrize(
    ("name", "matches"),
    [
        ("fts_memory", Match.WORDS),
        ("fts_episode", Match.WORDS),
        ("vector_memory", Match.MEANING),
        ("vector_episode", Match.MEANING),
        ("graph_entity", Match.OTHER),
        ("subject", Match.OTHER),
        ("graph_edge", Match.OTHER),
    ],
)
def test_each_signal_says_what_it_matches(name: str, matches: Match) -> None:
    assert next(spec for spec in SIGNALS if spec.name == name).matches is matches


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def fact_position(tmp_path: Path, embedder: LocalEmbedder, lean: str) -> int:
    """Where a fact told in other words than the question ranks among turns that share the question's words."""
    store = Store.open(tmp_path / f"lean{lean}.db", clock=lambda: NOW)
    vectors = VectorTier(store, EmbeddingService.from_embedder(embedder, store))
    said = [
        "Dinner with the Harrisons is on Saturday at eight.",
        "The team dinner budget is forty pounds a head.",
        "Never go into the server room without a badge.",
        "I can't stand coriander, it tastes like soap to me.",
    ]
    ids = []
    for n, text in enumerate(said):
        ids.append(
            store.episodes.insert(
                NewEpisode(
                    scope="user:a",
                    session_id=f"s{n}",
                    turn_index=0,
                    chunk_index=0,
                    role="user",
                    content=text,
                )
            )
        )
        vectors.add(ItemKind.EPISODE, [(ids[-1], text)])
    retriever = Retriever(
        store, vectors, build_config(tmp_path, {"weights.meaning_lean": lean}), lambda: NOW
    )
    hits = retriever.search(
        RecallRequest("Which herb must never go into my dinners?", SCOPES, limit=4), touch=False
    )
    retriever.close()
    store.close()
    return [h.id for h in hits].index(ids[-1])


def test_a_question_in_other_words_ranks_its_fact_higher_with_the_lean(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    assert fact_position(tmp_path, embedder, "2.0") < fact_position(tmp_path, embedder, "0")


@pytest.mark.parametrize(("seen", "by_scope"), [(10, False), (KEYWORDS_BY_SCOPE_FROM_ITEMS, True)])
def test_the_keyword_signal_asks_for_scopes_side_by_side_only_when_they_hold_many_items(
    home: Home, monkeypatch: pytest.MonkeyPatch, seen: int, by_scope: bool
) -> None:
    remembered = home.remember("We deploy on Tuesdays.")
    asked: list[bool] = []
    real = home.store.search.memories

    def memories(*args: object, **kwargs: object) -> list[tuple[int, float]]:
        asked.append(bool(kwargs.get("by_scope")))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(home.store.search, "memories", memories)
    given = SignalInput(
        home.store,
        home.vectors,
        analyze_query("when do we deploy", NOW),
        SCOPES,
        allowed={ItemKind.MEMORY: frozenset(range(seen))},
    )
    keyword = next(spec for spec in SIGNALS if spec.name == "fts_memory")
    assert [i for i, _ in keyword.run(given).ranked] == [remembered]  # the same answer either way
    assert asked == [by_scope]
