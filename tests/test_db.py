"""Migrations: ordering, atomicity, idempotence, newer-schema refusal, and shipping inside the wheel."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hermes_bowerbird import db
from hermes_bowerbird.errors import DatabaseError, MigrationError, SchemaTooNewError
from hermes_bowerbird.store import Store

ROOT = Path(__file__).resolve().parent.parent


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}


def test_blank_database_gets_every_migration(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "m.db")
    applied = db.migrate(conn)
    assert applied == [m.name for m in db.load_migrations()]
    expected = {"memories", "episodes", "entities", "entity_aliases", "memory_entities", "episode_entities",
                "edges", "embeddings", "embedding_cache", "journal", "audit_log", "bulletins", "meta",
                "memory_provenance", "memories_fts", "episodes_fts", "memories_fts_insert", "episodes_fts_update"}
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
        db.migrate(conn, db.load_migrations(folder))
    assert "a" in _tables(conn) and "b" not in _tables(conn)
    assert db.applied_migrations(conn) == {1: "0001_good"}


def test_trigger_bodies_stay_whole() -> None:
    sql = ("CREATE TABLE t (x);\nCREATE TRIGGER tr AFTER INSERT ON t BEGIN\n  INSERT INTO t VALUES (1);\n"
           "  DELETE FROM t WHERE x = 2;\nEND;\n-- a comment\nCREATE INDEX i ON t (x);")
    statements = db.split_statements(sql)
    assert len(statements) == 3 and statements[1].endswith("END;")


@pytest.mark.parametrize("names, message", [
    (["0001_a.sql", "0001_b.sql"], "share number"),
    (["1_a.sql"], "not named"),
    (["0001_Bad-Name.sql"], "not named"),
])
def test_malformed_migration_sets_are_refused(tmp_path: Path, names: list[str], message: str) -> None:
    for name in names:
        _write(tmp_path / "migs", name, "SELECT 1;")
    with pytest.raises(MigrationError, match=message):
        db.load_migrations(tmp_path / "migs")


def test_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_migrations VALUES (9999, '9999_future', 0)")
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
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(ROOT)], check=True, capture_output=True)
    wheel = next((tmp_path / "dist").glob("hermes_bowerbird-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert "hermes_bowerbird/migrations/0001_initial.sql" in names
        assert "hermes_bowerbird/py.typed" in names and "hermes_bowerbird/plugin.yaml" in names
        archive.extractall(tmp_path / "site")
    code = ("import hermes_bowerbird.db as d, sys; p = d.migrations_dir(); "
            "print(p); assert str(p).startswith(sys.argv[1]), p; assert d.load_migrations()")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "site")], cwd=tmp_path, check=True,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path / "site")})
    assert str(tmp_path / "site") in out.stdout
