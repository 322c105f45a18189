"""`bowerbird doctor` finds a full-text index out of step and `--repair` rebuilds it (through sqlite-utils)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pg_server import PgTestServer

from hermes_bowerbird.cli import cli
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import MemoryType, NewMemory, Source

ENV: dict[str, str | None] = {
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "HERMES_HOME": None,
}


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    store = Store.open(path)
    memory = store.insert_memory(
        NewMemory(
            scope="profile:default",
            type=MemoryType.FACT,
            content="The cat is named Miso",
            source=Source.TOOL,
        )
    )
    store.db.execute(
        "INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags) "
        "SELECT 'delete', id, content, summary, tags FROM memories WHERE id = ?",
        (memory.id,),
    )
    store.close()
    return path


def _doctor(path: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["doctor", *args, "--json", "--db", str(path)], env=ENV)
    return dict(json.loads(result.output)["data"])


def test_doctor_reports_the_index_out_of_step(broken: Path) -> None:
    assert "full-text index memories_fts is out of step" in _doctor(broken)["problems"]


def test_repair_brings_the_index_back_in_step(broken: Path) -> None:
    _doctor(broken, "--repair")
    assert _doctor(broken)["problems"] == []


def test_repaired_index_finds_the_memory_again(broken: Path) -> None:
    _doctor(broken, "--repair")
    store = Store.open(broken)
    try:
        assert [i for i, _ in store.search.memories('"miso"', ["profile:default"])] == [1]
    finally:
        store.close()


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM fts_postings WHERE tbl = 'memories'",
        "UPDATE fts_terms SET rows = rows + 1 WHERE tbl = 'memories'",
    ],
    ids=["postings lost", "word counts off"],
)
def test_a_shared_store_whose_postings_or_word_counts_drifted_is_found_and_repaired(
    pg_server: PgTestServer, damage: str
) -> None:
    """On PostgreSQL, search reads per-scope postings and word counts the triggers keep; if they drift (a bulk load
    with the triggers off, a hand edit), doctor says so and --repair rebuilds them from the rows."""
    url = pg_server.fresh()
    store = Store.open(url)
    store.insert_memory(
        NewMemory("profile:default", MemoryType.FACT, "The cat is named Miso", Source.TOOL)
    )
    store.db.execute(damage)
    store.close()

    def doctor(*args: str) -> dict[str, Any]:
        result = CliRunner().invoke(
            cli, ["doctor", *args, "--json", "--database-url", url], env=ENV
        )
        return dict(json.loads(result.output)["data"])

    assert "full-text index memories_fts is out of step" in doctor()["problems"]
    doctor("--repair")
    assert doctor()["problems"] == []
    store = Store.open(url)
    try:
        assert [i for i, _ in store.search.memories('"miso"', ["profile:default"])] == [1]
    finally:
        store.close()
