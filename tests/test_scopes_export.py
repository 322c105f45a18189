"""Scope keys that never collide (platform + hash of the raw id), old keys still readable, exports that never leak."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hermes_bowerbird import scopes
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
SHARED = "Project uses SQLite."
PRIVATE = "My locker code is kept in the blue notebook."


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    return tmp_path / "hermes"


def _run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["--hermes-home", str(home), *args], env=ENV, catch_exceptions=False
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("a.b", "telegram"), ("a_b", "telegram")),
        (("alice smith", "discord"), ("alice_smith", "discord")),
        (("12345", "telegram"), ("12345", "discord")),
        (("x" * 60 + "1", "slack"), ("x" * 60 + "2", "slack")),
        (("Alice", "cli"), ("alice", "cli")),
    ],
)
def test_user_keys_never_collide(first: tuple[str, str], second: tuple[str, str]) -> None:
    assert scopes.user_scope(*first) != scopes.user_scope(*second)


@pytest.mark.parametrize(
    ("user", "platform", "prefix"),
    [
        ("12345", "telegram", "user:telegram:12345~"),
        ("@alice:matrix.org", "matrix", "user:matrix:@alice_matrix.org~"),
        ("bob", None, "user:bob~"),
    ],
)
def test_user_keys_carry_platform_and_a_readable_id(
    user: str, platform: str | None, prefix: str
) -> None:
    assert scopes.user_scope(user, platform).startswith(prefix)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("telegram:12345", ("12345", "telegram")),
        ("12345", ("12345", None)),
        ("@alice:matrix.org", ("@alice:matrix.org", None)),
    ],
)
def test_cli_user_may_name_its_platform(value: str, expected: tuple[str, str | None]) -> None:
    assert scopes.split_user(value) == expected


def _old_store(home: Path) -> None:
    """A store written before keys carried a platform and hash: Alice's memory under `user:alice`."""
    engine = Bowerbird(load_config(home), background=False)
    engine.remember(PRIVATE, scope="user:alice")
    engine.remember(SHARED, scope="profile:default")
    engine.shutdown()


def _provider(home: Path, user: str) -> BowerbirdProvider:
    provider = BowerbirdProvider()
    provider.initialize("s-" + user, hermes_home=str(home), platform="telegram", user_id=user)
    return provider


def test_an_old_store_keeps_a_users_memories_visible(home: Path) -> None:
    _old_store(home)
    alice = _provider(home, "alice")
    try:
        assert "blue notebook" in alice.prefetch("where is my locker code kept?")
    finally:
        alice.shutdown()


def test_an_old_users_memories_stay_private(home: Path) -> None:
    _old_store(home)
    bob = _provider(home, "bob")
    try:
        assert "blue notebook" not in bob.prefetch("where is my locker code kept? blue notebook")
    finally:
        bob.shutdown()


def test_new_memories_go_to_the_new_key(home: Path) -> None:
    _old_store(home)
    alice = _provider(home, "alice")
    try:
        stored = json.loads(
            alice.handle_tool_call("bowerbird_remember", {"content": "My gym is FitBox."})
        )
    finally:
        alice.shutdown()
    assert stored["stored"]["scope"] == scopes.user_scope("alice", "telegram")


def test_a_user_can_forget_an_old_key_memory(home: Path) -> None:
    _old_store(home)
    alice = _provider(home, "alice")
    try:
        assert alice.engine is not None
        old = alice.engine.store.memories.find(["user:alice"])[0]
        answer = json.loads(alice.handle_tool_call("bowerbird_forget", {"id": old.id}))
    finally:
        alice.shutdown()
    assert answer == {"forgotten": old.id}


def test_cli_user_with_platform_sees_the_old_key(home: Path) -> None:
    _old_store(home)
    found = json.loads(
        _run(home, "--json", "--user", "telegram:alice", "recall", "locker code notebook").stdout
    )
    assert PRIVATE in [r["content"] for r in found["data"]["results"]]


# -- export -------------------------------------------------------------------------------------------------
def test_user_export_holds_only_that_users_memories(home: Path) -> None:
    _old_store(home)
    data = json.loads(_run(home, "--json", "--user", "alice", "export").stdout)["data"]
    assert [r["content"] for r in data["records"] if r["kind"] == "memory"] == [PRIVATE]


def test_profile_export_holds_no_user_memories(home: Path) -> None:
    _old_store(home)
    data = json.loads(_run(home, "--json", "export").stdout)["data"]
    assert [r["content"] for r in data["records"] if r["kind"] == "memory"] == [SHARED]


def test_markdown_export_refuses_the_host_memory_folder(home: Path) -> None:
    _old_store(home)
    memories = home / "memories"
    memories.mkdir()
    (memories / "MEMORY.md").write_text("Host entry.", encoding="utf-8")
    result = _run(home, "export", "--markdown", str(memories))
    assert result.exit_code == 1
    assert "host's own memory folder" in result.stderr
    assert (memories / "MEMORY.md").read_text(encoding="utf-8") == "Host entry."


def test_a_users_markdown_never_goes_to_the_host_folder_even_forced(home: Path) -> None:
    _old_store(home)
    memories = home / "memories"
    memories.mkdir()
    result = _run(home, "--user", "alice", "export", "--markdown", str(memories / "."), "--force")
    assert result.exit_code == 1
    assert sorted(p.name for p in memories.iterdir()) == []


def test_markdown_export_refuses_existing_files_without_force(home: Path, tmp_path: Path) -> None:
    _old_store(home)
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "USER.md").write_text("mine", encoding="utf-8")
    refused = _run(home, "export", "--markdown", str(folder))
    assert refused.exit_code == 1
    assert (folder / "USER.md").read_text(encoding="utf-8") == "mine"


def test_markdown_export_overwrites_with_force(home: Path, tmp_path: Path) -> None:
    _old_store(home)
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("old", encoding="utf-8")
    assert _run(home, "export", "--markdown", str(folder), "--force").exit_code == 0
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == SHARED


def test_jsonl_export_refuses_an_existing_file_without_force(home: Path, tmp_path: Path) -> None:
    _old_store(home)
    out = tmp_path / "dump.jsonl"
    out.write_text("keep me", encoding="utf-8")
    result = _run(home, "export", "-o", str(out))
    assert result.exit_code == 1
    assert out.read_text(encoding="utf-8") == "keep me"


def test_jsonl_export_refuses_the_host_memory_folder(home: Path) -> None:
    _old_store(home)
    result = _run(home, "export", "-o", str(home / "memories" / "dump.jsonl"), "--force")
    assert result.exit_code == 1
    assert not (home / "memories" / "dump.jsonl").exists()


def test_user_markdown_export_leaves_shared_facts_out(home: Path, tmp_path: Path) -> None:
    _old_store(home)
    folder = tmp_path / "alice"
    assert _run(home, "--user", "alice", "export", "--markdown", str(folder)).exit_code == 0
    written = "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.iterdir()))
    assert written.strip() == PRIVATE
