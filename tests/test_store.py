"""Store CRUD on a real SQLite file: memories, FTS sync, hostile queries, episodes, edges, journal, audit."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fakes import FakeClock
from store_rows import count_edges

from hermes_bowerbird.errors import DatabaseError, InvalidInputError, NotFoundError
from hermes_bowerbird.store import Store, fts_match_expression
from hermes_bowerbird.store.values import from_rows
from hermes_bowerbird.types import (
    AuditAction,
    AuditEntry,
    Entity,
    ItemKind,
    JournalStatus,
    MemoryFilter,
    MemoryType,
    NewEpisode,
    NewMemory,
    Provenance,
    Relation,
    Source,
    TurnCapture,
)


@pytest.fixture
def store(store_target: Path | str) -> Iterator[Store]:
    s = Store.open(store_target, clock=FakeClock())
    yield s
    s.close()


def _add(
    store: Store,
    content: str,
    scope: str = "profile:default",
    kind: MemoryType = MemoryType.FACT,
    **kw: Any,
) -> int:
    return store.insert_memory(
        NewMemory(scope=scope, type=kind, content=content, source=Source.TOOL, **kw)
    ).id


def _fts(store: Store, text: str, scopes: tuple[str, ...] = ("profile:default",)) -> list[int]:
    match = fts_match_expression(text)
    return [i for i, _ in store.search.memories(match, scopes)] if match else []


def test_insert_and_read_back_with_defaults(store: Store) -> None:
    memory_id = _add(
        store,
        "Ada deploys with Ansible",
        kind=MemoryType.PROCEDURE,
        tags=("ops",),
        provenance=(Provenance("s1", 0), Provenance("s1", 2)),
    )
    memory = store.memories.require(memory_id)
    assert memory.importance == 0.75
    assert memory.tags == ("ops",)
    assert memory.is_current(store.clock())
    assert store.provenance.of([memory_id])[memory_id] == [Provenance("s1", 0), Provenance("s1", 2)]
    assert [a.action for a in store.audit.of_memory(memory_id)] == [AuditAction.CREATE]


def test_empty_content_is_refused(store: Store) -> None:
    with pytest.raises(InvalidInputError):
        _add(store, "   ")


def test_fts_follows_insert_and_delete(store: Store) -> None:
    memory_id = _add(store, "The cat is named Miso")
    assert _fts(store, "miso") == [memory_id]
    store.forget(memory_id, reason="test", actor="test")
    assert _fts(store, "miso") == []  # forgotten memories are not searchable
    store.purge(memory_id, reason="test", actor="test")
    assert store.memories.get(memory_id) is None
    assert store.search.integrity() == {"memories_fts": True, "episodes_fts": True}


def test_fts_follows_text_edited_in_place_in_a_file(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db", clock=FakeClock())
    memory_id = _add(store, "The cat is named Miso")
    store.db.execute(
        "UPDATE memories SET content = 'The cat is named Tofu' WHERE id = ?", (memory_id,)
    )
    assert (_fts(store, "miso"), _fts(store, "tofu")) == ([], [memory_id])
    store.close()


def test_text_edited_in_place_on_a_server_is_out_of_the_index_until_repaired(pg_url: str) -> None:
    """The store never edits text in place; a row a person edits by hand is found by neither its old words nor
    its new ones, `doctor` says the index is not whole, and its repair indexes the new words."""
    store = Store.open(pg_url, clock=FakeClock())
    memory_id = _add(store, "The cat is named Miso")
    store.db.execute(
        "UPDATE memories SET content = 'The cat is named Tofu' WHERE id = ?", (memory_id,)
    )
    assert (_fts(store, "miso"), _fts(store, "tofu")) == ([], [])
    assert store.search.integrity() == {"memories_fts": False, "episodes_fts": True}
    store.search.rebuild()
    assert (_fts(store, "miso"), _fts(store, "tofu")) == ([], [memory_id])
    assert store.search.integrity() == {"memories_fts": True, "episodes_fts": True}
    store.close()


def test_porter_stemming_matches_word_forms(store: Store) -> None:
    memory_id = _add(store, "She was deploying services on Fridays")
    assert _fts(store, "deploy friday") == [memory_id]


ANSIBLE_MEMORY = "deploys with ansible"
ANSIBLE_EPISODE = "we deploy with ansible on fridays"
HOSTILE_FTS = [  # (input, whether its words include "ansible": then both rows are found, else none is)
    ('"', False),
    ('""', False),
    ("'", False),
    ("*", False),
    ("ansible*", True),
    ("NEAR(", False),
    ("NEAR(a b", False),
    ("-", False),
    ("- ansible", True),
    ("a OR", False),
    ("AND", False),
    ("(((", False),
    (")))", False),
    ("col:ansible", True),
    ("^ansible", True),
    ("{a b}", False),
    ("", False),
    ("   ", False),
    ("\x00", False),
    ("ansible\x00deploy", True),
    ("🙂 emoji", False),
    ("x" * 10_000, False),
    ("ansible " * 2_000, True),
    ("a AND (b OR", False),
    ("NOT", False),
    ("content:*", False),
    ('"unbalanced', False),
    ('a"b"c', False),
]


@pytest.fixture
def ansible_rows(store: Store) -> tuple[int, int]:
    memory_id = _add(store, ANSIBLE_MEMORY)
    _add(store, "episode text", kind=MemoryType.EVENT)
    episode_id = store.episodes.insert(
        NewEpisode(
            scope="profile:default",
            session_id="s",
            turn_index=0,
            chunk_index=0,
            role="user",
            content=ANSIBLE_EPISODE,
        )
    )
    return memory_id, episode_id


@pytest.mark.parametrize("hostile, finds", HOSTILE_FTS)
def test_hostile_fts_input_finds_memories_by_its_words(
    store: Store, ansible_rows: tuple[int, int], hostile: str, finds: bool
) -> None:
    match = fts_match_expression(hostile)
    found = [i for i, _ in store.search.memories(match, ["profile:default"])] if match else []
    assert found == ([ansible_rows[0]] if finds else [])


@pytest.mark.parametrize("hostile, finds", HOSTILE_FTS)
def test_hostile_fts_input_finds_episodes_by_its_words(
    store: Store, ansible_rows: tuple[int, int], hostile: str, finds: bool
) -> None:
    match = fts_match_expression(hostile)
    found = [i for i, _ in store.search.episodes(match, ["profile:default"])] if match else []
    assert found == ([ansible_rows[1]] if finds else [])


@pytest.mark.parametrize("hostile", [h for h, _ in HOSTILE_FTS])
def test_hostile_fts_input_becomes_quoted_words_only(hostile: str) -> None:
    match = fts_match_expression(hostile)
    terms = match.split(" OR ") if match else []
    assert all(re.fullmatch(r'"\w+"', term) for term in terms)


@pytest.mark.parametrize("raw", ['"', "NEAR(", "col:ansible", "a OR", "*", "(((", "content:*"])
def test_a_raw_expression_fts5_cannot_parse_is_refused(
    store: Store, ansible_rows: tuple[int, int], raw: str
) -> None:
    with pytest.raises(InvalidInputError, match="fts_match_expression"):
        store.search.memories(raw, ["profile:default"])


def test_scopes_never_leak(store: Store) -> None:
    mine = _add(store, "alpha secret plan", scope="user:a")
    _add(store, "alpha secret plan", scope="user:b")
    assert _fts(store, "alpha", ("user:a", "profile:default")) == [mine]
    with pytest.raises(NotFoundError):
        store.memories.require(mine, ["user:b"])


def test_supersede_marks_old_and_links_new(store: Store) -> None:
    old = _add(store, "Lives in Porto", kind=MemoryType.IDENTITY, subject="user:residence")
    new = _add(store, "Moved to Lisbon", kind=MemoryType.IDENTITY, subject="user:residence")
    store.supersede(old, new, reason="moved", actor="test")
    old_memory = store.memories.require(old)
    assert old_memory.superseded_by == new
    assert not old_memory.is_current(store.clock() + 1)
    assert [
        m.id for m in store.memories.current_by_subject("profile:default", "user:residence")
    ] == [new]
    edges = store.graph.edges_of([old])
    assert [(e.src_id, e.dst_id, e.relation) for e in edges] == [(new, old, Relation.UPDATES)]
    assert AuditAction.SUPERSEDE in [a.action for a in store.audit.of_memory(old)]


def _listing(store: Store) -> dict[str, int]:
    """Five memories by label: a, b, d live in the default scope (d superseded by b), c forgotten, e elsewhere."""
    ids = {
        "a": _add(store, "Uses vim", importance=0.2, created_at=100.0),
        "b": _add(
            store, "Renew the passport", kind=MemoryType.TODO, importance=0.9, created_at=200.0
        ),
        "c": _add(store, "Likes jazz", importance=0.5, created_at=300.0),
        "d": _add(store, "Uses emacs", importance=0.4, created_at=400.0),
        "e": _add(store, "Plays chess", scope="user:x", created_at=500.0),
    }
    store.forget(ids["c"], reason="test", actor="test")
    store.supersede(ids["d"], ids["b"], reason="test", actor="test")
    return ids


@pytest.mark.parametrize(
    "scopes, wanted, expected",
    [
        (["profile:default"], MemoryFilter(), "dba"),
        (None, MemoryFilter(), "edba"),
        (["profile:default"], MemoryFilter(include_forgotten=True), "dcba"),
        (["profile:default"], MemoryFilter(current_only=True), "ba"),
        (["profile:default"], MemoryFilter(types=[MemoryType.TODO]), "b"),
        (["profile:default"], MemoryFilter(since=200.0), "db"),
        (["profile:default"], MemoryFilter(until=200.0), "a"),
        (["profile:default"], MemoryFilter(order="oldest"), "abd"),
        (["profile:default"], MemoryFilter(order="importance"), "bda"),
        (["profile:default"], MemoryFilter(limit=2), "db"),
    ],
)
def test_memory_filter_selects_and_orders_a_listing(
    store: Store, scopes: list[str] | None, wanted: MemoryFilter, expected: str
) -> None:
    ids = _listing(store)
    label = {memory_id: name for name, memory_id in ids.items()}
    assert "".join(label[m.id] for m in store.memories.find(scopes, wanted)) == expected


def test_memory_filter_pages_on_past_an_id(store: Store) -> None:
    ids = _listing(store)
    found = store.memories.find(None, MemoryFilter(order="oldest", after_id=ids["b"]))
    assert [m.id for m in found] == [ids["d"], ids["e"]]


def test_edges_strengthen_and_refuse_self_loops(store: Store) -> None:
    a, b = _add(store, "a fact"), _add(store, "b fact")
    store.add_edge(a, b, Relation.RELATED_TO, 0.8)
    edge = store.add_edge(a, b, Relation.RELATED_TO, 0.9)
    assert edge.weight == 0.9
    assert count_edges(store) == {"related_to": 1}
    with pytest.raises(InvalidInputError):
        store.add_edge(a, a, Relation.RELATED_TO)


def test_episodes_are_idempotent_and_searchable(store: Store) -> None:
    first = store.episodes.insert(
        NewEpisode(
            scope="p",
            session_id="s",
            turn_index=0,
            chunk_index=0,
            role="user",
            content="We talked about the Kyoto trip",
        )
    )
    again = store.episodes.insert(
        NewEpisode(
            scope="p",
            session_id="s",
            turn_index=0,
            chunk_index=0,
            role="user",
            content="We talked about the Kyoto trip",
        )
    )
    assert first == again
    match = fts_match_expression("kyoto")
    assert match
    assert store.search.episodes(match, ["p"])[0][0] == first


def test_journal_lifecycle(store: Store) -> None:
    ids = [
        store.journal.append(
            TurnCapture(
                scope="p",
                session_id="s",
                turn_index=i,
                platform="cli",
                user=f"u{i}",
                assistant=f"a{i}",
            )
        )
        for i in range(3)
    ]
    assert [e.id for e in store.journal.pending()] == ids
    store.journal.mark(ids[0], JournalStatus.DONE)
    store.journal.mark(ids[1], JournalStatus.FAILED, "boom")
    assert store.journal.counts() == {"done": 1, "failed": 1, "pending": 1}
    assert store.journal.next_turn_index("s") == 3
    assert store.journal.next_turn_index("other") == 0


def test_vectors_round_trip_exactly(store: Store) -> None:
    vectors = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
    ids = [_add(store, f"memory number {n}") for n in range(5)]
    store.vectors.put(ItemKind.MEMORY, "m", list(zip(ids, vectors, strict=True)))
    loaded, matrix = store.vectors.load(ItemKind.MEMORY, "m", 8)
    assert loaded.tolist() == ids
    assert np.array_equal(matrix, vectors)
    store.embedding_cache.put([("h", "m", vectors[0])])
    assert np.array_equal(store.embedding_cache.get(["h", "missing"])["h"], vectors[0])


def test_closed_store_raises_a_database_error(tmp_path: Path) -> None:
    s = Store.open(tmp_path / "x.db")
    s.close()
    with pytest.raises(DatabaseError):
        s.memories.get(1)


def test_backup_is_a_readable_copy(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db", clock=FakeClock())
    _add(store, "kept in the backup")
    store.health.backup_to(tmp_path / "b" / "copy.db")
    copy = Store.open(tmp_path / "b" / "copy.db")
    assert copy.health.counts()["memories"] == 1


def test_a_server_store_says_how_it_is_backed_up(pg_url: str, tmp_path: Path) -> None:
    store = Store.open(pg_url)
    with pytest.raises(DatabaseError, match=r"pg_dump.*bowerbird store copy"):
        store.health.backup_to(tmp_path / "copy.db")
    assert not (tmp_path / "copy.db").exists()
    store.close()


def _break_fts(store: Store, memory_id: int) -> None:
    """Drop a row from the index behind the store's back (what a crash mid-write to an old file can leave)."""
    if store.file is None:
        store.db.execute("UPDATE memories SET fts = NULL WHERE id = ?", (memory_id,))
        return
    store.db.execute(
        "INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags) "
        "SELECT 'delete', id, content, summary, tags FROM memories WHERE id = ?",
        (memory_id,),
    )


def test_rebuild_fts_repairs_an_index_out_of_step(store: Store) -> None:
    memory_id = _add(store, "The cat is named Miso")
    _break_fts(store, memory_id)
    store.search.rebuild()
    assert _fts(store, "miso") == [memory_id]


def test_rebuild_fts_leaves_both_indexes_consistent(store: Store) -> None:
    _break_fts(store, _add(store, "The cat is named Miso"))
    store.search.rebuild()
    assert store.search.integrity() == {"memories_fts": True, "episodes_fts": True}


def test_rows_map_to_dataclasses_by_column_name_in_any_order(store: Store) -> None:
    rows = store.db.query("SELECT 'person' AS kind, 'Ana' AS name, 'user:a' AS scope, 7 AS id")
    assert from_rows(Entity, rows) == [Entity(id=7, scope="user:a", name="Ana", kind="person")]


def test_mapped_columns_are_decoded(store: Store) -> None:
    rows = store.db.query("""
        SELECT 1 AS id, NULL AS memory_id, 'forget' AS action, 'r' AS reason, 'cli' AS actor,
               2.5 AS created_at, '{"k": [1]}' AS details
    """)
    assert from_rows(AuditEntry, rows) == [
        AuditEntry(1, None, AuditAction.FORGET, "r", "cli", 2.5, {"k": [1]})
    ]


def test_a_column_without_a_field_is_refused(store: Store) -> None:
    rows = store.db.query(
        "SELECT 1 AS id, 'u' AS scope, 'Ana' AS name, 'person' AS kind, 'x' AS nickname"
    )
    with pytest.raises(TypeError, match="nickname"):
        from_rows(Entity, rows)
