"""`bowerbird store copy`: a whole store moved from a file to a server and back loses, changes and adds nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from click.testing import CliRunner

from hermes_bowerbird.cli import cli
from hermes_bowerbird.config import load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.store import Store, fts_match_expression
from hermes_bowerbird.store.transfer import TABLES
from hermes_bowerbird.types import ItemKind, TurnCapture

if TYPE_CHECKING:
    from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder

SCOPE = "user:cli:ada~1"
TURNS = [
    "Hi, I'm Ada Lovelace. I always deploy with Ansible, and we never deploy on Fridays.",
    "My sister Meera lives in Pune and her birthday is on 4 March.",
    "I live in Lisbon.",
    "I moved to Berlin last week.",
    "Remind me to renew the TLS certificate before the 20th.",
]


@pytest.fixture
def filled(tmp_path: Path, minilm: LocalEmbedder) -> Iterator[Bowerbird]:
    """A home whose SQLite store holds curated turns, vectors, edges, entities and an audit trail."""
    config = load_config(
        tmp_path / "home",
        environ={"BOWERBIRD_LLM_BACKEND": "none", "BOWERBIRD_MAINTENANCE_ENABLED": "false"},
    )
    engine = Bowerbird(config, embedder=minilm, background=False)
    for n, text in enumerate(TURNS):
        engine.capture_turn(
            TurnCapture(user=text, assistant="Noted.", scope=SCOPE, session_id="s1", turn_index=n)
        )
    engine.curate_now()
    engine.forget(engine.remember("A passing thought", scope=SCOPE).id, scopes=[SCOPE])
    yield engine
    engine.shutdown()


def _rows(store: Store, table: str, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    order = "rowid" if table == "entity_aliases" else ", ".join(columns)
    return [
        tuple(row)
        for row in store.db.query(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")
    ]


def _everything(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    out = {table.name: _rows(store, table.name, table.columns) for table in TABLES}
    out["successors"] = _rows(store, "memories", ("id", "superseded_by"))
    for kind in ItemKind:
        vectors = store.vectors.rows_after(kind, 0, 10_000)
        out[f"vectors {kind}"] = [(i, m, v.tobytes()) for i, m, v in vectors]
    return out


def _searches(store: Store) -> list[list[tuple[int, float]]]:
    queries = ["deploy ansible", "sister birthday", "where do I live", "certificate"]
    return [
        [(i, round(s, 9)) for i, s in store.search.memories(match, [SCOPE])]
        + [(-i, round(s, 9)) for i, s in store.search.episodes(match, [SCOPE])]
        for match in (fts_match_expression(q) for q in queries)
        if match
    ]


def test_a_store_copied_to_a_server_and_back_is_the_same(
    filled: Bowerbird, pg_url: str, tmp_path: Path
) -> None:
    source = filled.store
    counts = filled.admin.copy_store(pg_url)
    server = Store.open(pg_url)
    back = tmp_path / "back.db"
    server.copy_to(Store.open(back))
    returned = Store.open(back)
    original = _everything(source)
    assert counts == {name: len(rows) for name, rows in original.items() if name in counts} | {
        "embeddings": sum(len(original[f"vectors {kind}"]) for kind in ItemKind)
    }
    assert original["memory_questions"] and original[f"vectors {ItemKind.QUESTION}"]
    assert _everything(server) == original
    assert _everything(returned) == original
    assert _searches(server) == _searches(source) == _searches(returned)
    assert server.search.integrity() == {"memories_fts": True, "episodes_fts": True}
    server.close()
    returned.close()


def test_the_copy_goes_on_from_where_the_ids_stopped(filled: Bowerbird, pg_url: str) -> None:
    filled.admin.copy_store(pg_url)
    server = Store.open(pg_url)
    newest = max(int(row[0]) for row in server.db.query("SELECT id FROM memories"))
    source_next = filled.remember("Something new after the move", scope=SCOPE)
    config = load_config(filled.config.hermes_home, environ={"BOWERBIRD_DATABASE_URL": pg_url})
    moved = Bowerbird(config, background=False)
    assert moved.remember("Something new after the move", scope=SCOPE).id == newest + 1
    assert source_next.id == newest + 1
    moved.shutdown()
    server.close()


def test_a_store_is_never_copied_into_one_that_holds_data(
    filled: Bowerbird, tmp_path: Path
) -> None:
    target = tmp_path / "taken.db"
    filled.admin.copy_store(target)
    result = CliRunner().invoke(
        cli, ["--db", str(filled.config.db_path), "store", "copy", "--to", str(target), "--json"]
    )
    assert result.exit_code == 1
    assert "already exists" in json.loads(result.output)["data"]["error"]["message"]


def test_the_command_copies_and_reports_matching_counts(filled: Bowerbird, pg_url: str) -> None:
    result = CliRunner().invoke(
        cli, ["--db", str(filled.config.db_path), "store", "copy", "--to", pg_url, "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)["data"]
    assert data["rows"]["memories"] == len(filled.store.memories.find(None, _every()))
    assert "***" in data["to"] or "@" not in data["to"]


def _every() -> Any:
    from hermes_bowerbird.types import MemoryFilter

    return MemoryFilter(include_forgotten=True, current_only=False)


def test_vectors_arrive_as_they_left(filled: Bowerbird, pg_url: str) -> None:
    filled.admin.copy_store(pg_url)
    server = Store.open(pg_url)
    model = filled.embeddings.current()
    assert model is not None
    for kind in ItemKind:
        ids, matrix = filled.store.vectors.load(kind, model.model_name, model.dimension)
        copied = server.vectors.get_many(kind, model.model_name, model.dimension, ids.tolist())
        assert np.array_equal(np.stack([copied[int(i)] for i in ids]), matrix)
    server.close()


def test_a_copy_builds_the_vector_index_once_after_the_vectors_are_in(
    filled: Bowerbird, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy writes its vectors without the HNSW index (inserting into the graph one vector at a time is the
    slow way) and builds it once they are all in, so a large scope is searched through it from the start."""
    from hermes_bowerbird.store.postgres import vectors as server_vectors

    model = filled.embeddings.current()
    assert model is not None
    indexed_with: list[int] = []
    ensure = server_vectors.ServerVectors._ensure_index

    def counting(self: server_vectors.ServerVectors, name: str, dim: int) -> None:
        if self._deferred is None:
            indexed_with.append(int(self._db.scalar("SELECT count(*) FROM embeddings")))
        ensure(self, name, dim)

    monkeypatch.setattr(server_vectors.ServerVectors, "_ensure_index", counting)
    filled.admin.copy_store(pg_url)
    server = Store.open(pg_url)
    held = int(server.db.scalar("SELECT count(*) FROM embeddings"))
    assert indexed_with == [held] and held > 0
    index = server_vectors.index_name(model.model_name, model.dimension)
    assert server.db.scalar("SELECT count(*) FROM pg_indexes WHERE indexname = ?", (index,)) == 1
    server.close()
