"""`bowerbird doctor` finds a full-text index out of step and `--repair` rebuilds it (through sqlite-utils)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

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
