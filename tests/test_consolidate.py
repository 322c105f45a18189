"""Consolidation: real repeats (one subject, several sessions) become one pattern linked to its examples, once;
examples keep their importance."""

from __future__ import annotations

import threading

import pytest

from hermes_bowerbird.config import Config
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.errors import LLMError
from hermes_bowerbird.maintenance import Consolidator
from hermes_bowerbird.maintenance.consolidate import CURSOR_KEY
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewMemory, Relation, Source

RUNS = (
    "I went for a run in the park this morning.",
    "This morning I went for a run in the park.",
    "I went for a run in the park this morning!",
    "I went running in the park this morning.",
)
UNRELATED = "The quarterly report is due on Friday."


class ScriptedLLM:
    """Stands in for the remote model: answers with a fixed text, or fails like a dead endpoint."""

    def __init__(self, reply: str | None) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    @property
    def name(self) -> str:
        return "scripted"

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 1024,
        json_mode: bool = False,
        timeout: float = 30.0,
    ) -> str:
        self.prompts.append(prompt)
        if self.reply is None:
            raise LLMError("endpoint unavailable")
        return self.reply


_SESSIONS = iter(range(1_000_000))


def add(
    store: Store,
    vectors: VectorTier,
    content: str,
    scope: str = "user:alice",
    *,
    session: str | None = None,
    subject: str | None = "activity:running",
) -> int:
    """An event memory, said in its own session unless `session` is given."""
    memory = store.insert_memory(
        NewMemory(
            scope,
            MemoryType.EVENT,
            content,
            Source.TURN,
            subject=subject,
            session_id=session or f"s{next(_SESSIONS)}",
        )
    )
    vectors.add(ItemKind.MEMORY, [(memory.id, content)])
    return memory.id


def test_a_cluster_becomes_a_pattern_with_part_of_edges_and_examples_kept(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    examples = [add(store, vectors, text) for text in RUNS[:3]]
    other = add(store, vectors, UNRELATED, subject="work:report")
    result = Consolidator(store, vectors, config).run()
    assert result.clusters == 1 and len(result.patterns) == 1
    pattern = store.memories.require(result.patterns[0])
    assert pattern.type is MemoryType.PATTERN and pattern.scope == "user:alice"
    assert "seen 3 times since" in pattern.content
    part_of = {
        e.src_id for e in store.graph.edges_of([pattern.id]) if e.relation is Relation.PART_OF
    }
    assert part_of == set(examples)
    for memory_id in examples:
        memory = store.memories.require(memory_id)
        assert memory.importance == pytest.approx(0.4) and not memory.forgotten
        assert any("pattern" in a.reason for a in store.audit.of_memory(memory_id))
    assert store.memories.require(other).importance == pytest.approx(0.4)
    assert store.audit.of_memory(pattern.id)[-1].action == "consolidate"
    assert vectors.vectors(ItemKind.MEMORY, [pattern.id])  # the pattern is searchable by meaning


def test_the_same_cluster_is_never_consolidated_twice(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    for text in RUNS[:3]:
        add(store, vectors, text)
    consolidator = Consolidator(store, vectors, config)
    assert len(consolidator.run().patterns) == 1
    store.meta.set(CURSOR_KEY, "0")  # even when every memory is looked at again
    add(store, vectors, RUNS[3])
    assert consolidator.run().patterns == []
    assert store.memories.count_by_type().get("pattern") == 1


def test_small_or_cross_scope_groups_stay_as_they_are(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    add(store, vectors, RUNS[0], scope="user:alice")
    add(store, vectors, RUNS[1], scope="user:alice")
    add(store, vectors, RUNS[2], scope="user:bob")
    result = Consolidator(store, vectors, config).run()
    assert result.clusters == 0 and "pattern" not in store.memories.count_by_type()


def test_dry_run_finds_the_cluster_and_changes_nothing(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    for text in RUNS[:3]:
        add(store, vectors, text)
    before = store.health.counts()
    result = Consolidator(store, vectors, config).run(dry_run=True)
    assert (result.clusters, result.linked, result.patterns) == (1, 3, [])
    assert store.health.counts() == before and store.meta.get(CURSOR_KEY) is None


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("The user runs in the park most mornings.", "The user runs in the park most mornings."),
        (None, "seen 3 times since"),  # the model failed: heuristic text
        ("", "seen 3 times since"),  # the model answered with nothing usable
    ],
)
def test_pattern_text_from_the_llm_with_fallback(
    store: Store, vectors: VectorTier, config: Config, reply: str | None, expected: str
) -> None:
    for text in RUNS[:3]:
        add(store, vectors, text)
    llm = ScriptedLLM(reply)
    result = Consolidator(store, vectors, config, llm).run()
    assert expected in store.memories.require(result.patterns[0]).content
    assert len(llm.prompts) == 1 and RUNS[0] in llm.prompts[0]


def test_one_session_going_on_about_something_is_no_pattern(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    for text in RUNS[:3]:
        add(store, vectors, text, session="only-one")
    assert Consolidator(store, vectors, config).run().patterns == []


def test_similar_memories_about_different_subjects_are_no_pattern(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    for n, text in enumerate(RUNS[:3]):
        add(store, vectors, text, subject=f"activity:{n}")
    assert Consolidator(store, vectors, config).run().patterns == []


def test_quarantined_memories_are_never_examples(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    ids = [add(store, vectors, text) for text in RUNS[:3]]
    store.quarantine_item(ItemKind.MEMORY, ids[0], "instruction_override")
    assert Consolidator(store, vectors, config).run().patterns == []


def test_two_runs_at_once_write_one_pattern(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    for text in RUNS:
        add(store, vectors, text)
    runs = [threading.Thread(target=Consolidator(store, vectors, config).run) for _ in range(2)]
    for run in runs:
        run.start()
    for run in runs:
        run.join(30)
    assert store.memories.count_by_type().get("pattern") == 1
