"""The wire format: every output dict written out, and every time in it as ISO 8601 UTC text."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fakes import T0, FakeClock

from hermes_bowerbird.config import load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import RememberOptions
from hermes_bowerbird.retrieval import Hit
from hermes_bowerbird.serialize import (
    bulletin_dict,
    detail_json,
    edge_dict,
    hit_dict,
    iso,
    memory_dict,
)
from hermes_bowerbird.types import Bulletin, Edge, ItemKind, MemoryType, Provenance, Relation

SCOPE = "profile:default"
T0_ISO = "2023-11-14T22:13:20+00:00"  # fakes.T0
WHEN = datetime(2026, 3, 4, 12, tzinfo=UTC).timestamp()


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Bowerbird]:
    config = load_config(
        tmp_path, environ={"BOWERBIRD_EMBEDDING_BACKEND": "none", "BOWERBIRD_LLM_BACKEND": "none"}
    )
    bowerbird = Bowerbird(config, background=False, clock=FakeClock())
    yield bowerbird
    bowerbird.shutdown()


def _times(data: object, path: str = "") -> Iterator[tuple[str, object]]:
    """(path, value) of every field named like a time, anywhere in a JSON-like value."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key.endswith("_at") or key in {"valid_until", "valid_from"}:
                yield f"{path}.{key}", value
            yield from _times(value, f"{path}.{key}")
    elif isinstance(data, list):
        for n, value in enumerate(data):
            yield from _times(value, f"{path}[{n}]")


def test_iso_is_utc_to_the_second() -> None:
    assert iso(T0) == T0_ISO


def test_iso_keeps_none() -> None:
    assert iso(None) is None


def test_hit_dict() -> None:
    hit = Hit(
        ItemKind.MEMORY,
        7,
        MemoryType.PROCEDURE,
        "Uses uv for Python.",
        0.5,
        WHEN,
        (Provenance("s1", 7),),
    )
    assert hit_dict(hit) == {
        "kind": "memory",
        "id": 7,
        "type": "procedure",
        "content": "Uses uv for Python.",
        "score": 0.5,
        "created_at": "2026-03-04T12:00:00+00:00",
        "date": "2026-03-04",
        "provenance": [{"session_id": "s1", "turn_index": 7}],
        "superseded": False,
    }


def test_hit_dict_shows_signals_when_explained() -> None:
    hit = Hit(ItemKind.EPISODE, 3, None, "x", 0.25, WHEN, signals={"fts_episode": 1.0 / 3})
    assert hit_dict(hit)["signals"] == {"fts_episode": 0.333333}


def test_hit_dict_names_what_amends_it() -> None:
    hit = Hit(ItemKind.MEMORY, 3, MemoryType.FACT, "I take metformin and atorvastatin.", 0.5, WHEN)
    assert "amended_by" not in hit_dict(hit)
    assert hit_dict(replace(hit, amended_by=(9,)))["amended_by"] == [9]


def test_edge_dict() -> None:
    edge = Edge(4, 2, 1, Relation.UPDATES, 1.0, T0)
    assert edge_dict(edge) == {
        "id": 4,
        "source_id": 2,
        "target_id": 1,
        "relation": "updates",
        "weight": 1.0,
        "created_at": T0_ISO,
    }


def test_bulletin_dict() -> None:
    bulletin = Bulletin(1, SCOPE, "Ada lives in Lisbon.", "h", "s", "template", T0)
    assert bulletin_dict(bulletin) == {
        "text": "Ada lives in Lisbon.",
        "scope": SCOPE,
        "generator": "template",
        "created_at": T0_ISO,
        "hash": "h",
    }


def test_memory_dict(engine: Bowerbird) -> None:
    memory = engine.remember(
        "The team deploys on Fridays.",
        scope=SCOPE,
        options=RememberOptions(type=MemoryType.PROCEDURE),
    )
    assert memory_dict(memory) == {
        "id": memory.id,
        "type": "procedure",
        "content": "The team deploys on Fridays.",
        "importance": memory.importance,
        "created_at": T0_ISO,
        "valid_until": None,
        "superseded_by": None,
        "forgotten": False,
        "tags": [],
        "source": "tool",
        "scope": SCOPE,
    }


def _shown(engine: Bowerbird) -> dict[str, Any]:
    old = engine.remember("The team deploys on Fridays.", scope=SCOPE)
    engine.update(old.id, "The team deploys on Thursdays.", scopes=[SCOPE])
    return detail_json(engine.inspect.show(old.id, scopes=[SCOPE]))


def test_detail_json_times_are_iso_text(engine: Bowerbird) -> None:
    times = dict(_times(_shown(engine)))
    assert times == {
        ".memory.created_at": T0_ISO,
        ".memory.valid_until": T0_ISO,
        ".edges[0].created_at": T0_ISO,
        ".audit[0].created_at": T0_ISO,
        ".audit[1].created_at": T0_ISO,
    }


def test_detail_json_edges(engine: Bowerbird) -> None:
    shown = _shown(engine)
    new_id = shown["memory"]["superseded_by"]
    assert shown["edges"] == [
        {
            "id": 1,
            "source_id": new_id,
            "target_id": shown["memory"]["id"],
            "relation": "updates",
            "weight": 1.0,
            "created_at": T0_ISO,
        }
    ]
