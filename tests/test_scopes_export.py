"""Scope keys that never collide (platform + hash of the raw id), old keys still readable, exports that never leak."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
        (":12345", ("12345", "")),
    ],
)
def test_cli_user_may_name_its_platform(value: str, expected: tuple[str, str | None]) -> None:
    assert scopes.split_user(value) == expected


# -- a user id given without its platform is looked up ------------------------------------------------------
KEYS = [
    scopes.user_scope("u2", "cli"),
    scopes.user_scope("u3", "cli"),
    scopes.user_scope("u3", "telegram"),
    scopes.user_scope("a b", "discord"),
    scopes.user_scope("bob", None),
    scopes.legacy_user_scope("carol"),
    scopes.profile_scope(),
]


@pytest.mark.parametrize(
    ("user", "held"),
    [
        ("u2", ("cli",)),
        ("u3", ("cli", "telegram")),
        ("a b", ("discord",)),
        ("a_b", ()),  # differs from "a b" only where the readable part is the same
        ("a.b", ()),
        ("U2", ()),
        ("bob", ("",)),
        ("carol", ()),  # an older store's readable-only key is an alias, not a platform
        ("dave", ()),
    ],
)
def test_a_user_id_is_found_only_on_the_platforms_holding_exactly_it(
    user: str, held: tuple[str, ...]
) -> None:
    assert scopes.platforms_holding(user, KEYS) == held


U2_FACT = "u2 keeps the bike lock combination in the blue notebook."
U3_CLI = "u3 drinks oolong tea in the morning."
U3_TELEGRAM = "u3 drinks green tea at work."
SPACED = "a b plays chess on Sundays."


@pytest.fixture
def users(home: Path) -> Path:
    """A store as the gateway writes it: u2 on the cli platform, u3 on two platforms, "a b" on discord."""
    engine = Bowerbird(load_config(home), background=False)
    for text, user, platform in (
        (U2_FACT, "u2", "cli"),
        (U3_CLI, "u3", "cli"),
        (U3_TELEGRAM, "u3", "telegram"),
        (SPACED, "a b", "discord"),
    ):
        engine.remember(text, scope=scopes.user_scope(user, platform))
    engine.remember(SHARED, scope="profile:default")
    engine.shutdown()
    return home


def _contents(envelope: dict[str, Any], key: str) -> list[str]:
    return sorted(
        r["content"] for r in envelope["data"][key] if r.get("kind", "memory") == "memory"
    )


@pytest.mark.parametrize(
    ("args", "key", "expected"),
    [
        (("recall", "bike lock notebook"), "results", [U2_FACT]),
        (("list",), "memories", sorted([U2_FACT, SHARED])),
        (("export",), "records", [U2_FACT]),
    ],
)
def test_a_user_without_platform_reads_the_platform_holding_it(
    users: Path, args: tuple[str, ...], key: str, expected: list[str]
) -> None:
    envelope = json.loads(_run(users, "--json", "--user", "u2", *args).stdout)
    assert _contents(envelope, key) == expected
    assert envelope["data"]["notes"] == ["user 'u2' is held on cli only: read as --user 'cli:u2'"]


def test_show_finds_a_users_memory_without_the_platform(users: Path) -> None:
    shown = json.loads(_run(users, "--json", "--user", "u2", "show", "1").stdout)
    assert shown["data"]["memory"]["content"] == U2_FACT


def test_status_of_a_user_without_platform_shows_their_key(users: Path) -> None:
    data = json.loads(_run(users, "--json", "--user", "u2", "status").stdout)["data"]
    assert data["scopes"] == [
        scopes.user_scope("u2", "cli"),
        scopes.legacy_user_scope("u2"),
        "profile:default",
    ]


def test_remember_for_a_user_without_platform_goes_to_their_key(users: Path) -> None:
    stored = json.loads(
        _run(users, "--json", "--user", "u2", "remember", "u2 cycles to work.").stdout
    )
    assert stored["data"]["memory"]["scope"] == scopes.user_scope("u2", "cli")


@pytest.mark.parametrize(
    "args",
    [
        ("recall", "tea"),
        ("remember", "u3 likes jasmine tea."),
        ("export",),
        ("show", "2"),
        ("list",),
        ("status",),
        ("serve", "--no-open"),
        ("mcp",),
    ],
)
def test_a_user_on_several_platforms_is_asked_which(users: Path, args: tuple[str, ...]) -> None:
    result = _run(users, "--user", "u3", *args)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--user': user id 'u3' has memories on several platforms "
        "(cli:u3, telegram:u3); give one of them as PLATFORM:ID"
    )


def test_the_json_error_lists_the_choices(users: Path) -> None:
    envelope = json.loads(_run(users, "--json", "--user", "u3", "recall", "tea").stdout)
    assert (envelope["success"], envelope["data"]["error"]["choices"]) == (
        False,
        ["cli:u3", "telegram:u3"],
    )


@pytest.mark.parametrize(("user", "fact"), [("cli:u3", U3_CLI), ("telegram:u3", U3_TELEGRAM)])
def test_a_user_with_platform_reads_that_platform_only(users: Path, user: str, fact: str) -> None:
    envelope = json.loads(_run(users, "--json", "--user", user, "recall", "tea").stdout)
    assert _contents(envelope, "results") == [fact]


@pytest.mark.parametrize("user", ["a_b", "a.b", "U2"])
def test_a_lookup_never_reaches_a_similar_id(users: Path, user: str) -> None:
    envelope = json.loads(_run(users, "--json", "--user", user, "export").stdout)
    assert _contents(envelope, "records") == []
    assert envelope["data"]["notes"] == [
        f"nothing is stored for user {user!r} yet, on any platform; a gateway user is given with "
        f"their platform, e.g. --user telegram:{user}"
    ]


def test_a_new_user_without_platform_is_kept_under_the_id_alone(users: Path) -> None:
    first = _run(users, "--user", "erin", "remember", "Erin's desk is by the window.")
    again = json.loads(_run(users, "--json", "--user", "erin", "recall", "desk window").stdout)
    assert "nothing is stored for user 'erin' yet" in first.stderr
    assert _contents(again, "results") == ["Erin's desk is by the window."]
    assert "notes" not in again["data"]


def test_the_key_without_platform_is_reached_as_colon_id(users: Path) -> None:
    _run(users, "--user", ":u2", "remember", "u2 also keeps a spare key at the office.")
    envelope = json.loads(_run(users, "--json", "--user", "u2", "recall", "key").stdout)
    assert envelope["data"]["error"]["choices"] == ["cli:u2", ":u2"]
    found = json.loads(_run(users, "--json", "--user", ":u2", "recall", "spare key office").stdout)
    assert _contents(found, "results") == ["u2 also keeps a spare key at the office."]


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
