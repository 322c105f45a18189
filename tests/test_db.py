"""Migrations: ordering, atomicity, idempotence, newer-schema refusal, and shipping inside the wheel."""

from __future__ import annotations

import datetime
import importlib.util
import os
import sqlite3
import stat
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hermes_bowerbird import db
from hermes_bowerbird.errors import DatabaseError, MigrationError, SchemaTooNewError
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import MemoryType, NewMemory, Source, type_names

ROOT = Path(__file__).resolve().parent.parent


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")
    }


def test_blank_database_gets_every_migration(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "m.db")
    applied = db.migrate(conn)
    assert applied == db.load_migrations()
    expected = {
        "memories",
        "episodes",
        "entities",
        "entity_aliases",
        "memory_entities",
        "episode_entities",
        "edges",
        "embeddings",
        "embedding_cache",
        "journal",
        "audit_log",
        "bulletins",
        "meta",
        "memory_provenance",
        "memories_fts",
        "episodes_fts",
        "memories_fts_insert",
        "episodes_fts_update",
    }
    assert expected <= _tables(conn)


def test_applying_twice_is_a_no_op(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "m.db")
    db.migrate(conn)
    before = _tables(conn)
    assert db.migrate(conn) == []
    assert _tables(conn) == before


def test_connection_pragmas_and_private_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "m.db"
    conn = db.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == db.BUSY_TIMEOUT_MS
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def _write(folder: Path, name: str, sql: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(sql)


def test_failing_migration_leaves_no_partial_schema(tmp_path: Path) -> None:
    folder = tmp_path / "migs"
    _write(folder, "0001_good.sql", "CREATE TABLE a (x INTEGER);")
    _write(folder, "0002_bad.sql", "CREATE TABLE b (x INTEGER);\nCREATE TABLE a (x INTEGER);")
    conn = db.connect(tmp_path / "m.db")
    with pytest.raises(MigrationError, match="0002_bad"):
        db.migrate(conn, folder)
    assert "a" in _tables(conn)
    assert "b" not in _tables(conn)
    assert db.applied_migrations(conn) == ["0001_good"]


def test_trigger_bodies_stay_whole() -> None:
    sql = (
        "CREATE TABLE t (x);\nCREATE TRIGGER tr AFTER INSERT ON t BEGIN\n  INSERT INTO t VALUES (1);\n"
        "  DELETE FROM t WHERE x = 2;\nEND;\n-- a comment\nCREATE INDEX i ON t (x);"
    )
    statements = db.split_statements(sql)
    assert len(statements) == 3
    assert statements[1].endswith("END;")


@pytest.mark.parametrize(
    "names, message",
    [
        (["0001_a.sql", "0001_b.sql"], "share number"),
        (["1_a.sql"], "not named"),
        (["0001_Bad-Name.sql"], "not named"),
    ],
)
def test_malformed_migration_sets_are_refused(
    tmp_path: Path, names: list[str], message: str
) -> None:
    for name in names:
        _write(tmp_path / "migs", name, "SELECT 1;")
    with pytest.raises(MigrationError, match=message):
        db.load_migrations(tmp_path / "migs")


def test_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
        "VALUES ('bowerbird', '9999_future', '2030-01-01 00:00:00+00:00')"
    )
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNewError, match="upgrade hermes-bowerbird"):
        Store.open(path)


def test_corrupt_file_gives_a_clear_error_and_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    garbage = b"this is not a database" * 200
    path.write_bytes(garbage)
    with pytest.raises(DatabaseError):
        Store.open(path)
    assert path.read_bytes() == garbage


def test_wheel_ships_and_finds_its_migrations(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next((tmp_path / "dist").glob("hermes_bowerbird-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert "hermes_bowerbird/migrations/0001_initial.sql" in names
        assert "hermes_bowerbird/migrations/migrations.py" in names
        assert "hermes_bowerbird/py.typed" in names
        assert "hermes_bowerbird/plugin.yaml" in names
        archive.extractall(tmp_path / "site")
    code = (
        "import hermes_bowerbird.db as d, sys; p = d.migrations_dir(); "
        "print(p); assert str(p).startswith(sys.argv[1]), p; assert d.load_migrations()"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "site")],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "site")},
    )
    assert str(tmp_path / "site") in out.stdout


FIXTURE = ROOT / "tests" / "fixtures" / "store_v0_1_0.db"


def _sqlite_utils_migrate(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sqlite_utils",
            "migrate",
            str(path),
            str(ROOT / "migrations" / "migrations.py"),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _history(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT name FROM _sqlite_migrations WHERE migration_set = 'bowerbird' ORDER BY id"
            )
        ]
    finally:
        conn.close()


def test_sqlite_utils_cli_migrates_a_new_store_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    result = _sqlite_utils_migrate(path)
    assert result.returncode == 0, result.stderr
    assert _history(path) == db.load_migrations()
    conn = db.connect(path)
    assert db.migrate(conn) == []


def test_sqlite_utils_cli_sees_nothing_pending_on_a_store_bowerbird_made(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    Store.open(path).close()
    listing = _sqlite_utils_migrate(path, "--list")
    assert listing.stdout.split("Pending:")[1].split() == ["(none)"]


def test_every_sql_file_is_a_step_found_without_registration(tmp_path: Path) -> None:
    folder = tmp_path / "migs"
    _write(folder, "0001_one.sql", "CREATE TABLE one (x INTEGER);")
    _write(folder, "0007_seven.sql", "CREATE TABLE seven (x INTEGER);")
    conn = db.connect(tmp_path / "m.db")
    assert db.migrate(conn, folder) == ["0001_one", "0007_seven"]


@pytest.fixture()
def old_store(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    path.write_bytes(FIXTURE.read_bytes())
    return path


def test_the_fixture_was_made_by_the_previous_runner(old_store: Path) -> None:
    conn = sqlite3.connect(old_store)
    assert {"schema_migrations"} <= _tables(conn)
    assert "_sqlite_migrations" not in _tables(conn)


def test_store_from_the_previous_release_upgrades_in_place(old_store: Path) -> None:
    conn = sqlite3.connect(old_store)
    legacy = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY number")]
    conn.close()
    store = Store.open(old_store)
    store.close()
    assert _history(old_store)[: len(legacy)] == legacy


def test_upgraded_store_keeps_its_memories(old_store: Path) -> None:
    before = (
        sqlite3.connect(old_store)
        .execute("SELECT id, content FROM memories ORDER BY id")
        .fetchall()
    )
    Store.open(old_store).close()
    assert (
        sqlite3.connect(old_store)
        .execute("SELECT id, content FROM memories ORDER BY id")
        .fetchall()
        == before
    )


def test_upgrade_drops_the_old_history_table(old_store: Path) -> None:
    Store.open(old_store).close()
    assert "schema_migrations" not in _tables(sqlite3.connect(old_store))


def test_upgrade_keeps_the_original_application_times(old_store: Path) -> None:
    first = (
        sqlite3.connect(old_store)
        .execute("SELECT applied_at FROM schema_migrations WHERE number = 1")
        .fetchone()
    )
    Store.open(old_store).close()
    row = sqlite3.connect(old_store).execute(
        "SELECT applied_at FROM _sqlite_migrations WHERE name = '0001_initial'"
    )
    assert row.fetchone()[0].startswith(
        str(datetime.datetime.fromtimestamp(first[0], tz=datetime.UTC))[:19]
    )


def test_sqlite_utils_cli_upgrades_the_previous_release_too(old_store: Path) -> None:
    result = _sqlite_utils_migrate(old_store)
    assert result.returncode == 0, result.stderr
    assert _history(old_store) == db.load_migrations()


def test_bowerbird_and_sqlite_utils_agree_on_an_upgraded_store(old_store: Path) -> None:
    _sqlite_utils_migrate(old_store)
    assert db.migrate(db.connect(old_store)) == []


def test_upgraded_store_is_searchable(old_store: Path) -> None:
    store = Store.open(old_store)
    try:
        hits = store.search.memories('"Lisbon"', ["profile:default"])
    finally:
        store.close()
    assert len(hits) == 2


def _memories_sql(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(
            conn.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memories'"
            ).fetchone()[0]
        )
    finally:
        conn.close()


def test_upgrade_takes_the_type_list_out_of_the_schema(old_store: Path) -> None:
    assert "CHECK (type IN" in _memories_sql(old_store)
    Store.open(old_store).close()
    assert "CHECK (type IN" not in _memories_sql(old_store)


def test_upgrade_keeps_the_other_checks(old_store: Path) -> None:
    Store.open(old_store).close()
    assert "CHECK (length(content) > 0)" in _memories_sql(old_store)


def test_upgraded_file_passes_the_integrity_check(old_store: Path) -> None:
    Store.open(old_store).close()
    conn = sqlite3.connect(old_store)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


def test_sqlite_utils_cli_takes_the_type_list_out_too(old_store: Path) -> None:
    _sqlite_utils_migrate(old_store)
    assert "CHECK (type IN" not in _memories_sql(old_store)


def test_a_connection_open_during_the_upgrade_reloads_the_schema(tmp_path: Path) -> None:
    before = tmp_path / "before"
    before.mkdir()
    for step in db.migrations_dir().glob("000[1-5]_*.sql"):
        (before / step.name).write_bytes(step.read_bytes())
    path = tmp_path / "m.db"
    first = db.connect(path)
    db.migrate(first, before)
    first.close()
    other = sqlite3.connect(path)
    other.execute("SELECT count(*) FROM memories").fetchone()
    Store.open(path).close()
    other.execute(
        """
        INSERT INTO memories (scope, type, content, content_hash, importance, created_at, updated_at, source)
        VALUES ('s', 'milestone', 'Shipped version one', 'h', 0.5, 1.0, 1.0, 'turn')
    """
    )
    assert other.execute("SELECT type FROM memories").fetchall() == [("milestone",)]
    other.close()


def test_a_python_file_is_a_step_too(tmp_path: Path) -> None:
    folder = tmp_path / "migs"
    _write(folder, "0001_one.sql", "CREATE TABLE one (x INTEGER);")
    _write(
        folder,
        "0002_two.py",
        "def apply(db):\n    db.conn.execute('CREATE TABLE two (x INTEGER)')\n",
    )
    conn = db.connect(tmp_path / "m.db")
    assert db.migrate(conn, folder) == ["0001_one", "0002_two"]
    assert "two" in _tables(conn)


def test_a_python_step_without_apply_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "migs", "0001_one.py", "VALUE = 1\n")
    with pytest.raises(MigrationError, match="defines no apply"):
        db.load_migrations(tmp_path / "migs")


def _types_step() -> Any:
    path = db.migrations_dir() / "0006_memory_types_in_code.py"
    spec = importlib.util.spec_from_file_location("types_step", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Defensive:
    """A connection as SQLite's defensive mode leaves it (macOS's own libsqlite3): the schema cannot be edited."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        if sql.startswith("UPDATE sqlite_master"):
            raise sqlite3.OperationalError("table sqlite_master may not be modified")
        return self.conn.execute(sql, params)


def _store_before_the_types_step(tmp_path: Path) -> sqlite3.Connection:
    before = tmp_path / "before"
    before.mkdir()
    for step in db.migrations_dir().glob("000[1-5]_*.sql"):
        (before / step.name).write_bytes(step.read_bytes())
    conn = db.connect(tmp_path / "m.db")
    db.migrate(conn, before)
    return conn


def test_where_the_schema_cannot_be_edited_the_type_list_stays(tmp_path: Path) -> None:
    conn = _store_before_the_types_step(tmp_path)
    _types_step().apply(SimpleNamespace(conn=_Defensive(conn)))
    assert "CHECK (type IN" in _memories_sql(tmp_path / "m.db")
    conn.close()


def test_a_store_whose_schema_cannot_be_edited_still_stores_every_type(tmp_path: Path) -> None:
    conn = _store_before_the_types_step(tmp_path)
    _types_step().apply(SimpleNamespace(conn=_Defensive(conn)))
    conn.close()
    # 0006 is not recorded here: recorded steps are sqlite-utils' job
    store = Store.open(tmp_path / "m.db")
    for memory_type in type_names():
        store.insert_memory(
            NewMemory(
                scope="s",
                type=MemoryType(memory_type),
                content=f"a {memory_type}",
                source=Source.TOOL,
            )
        )
    assert store.memories.count_by_type(["s"]) == dict.fromkeys(type_names(), 1)
    store.close()


def test_a_type_check_the_step_does_not_know_fails_it(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "m.db")
    conn.execute(
        "CREATE TABLE memories (id INTEGER PRIMARY KEY, type TEXT CHECK (type IN ('fact')))"
    )
    with pytest.raises(ValueError, match="a CHECK this step does not know"):
        _types_step().apply(SimpleNamespace(conn=conn))
    conn.close()
