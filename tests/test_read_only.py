"""A store whose file, folder or file system cannot be written: recall works and says so; every write is refused
with one sentence naming the real reason (the file, the folder, the file system), never another one."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hermes_homes import install
from read_only_homes import (
    FILE_SYSTEM_REASON,
    CannotLock,
    Undo,
    file_reason,
    folder_reason,
    lock,
    mount_read_only,
)

from hermes_bowerbird.cli import cli
from hermes_bowerbird.config import load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.errors import ReadOnlyStoreError
from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.store import Store

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
ENV = {
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "BOWERBIRD_CURATION_MODE": "thread",
    "HF_HUB_OFFLINE": "1",
}
FACT = "The staging database runs PostgreSQL 16 on the host called heron."
WAYS = ["file", "folder", "file system"]


@dataclass(frozen=True)
class ReadOnlyHome:
    """A Hermes home whose memory database holds FACT and cannot be written, and why (as the store says it)."""

    home: Path
    reason: str

    @property
    def db(self) -> Path:
        return self.home / "bowerbird" / "memory.db"

    def refusal(self) -> str:
        return f"nothing new is stored: the memory database {self.db} is read-only because {self.reason}"


def _make_read_only(way: str, db: Path) -> tuple[Undo, str]:
    """Lock the database file, its folder, or mount the folder read-only; skip with the reason when impossible."""
    try:
        if way == "file":
            return lock(db), file_reason()
        if way == "folder":
            return lock(db.parent), folder_reason(db.parent)
        return mount_read_only(db.parent), FILE_SYSTEM_REASON
    except CannotLock as exc:
        pytest.skip(f"cannot make a read-only {way} here: {exc}")


def _store_fact(home: Path) -> None:
    engine = Bowerbird(load_config(home), background=False)
    engine.remember(FACT, scope="profile:default")
    engine.shutdown()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture(params=WAYS)
def read_only(request: pytest.FixtureRequest, tmp_path: Path, env: None) -> Iterator[ReadOnlyHome]:
    home = tmp_path / "hermes"
    _store_fact(home)
    undo, reason = _make_read_only(request.param, home / "bowerbird" / "memory.db")
    try:
        yield ReadOnlyHome(home, reason)
    finally:
        undo()


def _run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["--hermes-home", str(home), *args], env=ENV, catch_exceptions=False
    )


# -- the store and the engine --------------------------------------------------------------------------------
def test_the_store_opens_read_only_and_says_why(read_only: ReadOnlyHome) -> None:
    engine = Bowerbird(load_config(read_only.home), background=False)
    try:
        assert engine.status()["read_only_reason"] == read_only.reason
    finally:
        engine.shutdown()


def test_recall_finds_the_fact(read_only: ReadOnlyHome) -> None:
    engine = Bowerbird(load_config(read_only.home), background=False)
    try:
        hits = engine.recall("which database runs on heron?", scopes=["profile:default"])
        assert [h.content for h in hits if h.kind == "memory"] == [FACT]
    finally:
        engine.shutdown()


def test_recall_leaves_access_counts_alone(read_only: ReadOnlyHome) -> None:
    store = Store.open(read_only.db)
    try:
        before = [m.access_count for m in store.memories.find()]
        store.memories.touch([m.id for m in store.memories.find()])
        assert [m.access_count for m in store.memories.find()] == before
    finally:
        store.close()


def test_an_engine_write_is_refused_with_the_reason(read_only: ReadOnlyHome) -> None:
    engine = Bowerbird(load_config(read_only.home), background=False)
    try:
        with pytest.raises(ReadOnlyStoreError) as refused:
            engine.remember("Deploys happen on Fridays.", scope="profile:default")
        assert str(refused.value) == read_only.refusal()
    finally:
        engine.shutdown()


# -- the command line ----------------------------------------------------------------------------------------
def test_cli_recall_works_and_names_the_reason(read_only: ReadOnlyHome) -> None:
    result = _run(read_only.home, "recall", "heron database")
    assert result.exit_code == 0
    assert "heron" in result.stdout
    assert read_only.reason in result.stderr


def test_cli_recall_json_flags_read_only(read_only: ReadOnlyHome) -> None:
    data = json.loads(_run(read_only.home, "--json", "recall", "heron database").stdout)["data"]
    assert (data["read_only"], data["read_only_reason"], data["count"]) == (
        True,
        read_only.reason,
        1,
    )


def test_cli_status_says_read_only_and_why(read_only: ReadOnlyHome) -> None:
    result = _run(read_only.home, "status")
    assert result.exit_code == 0
    assert f"{read_only.db} (read-only: {read_only.reason})" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "Deploys happen on Fridays."),
        ("update", "1", "The staging database runs on kestrel."),
        ("forget", "1"),
        ("relate", "1", "1", "related_to"),
        ("release", "1"),
        ("maintain",),
        ("reindex",),
        ("doctor", "--repair"),
    ],
)
def test_cli_writes_fail_with_one_line_naming_the_reason(
    read_only: ReadOnlyHome, args: tuple[str, ...]
) -> None:
    result = _run(read_only.home, *args)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [f"Error: {read_only.refusal()}"]


def test_doctor_checks_a_read_only_store_without_false_alarms(read_only: ReadOnlyHome) -> None:
    result = _run(read_only.home, "doctor")
    assert result.exit_code == 0
    assert "All checks passed." in result.stdout


# -- the provider and its tools -------------------------------------------------------------------------------
@pytest.fixture
def provider(read_only: ReadOnlyHome) -> Iterator[BowerbirdProvider]:
    opened = BowerbirdProvider()
    opened.initialize("s1", hermes_home=str(read_only.home), platform="cli")
    yield opened
    opened.shutdown()


def test_the_provider_is_available(provider: BowerbirdProvider) -> None:
    assert provider.unavailable_reason() is None


def test_the_provider_prefetches_the_fact(provider: BowerbirdProvider) -> None:
    assert FACT in provider.prefetch("which database runs on heron?")


def test_sync_turn_stores_nothing_and_logs_no_failure(
    provider: BowerbirdProvider, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="hermes_bowerbird"):
        provider.sync_turn("I moved the staging database to kestrel.", "Noted.")
    assert provider.engine is not None
    assert (provider.engine.store.journal.counts(), caplog.messages) == ({}, [])


def test_the_system_prompt_says_memory_is_read_only(
    provider: BowerbirdProvider, read_only: ReadOnlyHome
) -> None:
    assert (
        f"Memory is read-only in this session (the memory database {read_only.db} is read-only "
        f"because {read_only.reason})" in provider.system_prompt_block()
    )


def test_the_recall_tool_answers_with_a_note_naming_the_reason(
    provider: BowerbirdProvider, read_only: ReadOnlyHome
) -> None:
    answer = json.loads(provider.handle_tool_call("bowerbird_recall", {"query": "heron database"}))
    assert [r["content"] for r in answer["results"]] == [FACT]
    assert answer["note"] == (
        f"the memory database {read_only.db} is read-only because {read_only.reason}: recall works, "
        "nothing new can be stored"
    )


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("bowerbird_remember", {"content": "Deploys happen on Fridays."}),
        ("bowerbird_update", {"id": 1, "content": "The staging database runs on kestrel."}),
        ("bowerbird_forget", {"id": 1}),
        ("bowerbird_relate", {"source_id": 1, "target_id": 1, "relation": "related_to"}),
    ],
)
def test_writing_tools_say_nothing_is_stored_and_why(
    provider: BowerbirdProvider, read_only: ReadOnlyHome, tool: str, args: dict[str, Any]
) -> None:
    assert json.loads(provider.handle_tool_call(tool, args)) == {"error": read_only.refusal()}


# -- a store copied or mounted while an agent was writing it --------------------------------------------------
def _store_fact_without_checkpoint(home: Path) -> None:
    """FACT left in the WAL only, as a copy taken while an agent ran holds it: the writer dies before any
    checkpoint, and its -shm (a cache SQLite rebuilds from the WAL) is not part of the copy."""
    script = (
        "import os, sys\n"
        "from hermes_bowerbird.config import load_config\n"
        "from hermes_bowerbird.engine import Bowerbird\n"
        "engine = Bowerbird(load_config(sys.argv[1]), background=False)\n"
        "engine.remember(sys.argv[2], scope='profile:default')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(home), FACT], check=True, env=os.environ)
    db = home / "bowerbird" / "memory.db"
    (db.parent / "memory.db-shm").unlink()
    assert (db.parent / "memory.db-wal").stat().st_size > 0


def _snapshots() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("bowerbird-snapshot-*")}


@pytest.mark.parametrize("way", ["folder", "file system"])
def test_changes_still_in_the_wal_are_recalled_and_the_private_copy_goes(
    tmp_path: Path, env: None, way: str
) -> None:
    home = tmp_path / "hermes"
    _store_fact_without_checkpoint(home)
    before = _snapshots()
    undo, _ = _make_read_only(way, home / "bowerbird" / "memory.db")
    try:
        engine = Bowerbird(load_config(home), background=False)
        hits = engine.recall("which database runs on heron?", scopes=["profile:default"])
        engine.shutdown()
    finally:
        undo()
    assert ([h.content for h in hits if h.kind == "memory"], _snapshots() - before) == (
        [FACT],
        set(),
    )


def test_a_read_only_store_that_needs_an_upgrade_names_both_facts(
    tmp_path: Path, env: None
) -> None:
    home = tmp_path / "hermes"
    (home / "bowerbird").mkdir(parents=True)
    db = home / "bowerbird" / "memory.db"
    shutil.copyfile(FIXTURES / "store_v0_1_0.db", db)
    undo, reason = _make_read_only("folder", db)
    try:
        result = _run(home, "status")
    finally:
        undo()
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: the memory database {db} is read-only because {reason}, and it needs an upgrade ("
    )


# -- the real host -------------------------------------------------------------------------------------------
@pytest.fixture(params=WAYS)
def host_run(
    request: pytest.FixtureRequest, tmp_path: Path, env: None
) -> Iterator[tuple[dict[str, Any], ReadOnlyHome]]:
    pytest.importorskip("agent.memory_manager")
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  provider: bowerbird\n")
    install(home)
    _store_fact(home)
    undo, reason = _make_read_only(request.param, home / "bowerbird" / "memory.db")
    try:
        yield _run_host(home), ReadOnlyHome(home, reason)
    finally:
        undo()


def _run_host(home: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(ENV, HERMES_HOME=str(home))
    proc = subprocess.run(
        [sys.executable, str(HERE / "host_read_only_scenario.py")],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    return dict(json.loads(lines[-1][len("RESULT ") :]))


@pytest.mark.slow
def test_the_host_recalls_from_a_read_only_store_and_stores_nothing(
    host_run: tuple[dict[str, Any], ReadOnlyHome],
) -> None:
    run, read_only = host_run
    assert FACT in run["prefetch"]
    assert run["remember"] == {"error": read_only.refusal()}
    assert (run["journal"], run["memories"], run["failures"]) == ({}, 1, [])
