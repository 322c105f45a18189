"""The TypeSpec table: the one place a memory type is declared, and every module that reads it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import anyio
import click
import pytest
from click.testing import CliRunner
from hermes_homes import KEYWORD_ONLY

from hermes_bowerbird.cli import cli
from hermes_bowerbird.config import build_config
from hermes_bowerbird.curation.llm_batch import (
    BatchTurn,
    build_prompt,
    parse_decisions,
    system_prompt,
)
from hermes_bowerbird.errors import InvalidInputError
from hermes_bowerbird.maintenance.bulletin import BulletinBuilder, sections
from hermes_bowerbird.markdown import group_for_export, user_file_types
from hermes_bowerbird.retrieval.query import type_hints
from hermes_bowerbird.retrieval.scoring import decay_factor
from hermes_bowerbird.store import Store
from hermes_bowerbird.tools import tool_schemas
from hermes_bowerbird.types import (
    DEFAULT_IMPORTANCE,
    MEMORY_TYPES,
    BulletinSection,
    Memory,
    MemoryType,
    NewMemory,
    Source,
    TypeSpec,
    memory_type,
    type_names,
)

DAY = 86_400.0
NOW = 1_800_000_000.0
MILESTONE = cast(MemoryType, "milestone")
MILESTONES = BulletinSection("Milestones", 2, 3)
SPEC = TypeSpec(
    MILESTONE,
    "milestones the user reached",
    0.85,
    10.0,
    MILESTONES,
    "user",
    3,
    r"\bmilestones?\b",
    extractable=True,
    from_assistant=False,
)


@pytest.fixture
def milestone(monkeypatch: pytest.MonkeyPatch) -> Iterator[TypeSpec]:
    """A new memory type added in one place: the registry."""
    monkeypatch.setitem(MEMORY_TYPES, str(MILESTONE), SPEC)
    yield SPEC


def _memory(
    memory_type: MemoryType,
    content: str = "Shipped version one of the app",
    *,
    created: float = NOW,
    memory_id: int = 1,
) -> Memory:
    return Memory(
        id=memory_id,
        scope="s",
        type=memory_type,
        content=content,
        importance=0.8,
        confidence=1.0,
        created_at=created,
        updated_at=created,
        source=Source.TURN,
    )


def _memories_sql(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        row = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memories'"
        ).fetchone()
    finally:
        conn.close()
    return str(row[0])


def _raw_insert(store: Store, memory_type: str) -> None:
    store.db.execute(
        """
        INSERT INTO memories (scope, type, content, content_hash, importance, created_at, updated_at, source)
        VALUES ('s', ?, 'Shipped version one', 'h', 0.5, 1.0, 1.0, 'turn')
    """,
        (memory_type,),
    )


def test_schema_lists_no_types(tmp_path: Path) -> None:
    Store.open(tmp_path / "m.db").close()
    assert "CHECK (type IN" not in _memories_sql(tmp_path / "m.db")


def test_store_refuses_a_type_the_table_does_not_name(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    new = NewMemory(scope="s", type=MILESTONE, content="Shipped version one", source=Source.TOOL)
    with pytest.raises(
        InvalidInputError, match="unknown memory type 'milestone'; use one of identity"
    ):
        store.insert_memory(new)
    store.close()


def test_raw_sql_on_the_store_cannot_write_an_unknown_type(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    with pytest.raises(sqlite3.IntegrityError, match="unknown memory type"):
        _raw_insert(store, "milestone")
    store.close()


def test_raw_sql_cannot_change_a_type_to_an_unknown_one(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    _raw_insert(store, "fact")
    with pytest.raises(sqlite3.IntegrityError, match="unknown memory type"):
        store.db.execute("UPDATE memories SET type = 'milestone'")
    store.close()


def test_read_only_store_reads_every_type(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    _raw_insert(store, "goal")
    store.close()
    reader = Store.open(tmp_path / "m.db", readonly=True)
    assert [m.type for m in reader.memories.find(None)] == [MemoryType.GOAL]
    reader.close()


def test_a_type_this_version_does_not_know_reads_as_a_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as newer:
        newer.setitem(MEMORY_TYPES, str(MILESTONE), SPEC)
        store = Store.open(tmp_path / "m.db")
        _raw_insert(store, "milestone")
        store.close()
    store = Store.open(tmp_path / "m.db")
    assert [m.type for m in store.memories.find(None)] == [MemoryType.FACT]
    store.close()


def test_enum_and_table_list_the_same_types() -> None:
    assert [str(t) for t in MemoryType] == list(type_names())


def test_a_spec_without_every_field_is_refused() -> None:
    with pytest.raises(TypeError):
        TypeSpec(MILESTONE, "milestones", 0.8, 1.0, None, None, 0, "", extractable=True)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("identity", MemoryType.IDENTITY),
        (" Goal ", MemoryType.GOAL),
        ("EVENT", MemoryType.EVENT),
    ],
)
def test_memory_type_parses_names(value: str, expected: MemoryType) -> None:
    assert memory_type(value) is expected


def test_memory_type_names_the_known_types_when_refusing() -> None:
    with pytest.raises(ValueError, match="use one of identity, goal"):
        memory_type("identty")


@pytest.mark.parametrize(
    ("memory_type_", "importance"),
    [
        (MemoryType.IDENTITY, 1.0),
        (MemoryType.GOAL, 0.9),
        (MemoryType.DECISION, 0.8),
        (MemoryType.TODO, 0.8),
        (MemoryType.PROCEDURE, 0.75),
        (MemoryType.PREFERENCE, 0.7),
        (MemoryType.FACT, 0.6),
        (MemoryType.PATTERN, 0.6),
        (MemoryType.EVENT, 0.4),
        (MemoryType.OBSERVATION, 0.3),
    ],
)
def test_default_importance_per_type(memory_type_: MemoryType, importance: float) -> None:
    assert DEFAULT_IMPORTANCE[memory_type_] == importance


def test_builtin_bulletin_sections_in_order() -> None:
    assert [(s.title, s.types) for s in sections()] == [
        ("Identity", (MemoryType.IDENTITY,)),
        ("Active goals", (MemoryType.GOAL,)),
        ("Recent decisions", (MemoryType.DECISION,)),
        ("Open todos", (MemoryType.TODO,)),
        ("Preferences", (MemoryType.PREFERENCE,)),
        ("Important facts", (MemoryType.PROCEDURE, MemoryType.FACT)),
        ("Recent events", (MemoryType.EVENT,)),
        ("Observations", (MemoryType.PATTERN, MemoryType.OBSERVATION)),
    ]


def test_builtin_markdown_targets() -> None:
    assert user_file_types() == {MemoryType.IDENTITY, MemoryType.PREFERENCE, MemoryType.GOAL}


# -- a type added in one place shows up everywhere -------------------------------------------------------------
def test_new_type_decays_with_its_own_half_life(milestone: TypeSpec) -> None:
    memory = _memory(MILESTONE, created=NOW - 10 * 30 * DAY)
    assert decay_factor(memory, NOW, 30.0) == pytest.approx(0.5)


def test_new_type_default_importance(milestone: TypeSpec) -> None:
    new = NewMemory(scope="s", type=MILESTONE, content="Shipped version one", source=Source.TOOL)
    assert new.effective_importance == 0.85


def test_new_type_has_its_bulletin_section(milestone: TypeSpec) -> None:
    assert [s.title for s in sections()][:4] == [
        "Identity",
        "Active goals",
        "Recent decisions",
        "Milestones",
    ]


def test_new_type_is_rendered_in_the_bulletin(milestone: TypeSpec, tmp_path: Path) -> None:
    builder = BulletinBuilder(cast(Store, None), build_config(tmp_path, {}), lambda: NOW)
    chosen = [(s, [_memory(MILESTONE)] if s.title == "Milestones" else []) for s in sections()]
    assert builder.render(chosen, NOW, 200).splitlines()[1:] == [
        "Milestones:",
        "- Shipped version one of the app",
    ]


def test_new_type_is_exported_to_its_markdown_file(milestone: TypeSpec) -> None:
    memories = [
        _memory(MemoryType.FACT, "Uses Postgres", memory_id=1),
        _memory(MILESTONE, memory_id=2),
        _memory(MemoryType.IDENTITY, "Named Ana", memory_id=3),
    ]
    assert [m.id for m in group_for_export(memories)["user"]] == [3, 2]


def test_new_type_is_a_query_hint(milestone: TypeSpec) -> None:
    assert MILESTONE in type_hints("which milestones did I reach this year")


def test_new_type_is_a_cli_choice(milestone: TypeSpec) -> None:
    option = next(p for p in cast(click.Group, cli).commands["recall"].params if p.name == "types")
    assert option.type.convert("milestone", option, None) == "milestone"


def test_cli_choice_refuses_an_unknown_type() -> None:
    option = next(p for p in cast(click.Group, cli).commands["recall"].params if p.name == "types")
    with pytest.raises(click.BadParameter):
        option.type.convert("milestone", option, None)


def test_new_type_is_in_the_mcp_tool_description(milestone: TypeSpec, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from hermes_bowerbird.engine import Bowerbird
    from hermes_bowerbird.mcp_server import build_server

    config = build_config(
        tmp_path,
        {"embedding_backend": "none", "llm_backend": "none", "maintenance_enabled": "false"},
    )
    engine = Bowerbird(config, background=False)
    try:
        tools: list[Any] = anyio.run(build_server(engine).list_tools)
    finally:
        engine.shutdown()
    description = next(t.description for t in tools if t.name == "memory_store")
    assert description.endswith("pattern, event, observation, milestone.")


def test_new_type_is_offered_in_the_extraction_prompt(milestone: TypeSpec) -> None:
    prompt = build_prompt([BatchTurn(1, "We shipped version one today.", "")], [])
    assert '"observation","milestone"]' in prompt


def test_new_type_is_described_in_the_system_prompt(milestone: TypeSpec) -> None:
    assert "notable events, passing observations, milestones the user reached." in system_prompt()


def test_new_type_is_accepted_from_the_model(milestone: TypeSpec) -> None:
    reply = '{"decisions": [{"action": "add", "type": "milestone", "content": "The user shipped version one."}]}'
    assert parse_decisions(reply, known_ids=(), turns=1)[0].candidate.type == MILESTONE


def test_a_type_extraction_may_not_produce_is_read_as_a_fact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        MEMORY_TYPES,
        str(MILESTONE),
        TypeSpec(
            MILESTONE,
            "milestones",
            0.85,
            10.0,
            None,
            None,
            0,
            "",
            extractable=False,
            from_assistant=False,
        ),
    )
    reply = '{"decisions": [{"action": "add", "type": "milestone", "content": "The user shipped version one."}]}'
    assert parse_decisions(reply, known_ids=(), turns=1)[0].candidate.type == MemoryType.FACT


def test_new_type_is_in_the_agent_tools(milestone: TypeSpec) -> None:
    remember = next(s for s in tool_schemas() if s["name"] == "bowerbird_remember")
    assert remember["parameters"]["properties"]["type"]["enum"][-1] == "milestone"


def test_new_type_is_a_setting_value(milestone: TypeSpec, tmp_path: Path) -> None:
    config = build_config(tmp_path, {"decay_exempt_types": "identity,milestone"})
    assert config.decay_exempt_types == "identity,milestone"


def test_new_type_is_stored_and_listed_through_the_cli(milestone: TypeSpec, tmp_path: Path) -> None:
    home = ["--hermes-home", str(tmp_path), "--json"]
    env = KEYWORD_ONLY
    runner = CliRunner()
    stored = runner.invoke(
        cli, [*home, "remember", "Shipped version one", "--type", "milestone"], env=env
    )
    assert json.loads(stored.output)["data"]["memory"]["type"] == "milestone"
    listed = runner.invoke(cli, [*home, "list", "--type", "milestone"], env=env)
    assert [m["content"] for m in json.loads(listed.output)["data"]["memories"]] == [
        "Shipped version one"
    ]
