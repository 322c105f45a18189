"""A store whose file or folder cannot be written: recall works and says so, writes fail with one clear sentence."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hermes_bowerbird.cli import cli
from hermes_bowerbird.config import load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.store import Store
from hermes_bowerbird.tools import ToolContext, handle_tool_call

ENV = {
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "HF_HUB_OFFLINE": "1",
}
FACT = "The staging database runs PostgreSQL 16 on the host called heron."


def _lock(path: Path) -> Callable[[], None]:
    """Make `path` unwritable for this process (an immutable flag when running as root); return the undo."""
    mode = stat.S_IMODE(path.stat().st_mode)
    path.chmod(0o555 if path.is_dir() else 0o444)
    immutable = os.geteuid() == 0 and shutil.which("chattr") is not None
    if immutable:
        subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)

    def undo() -> None:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True, capture_output=True)
        path.chmod(mode)

    return undo


def _really_read_only(path: Path) -> bool:
    probe = path / ".probe" if path.is_dir() else path
    try:
        with open(probe, "a"):
            pass
    except OSError:
        return True
    if path.is_dir():
        probe.unlink()
    return False


@pytest.fixture(params=["file", "folder"])
def read_only_home(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A Hermes home whose memory database holds FACT, then is locked (the file, or its whole folder)."""
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    home = tmp_path / "hermes"
    engine = Bowerbird(load_config(home), background=False)
    engine.remember(FACT, scope="profile:default")
    engine.shutdown()
    db = home / "bowerbird" / "memory.db"
    assert db.is_file()
    target = db if request.param == "file" else db.parent
    undo = _lock(target)
    try:
        if not _really_read_only(target):
            pytest.skip("cannot make a read-only file here (root without chattr)")
        yield home
    finally:
        undo()


def _run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["--hermes-home", str(home), *args], env=ENV, catch_exceptions=False
    )


def test_store_opens_read_only_and_recall_finds_the_fact(read_only_home: Path) -> None:
    engine = Bowerbird(load_config(read_only_home), background=False)
    try:
        assert engine.store.readonly is True
        hits = engine.recall("which database runs on heron?", scopes=["profile:default"])
        assert [h.content for h in hits if h.kind == "memory"] == [FACT]
        assert engine.status()["read_only"] is True
    finally:
        engine.shutdown()


def test_recall_leaves_access_counts_alone_on_a_read_only_store(read_only_home: Path) -> None:
    store = Store.open(read_only_home / "bowerbird" / "memory.db")
    try:
        before = [m.access_count for m in store.memories.find()]
        store.memories.touch([m.id for m in store.memories.find()])
        assert [m.access_count for m in store.memories.find()] == before
    finally:
        store.close()


def test_cli_recall_works_and_says_read_only(read_only_home: Path) -> None:
    result = _run(read_only_home, "recall", "heron database")
    assert result.exit_code == 0
    assert "heron" in result.stdout
    assert "read-only" in result.stderr


def test_cli_recall_json_flags_read_only(read_only_home: Path) -> None:
    envelope = json.loads(_run(read_only_home, "--json", "recall", "heron database").stdout)
    assert envelope["data"]["read_only"] is True
    assert envelope["data"]["count"] >= 1


def test_cli_status_says_read_only(read_only_home: Path) -> None:
    result = _run(read_only_home, "status")
    assert result.exit_code == 0
    assert "(read-only)" in result.stdout


def test_cli_remember_fails_with_one_line(read_only_home: Path) -> None:
    result = _run(read_only_home, "remember", "Deploys happen on Fridays.")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "Error: the memory database is read-only (the file or its folder cannot be written)"
    ]


def test_tools_recall_with_a_note_and_refuse_writes_in_one_sentence(read_only_home: Path) -> None:
    engine = Bowerbird(load_config(read_only_home), background=False)
    try:
        ctx = ToolContext(
            engine=engine,
            write_scope="profile:default",
            visible=("profile:default",),
            session_id="s",
            writable=True,
        )
        recalled = json.loads(
            handle_tool_call(ctx, "bowerbird_recall", {"query": "heron database"})
        )
        assert recalled["results"][0]["content"] == FACT
        assert "read-only" in recalled["note"]
        refused = json.loads(
            handle_tool_call(ctx, "bowerbird_remember", {"content": "A new fact."})
        )
        assert refused == {
            "error": "the memory database is read-only (the file or its folder cannot be written)"
        }
    finally:
        engine.shutdown()


def test_provider_prefetches_from_a_read_only_store_and_skips_capture(read_only_home: Path) -> None:
    provider = BowerbirdProvider()
    provider.initialize("s1", hermes_home=str(read_only_home), platform="cli")
    try:
        assert provider.unavailable_reason() is None
        assert "heron" in provider.prefetch("which database runs on heron?")
        provider.sync_turn("I moved the staging database to kestrel.", "Noted.")
        assert provider.engine is not None
        assert provider.engine.store.journal.counts() == {}
    finally:
        provider.shutdown()


def test_doctor_checks_a_read_only_store_without_false_alarms(read_only_home: Path) -> None:
    result = _run(read_only_home, "doctor")
    assert result.exit_code == 0
    assert "All checks passed." in result.stdout


def test_doctor_repair_on_a_read_only_store_is_one_line(read_only_home: Path) -> None:
    result = _run(read_only_home, "doctor", "--repair")
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: ") and "read-only" in line
