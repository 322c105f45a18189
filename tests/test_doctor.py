"""`bowerbird doctor` on damaged files: a clear report, a salvaged new file, the old one kept, no traceback."""

from __future__ import annotations

import json
import logging
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hermes_bowerbird import recovery
from hermes_bowerbird.cli import cli
from hermes_bowerbird.config import load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.provider import BowerbirdProvider

ENV = {
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "HF_HUB_OFFLINE": "1",
}
TOTAL = 300


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with TOTAL memories long enough to fill many pages, built once per module."""
    folder = tmp_path_factory.mktemp("template")
    config = load_config(
        folder,
        overrides={
            "embedding_backend": "none",
            "llm_backend": "none",
            "maintenance_enabled": "false",
        },
    )
    engine = Bowerbird(config, background=False)
    for n in range(TOTAL):
        engine.remember(
            f"Vault {n} keeps the blueprint of project number {n}; " + "notes " * 40,
            scope="profile:default",
        )
    engine.shutdown()
    return config.db_path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: Path) -> Path:
    """A Hermes home holding a copy of the template database."""
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    home = tmp_path / "hermes"
    _db(home).parent.mkdir(parents=True)
    shutil.copyfile(template, _db(home))
    return home


def _db(home: Path) -> Path:
    return home / "bowerbird" / "memory.db"


def _damage_page(path: Path) -> None:
    """Random bytes over one leaf page of the memories table, in the middle of it."""
    conn = sqlite3.connect(path)
    try:
        pages = [
            r[0]
            for r in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = 'memories' AND pagetype = 'leaf' ORDER BY pageno"
            )
        ]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table to find a leaf page")
    finally:
        conn.close()
    page = pages[len(pages) // 2]
    data = bytearray(path.read_bytes())
    data[(page - 1) * size : page * size] = random.Random(page).randbytes(size)
    path.write_bytes(bytes(data))


def _damage_header(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[:100] = random.Random(100).randbytes(100)
    path.write_bytes(bytes(data))


DAMAGE = {"page": _damage_page, "header": _damage_header}


def _run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["--hermes-home", str(home), *args], env=ENV, catch_exceptions=False
    )


def _kept(home: Path) -> list[Path]:
    return sorted(
        p
        for p in _db(home).parent.iterdir()
        if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm"))
    )


def _memory_count(home: Path) -> int:
    envelope = json.loads(_run(home, "--json", "list", "--limit", "100000").stdout)
    return int(envelope["data"]["count"])


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_doctor_reports_damage_without_a_traceback(home: Path, damage: str) -> None:
    DAMAGE[damage](_db(home))
    result = _run(home, "doctor")
    assert result.exit_code == 1
    assert "Problems found:" in result.stdout
    assert "doctor --repair" in result.stdout
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_doctor_json_reports_an_unhealthy_file(home: Path, damage: str) -> None:
    DAMAGE[damage](_db(home))
    envelope = json.loads(_run(home, "--json", "doctor").stdout)
    assert envelope["command"] == "doctor"
    assert envelope["data"]["healthy"] is False
    assert envelope["data"]["file"]["header_ok"] is (damage != "header")


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_repair_salvages_into_a_new_file_and_keeps_the_old(home: Path, damage: str) -> None:
    DAMAGE[damage](_db(home))
    damaged_bytes = _db(home).read_bytes()
    result = _run(home, "doctor", "--repair")
    assert result.exit_code == 0
    assert "Repaired: every check passes now." in result.stdout
    kept = _kept(home)
    assert len(kept) == 1
    assert kept[0].read_bytes() == damaged_bytes
    assert recovery.check_file(_db(home)).healthy is True


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_the_next_doctor_finds_nothing_after_a_repair(home: Path, damage: str) -> None:
    DAMAGE[damage](_db(home))
    _run(home, "doctor", "--repair")
    again = _run(home, "doctor")
    assert again.exit_code == 0
    assert "All checks passed." in again.stdout


def test_a_damaged_header_loses_no_memory(home: Path) -> None:
    _damage_header(_db(home))
    _run(home, "doctor", "--repair")
    assert _memory_count(home) == TOTAL


def test_a_damaged_page_loses_only_that_page(home: Path) -> None:
    _damage_page(_db(home))
    _run(home, "doctor", "--repair")
    assert TOTAL - 30 <= _memory_count(home) < TOTAL


def test_repaired_store_recalls(home: Path) -> None:
    _damage_page(_db(home))
    _run(home, "doctor", "--repair")
    found = json.loads(_run(home, "--json", "recall", "blueprint of project number 299").stdout)
    assert any("Vault 299 " in r["content"] for r in found["data"]["results"])


def test_repair_json_says_what_was_salvaged(home: Path) -> None:
    _damage_page(_db(home))
    data = json.loads(_run(home, "--json", "doctor", "--repair").stdout)["data"]
    assert data["repaired"] is True
    assert data["salvage"]["lost"]["memories"] == 1  # one unreadable stretch


def test_recall_on_a_damaged_header_is_one_clear_line(home: Path) -> None:
    _damage_header(_db(home))
    result = _run(home, "recall", "blueprint")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "Error: the memory database file is not a SQLite database or its header is damaged; "
        "run `bowerbird doctor --repair`"
    ]


def test_rebuilt_header_has_the_page_size_of_the_file(home: Path) -> None:
    data = _db(home).read_bytes()
    assert recovery.guess_page_size(b"\0" * 100 + data[100:]) == int.from_bytes(data[16:18], "big")


def test_provider_on_a_damaged_store_says_so_once(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _damage_header(_db(home))
    provider = BowerbirdProvider()
    with caplog.at_level(logging.WARNING, logger="hermes_bowerbird"):
        provider.initialize("s1", hermes_home=str(home), platform="cli")
        provider.sync_turn("I moved to Lisbon.", "Noted.")
        assert provider.prefetch("where do I live?") == ""
        assert provider.system_prompt_block() == ""
        provider.on_session_end([])
        provider.shutdown()
    reason = provider.unavailable_reason()
    assert reason is not None and "header is damaged" in reason
    assert [r.levelname for r in caplog.records] == ["ERROR"]
    assert "Traceback" not in caplog.text


def test_provider_tool_call_on_a_damaged_store_names_the_cause(home: Path) -> None:
    _damage_header(_db(home))
    provider = BowerbirdProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    error = json.loads(provider.handle_tool_call("bowerbird_recall", {"query": "x"}))["error"]
    assert "header is damaged" in error


def test_repair_of_a_file_that_is_not_sqlite_leaves_it_alone(home: Path) -> None:
    _db(home).write_bytes(b"these are my shopping notes, not a database\n" * 200)
    result = _run(home, "doctor", "--repair")
    assert result.exit_code == 1
    assert "nothing could be read from the damaged file" in result.stdout
    assert _db(home).read_bytes().startswith(b"these are my shopping notes")


def test_doctor_on_an_empty_file_finds_an_empty_store(home: Path) -> None:
    _db(home).write_bytes(b"")
    result = _run(home, "doctor")
    assert result.exit_code == 0
    assert "All checks passed." in result.stdout


def test_doctor_json_on_a_healthy_store(home: Path) -> None:
    envelope = json.loads(_run(home, "--json", "doctor").stdout)
    assert (envelope["success"], envelope["data"]["healthy"], envelope["data"]["problems"]) == (
        True,
        True,
        [],
    )


@pytest.mark.parametrize("fraction", [0.0, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_repair_anywhere_in_the_file_never_tracebacks(home: Path, fraction: float) -> None:
    path = _db(home)
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    page = int(len(data) // size * fraction)
    start = max(page * size, 100)  # page 1 keeps its header here: the header has its own test
    data[start : (page + 1) * size] = random.Random(page).randbytes((page + 1) * size - start)
    path.write_bytes(bytes(data))
    result = _run(home, "doctor", "--repair")
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert recovery.check_file(path).healthy or path.read_bytes() == bytes(data)


def test_many_providers_on_a_damaged_store_log_one_line(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _damage_header(_db(home))
    with caplog.at_level(logging.WARNING, logger="hermes_bowerbird"):
        for user in ("alice", "bob", "carol"):
            BowerbirdProvider().initialize(
                "s-" + user, hermes_home=str(home), platform="telegram", user_id=user
            )
    assert [r.levelname for r in caplog.records] == ["ERROR"]
