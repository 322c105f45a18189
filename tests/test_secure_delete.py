"""A purged memory's text is gone from the file: no copy in free pages, the full-text index or the WAL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_bowerbird import db
from hermes_bowerbird.config import load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.maintenance.prune import purge
from hermes_bowerbird.types import Memory

DAY = 86_400.0
SCOPE = "user:alice"
FILLER = "my neighbour keeps a small garden of herbs and tomatoes behind the old brick wall"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Bowerbird]:
    config = load_config(
        tmp_path,
        environ={
            "BOWERBIRD_EMBEDDING_BACKEND": "none",
            "BOWERBIRD_LLM_BACKEND": "none",
            "BOWERBIRD_MAINTENANCE_ENABLED": "false",
        },
    )
    bowerbird = Bowerbird(config, background=False)
    # other rows share the pages, so a deleted row leaves free space inside a page, too
    for i in range(40):
        bowerbird.remember(f"{FILLER} number {i}", scope=SCOPE)
    yield bowerbird
    bowerbird.shutdown()


def _on_disk(engine: Bowerbird, needle: str) -> list[str]:
    """The files of the store (database, WAL) that hold these bytes."""
    path = engine.config.db_path
    files = [p for p in (path, path.with_name(path.name + "-wal")) if p.exists()]
    return [p.name for p in files if needle.encode() in p.read_bytes()]


def _purge_all(engine: Bowerbird) -> int:
    later = engine.clock() + (engine.config.purge_after_days + 1) * DAY
    return purge(engine.store, engine.config, later).purged


def _forget(engine: Bowerbird, memory: Memory) -> None:
    engine.forget(memory.id, scopes=(SCOPE,), reason="test", actor="test")


def test_connections_overwrite_deleted_content(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "x.db")
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1


def test_forgotten_then_purged_text_leaves_no_bytes(engine: Bowerbird) -> None:
    memory = engine.remember(
        "my parrot answers only to quokkazanzibar when it is hungry", scope=SCOPE
    )
    _forget(engine, memory)
    assert _purge_all(engine) == 1
    assert _on_disk(engine, "quokkazanzibar") == []


def test_superseded_then_purged_text_leaves_no_bytes(engine: Bowerbird) -> None:
    old = engine.remember("the spare key hides under the flowerpot named grumblewhisk", scope=SCOPE)
    new = engine.update(old.id, "the spare key now hides in the shed", scopes=(SCOPE,))
    _forget(engine, old)
    _forget(engine, new)
    assert _purge_all(engine) == 2
    assert _on_disk(engine, "grumblewhisk") == []


def test_kept_memories_stay_searchable_after_a_purge(engine: Bowerbird) -> None:
    _forget(engine, engine.remember("my parrot answers only to quokkazanzibar", scope=SCOPE))
    _purge_all(engine)
    assert len(engine.store.search.memories('"tomatoes"', [SCOPE], 100, current_only=True)) == 40


def test_a_purged_memorys_names_leave_no_bytes(engine: Bowerbird) -> None:
    _forget(
        engine, engine.remember("My neighbour Zelda Quibblefritz feeds the parrot.", scope=SCOPE)
    )
    assert _purge_all(engine) == 1
    assert _on_disk(engine, "Quibblefritz") == []
    assert _on_disk(engine, "quibblefritz") == []


def test_a_name_other_memories_mention_is_kept(engine: Bowerbird) -> None:
    engine.remember("Zelda Quibblefritz waters the tomatoes.", scope=SCOPE)
    _forget(
        engine, engine.remember("My neighbour Zelda Quibblefritz feeds the parrot.", scope=SCOPE)
    )
    _purge_all(engine)
    assert "zelda quibblefritz" in engine.store.graph.names_and_roles([SCOPE])[0]
