"""Consolidation on the persona set: every pattern is a real repeat the ground truth knows, and no fact loses weight."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_bowerbird.config import load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.importers import apply_plan, parse_chat_jsonl
from hermes_bowerbird.maintenance import Consolidator
from hermes_bowerbird.types import MemoryFilter, MemoryType, Relation

PERSONA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "persona"
_WORD = re.compile(r"[a-z][a-z'-]{3,}")


def _truth_words(truth: dict[str, Any]) -> set[str]:
    """Stems (first 5 letters) of every word the ground truth says about the persona."""
    texts = [
        json.dumps(truth.get(key, ""))
        for key in ("final_profile", "changes", "signal_examples", "temporal_facts", "conflicts")
    ]
    return {w[:5] for text in texts for w in _WORD.findall(text.lower())}


@pytest.fixture(scope="module")
def consolidated(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Bowerbird, dict[int, float], list[int]]]:
    if not (PERSONA / "conversations.jsonl").is_file():
        pytest.skip("persona data not available")
    home = tmp_path_factory.mktemp("persona")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BOWERBIRD_LLM_BACKEND", "none")
        patch.setenv("BOWERBIRD_MAINTENANCE_ENABLED", "false")
        engine = Bowerbird(load_config(home), background=False)
    apply_plan(engine, parse_chat_jsonl(PERSONA / "conversations.jsonl"), scope="user:persona")
    engine.curate_now()
    engine.embeddings.start()  # the real small model embeds what was curated
    engine.admin.reindex()
    before = {
        m.id: m.importance
        for m in engine.store.memories.find(None, MemoryFilter(include_forgotten=True))
    }
    consolidator = Consolidator(engine.store, engine.vectors, engine.config)
    patterns = consolidator.run().patterns + consolidator.run().patterns
    yield engine, before, patterns
    engine.shutdown()


def test_no_fact_loses_importance(
    consolidated: tuple[Bowerbird, dict[int, float], list[int]],
) -> None:
    engine, before, _ = consolidated
    after = engine.store.memories.get_many(before)
    assert [i for i, old in before.items() if after[i].importance < old] == []


def test_every_pattern_repeats_across_sessions(
    consolidated: tuple[Bowerbird, dict[int, float], list[int]],
) -> None:
    engine, _, patterns = consolidated
    for pattern_id in patterns:
        examples = [
            e.src_id
            for e in engine.store.graph.edges_of([pattern_id])
            if e.relation is Relation.PART_OF and e.dst_id == pattern_id
        ]
        members = engine.store.memories.get_many(examples).values()
        assert len({m.session_id for m in members}) >= 2
        assert len({m.subject for m in members}) == 1 or all(m.subject is None for m in members)


def test_every_pattern_is_about_what_the_ground_truth_says(
    consolidated: tuple[Bowerbird, dict[int, float], list[int]],
) -> None:
    engine, _, patterns = consolidated
    truth = _truth_words(json.loads((PERSONA / "ground_truth.json").read_text()))
    unsupported = [
        engine.store.memories.require(p).content
        for p in patterns
        if not {w[:5] for w in _WORD.findall(engine.store.memories.require(p).content.lower())}
        & truth
    ]
    assert unsupported == []


def test_patterns_are_written_once(
    consolidated: tuple[Bowerbird, dict[int, float], list[int]],
) -> None:
    engine, _, _ = consolidated
    contents = [
        m.content
        for m in engine.store.memories.find(None, MemoryFilter(types=[MemoryType.PATTERN]))
    ]
    assert len(contents) == len(set(contents))
