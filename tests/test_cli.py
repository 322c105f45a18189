"""The `bowerbird` command through click's CliRunner: every command, --json envelopes, clear failures."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hermes_homes import KEYWORD_ONLY

from hermes_bowerbird import hermes_cli_bridge
from hermes_bowerbird.cli import cli, parse_time
from hermes_bowerbird.timestamps import parse_iso


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "hermes"
    folder.mkdir()
    return folder


def run(home: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    runner = CliRunner()
    return runner.invoke(
        cli,
        ["--hermes-home", str(home), *args],
        env={**KEYWORD_ONLY, **(env or {})},
        catch_exceptions=False,
    )


def run_json(home: Path, *args: str) -> dict[str, Any]:
    result = run(home, "--json", *args)
    envelope = json.loads(result.output)
    assert set(envelope) == {"command", "success", "data"}
    return envelope


def remember(home: Path, text: str, *extra: str) -> int:
    envelope = run_json(home, "remember", text, *extra)
    assert envelope["success"] is True
    return int(envelope["data"]["memory"]["id"])


# -- a home where nothing was captured yet: read commands answer, and create nothing --------------------------
def _no_database(home: Path) -> bool:
    return list((home / "bowerbird").glob("memory.db*")) == []


@pytest.mark.parametrize(
    ("args", "data"),
    [
        (("recall", "anything"), {"query": "anything", "count": 0, "results": []}),
        (("list",), {"count": 0, "memories": []}),
        (("list", "--quarantined"), {"count": 0, "memories": []}),
        (("export",), {"scopes": ["profile:default"], "counts": {}, "records": []}),
        (("bulletin",), {"bulletin": None}),
    ],
)
def test_read_commands_on_an_empty_home_answer_empty_and_say_why(
    home: Path, args: tuple[str, ...], data: dict[str, Any]
) -> None:
    envelope = run_json(home, *args)
    assert envelope["success"] is True
    assert {key: envelope["data"][key] for key in data} == data
    assert envelope["data"]["notes"] == [
        f"nothing is remembered yet (no database at {home / 'bowerbird' / 'memory.db'}; "
        "the agent's first stored turn creates it)"
    ]
    assert _no_database(home)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("recall", "anything"), "No memories match."),
        (("list",), "No memories."),
        (("bulletin",), "No bulletin yet: nothing is remembered in this scope."),
    ],
)
def test_read_commands_on_an_empty_home_succeed_as_text(
    home: Path, args: tuple[str, ...], text: str
) -> None:
    result = run(home, *args)
    assert (result.exit_code, result.stdout.strip()) == (0, text)
    assert result.stderr.startswith("note: nothing is remembered yet (no database at ")


def test_status_on_an_empty_home_says_there_is_no_memory_yet(home: Path) -> None:
    result = run(home, "status")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == "No memory yet: nothing has been captured."
    assert f"{home / 'bowerbird' / 'memory.db'} (not created yet" in result.stdout
    assert _no_database(home)


def test_status_on_an_empty_home_says_how_to_switch_bowerbird_on(home: Path) -> None:
    lines = run(home, "status").stdout.splitlines()
    assert [line.split(None, 1)[1] for line in lines if line.startswith("provider")] == [
        f"off (no memory.provider in {home / 'config.yaml'}): run "
        f"`bowerbird hermes-install --hermes-home {home}` to switch bowerbird on"
    ]


def test_status_json_on_an_empty_home(home: Path) -> None:
    envelope = run_json(home, "status")
    data = envelope["data"]
    assert (envelope["success"], data["exists"], data["visible_memories"]) == (True, False, {})
    assert (data["provider"]["active"], data["provider"]["install_command"]) == (
        False,
        f"bowerbird hermes-install --hermes-home {home}",
    )


def test_status_names_another_provider_the_home_runs(home: Path) -> None:
    (home / "config.yaml").write_text("memory:\n  provider: holographic\n", encoding="utf-8")
    provider = run_json(home, "status")["data"]["provider"]
    assert (provider["active"], provider["provider"]) == (False, "holographic")


def test_status_says_when_bowerbird_is_switched_on(home: Path) -> None:
    assert run(home, "hermes-install").exit_code == 0
    lines = run(home, "status").stdout.splitlines()
    assert [line.split(None, 1)[1] for line in lines if line.startswith("provider")] == [
        f"bowerbird (memory.provider in {home / 'config.yaml'})"
    ]
    assert _no_database(home)


def test_doctor_on_an_empty_home_has_nothing_to_check(home: Path) -> None:
    result = run(home, "doctor")
    assert result.exit_code == 0
    assert result.stdout.startswith("Nothing to check: nothing is remembered yet (no database at ")
    assert run_json(home, "doctor")["data"]["healthy"] is True
    assert _no_database(home)


def test_export_to_a_file_on_an_empty_home_writes_no_records(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "dump.jsonl"
    result = run(home, "export", "-o", str(out))
    assert (result.exit_code, out.read_text(encoding="utf-8")) == (0, "")
    assert _no_database(home)


def test_markdown_export_on_an_empty_home_writes_empty_files(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "out"
    assert run(home, "export", "--markdown", str(folder)).exit_code == 0
    assert {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()} == {
        "MEMORY.md": "",
        "USER.md": "",
    }
    assert _no_database(home)


def test_show_on_an_empty_home_finds_no_memory_and_says_why(home: Path) -> None:
    result = run(home, "show", "1")
    assert result.exit_code == 3
    assert result.stderr.startswith("Error: no memory with id 1: nothing is remembered yet (")
    assert _no_database(home)


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (("backup", "copy.db"), "Error: nothing to back up: nothing is remembered yet ("),
        (("serve", "--no-open"), "Error: nothing to inspect: nothing is remembered yet ("),
        (("forget", "1"), "Error: no bowerbird database at "),
        (("maintain",), "Error: no bowerbird database at "),
    ],
)
def test_commands_that_need_a_store_say_there_is_none_yet(
    home: Path, args: tuple[str, ...], start: str
) -> None:
    result = run(home, *args)
    assert result.exit_code == 1
    assert result.stderr.startswith(start)
    assert "Traceback" not in result.output
    envelope = run_json(home, *args)
    assert (envelope["success"], envelope["command"]) == (False, args[0])
    assert _no_database(home)


def test_remember_show_update_forget_round_trip(home: Path) -> None:
    first = remember(
        home, "Quillstack uses SQLite in WAL mode", "--type", "decision", "--tags", "db, quillstack"
    )
    shown = run_json(home, "show", str(first))["data"]
    assert shown["memory"]["type"] == "decision"
    assert shown["memory"]["tags"] == ["db", "quillstack"]
    assert [a["action"] for a in shown["audit"]] == ["create"]

    updated = run_json(home, "update", str(first), "Quillstack uses PostgreSQL 16")
    assert updated["success"]
    assert updated["data"]["supersedes"] == first
    new_id = updated["data"]["memory"]["id"]
    old = run_json(home, "show", str(first))["data"]
    assert old["memory"]["superseded_by"] == new_id
    assert any(e["relation"] == "updates" and e["source_id"] == new_id for e in old["edges"])

    text = run(home, "show", str(first)).output
    assert f"superseded by #{new_id}" in text
    assert "history:" in text

    forgotten = run_json(home, "forget", str(new_id), "--reason", "wrong")
    assert forgotten["data"] == {"forgotten": new_id}
    listed = run_json(home, "list", "--all")["data"]
    assert new_id not in [m["id"] for m in listed["memories"]]


def _iso_utc(value: object) -> bool:
    return isinstance(value, str) and parse_iso(value) > 0 and value.endswith("+00:00")


def test_json_times_are_iso_utc_text(home: Path) -> None:
    first = remember(home, "Quillstack uses SQLite in WAL mode")
    run_json(home, "update", str(first), "Quillstack uses PostgreSQL 16")
    shown = run_json(home, "show", str(first))["data"]
    times = [
        shown["memory"]["created_at"],
        shown["memory"]["valid_until"],
        shown["edges"][0]["created_at"],
        *(a["created_at"] for a in shown["audit"]),
    ]
    assert [t for t in times if not _iso_utc(t)] == []


def test_recall_json_times_are_iso_utc_text(home: Path) -> None:
    remember(home, "Quillstack uses SQLite in WAL mode")
    results = run_json(home, "recall", "Quillstack SQLite")["data"]["results"]
    assert results
    assert [r["created_at"] for r in results if not _iso_utc(r["created_at"])] == []


@pytest.mark.parametrize(
    "args",
    [
        ("show", "999"),
        ("forget", "999"),
        ("update", "999", "x"),
        ("relate", "998", "999", "related_to"),
    ],
)
def test_unknown_id_exits_non_zero_with_a_clear_message(home: Path, args: tuple[str, ...]) -> None:
    remember(home, "I prefer Neovim")
    result = run(home, *args)
    assert result.exit_code == 3
    assert "no memory with id" in result.output
    envelope = run_json(home, *args)
    assert envelope["success"] is False
    assert envelope["data"]["error"]["type"] == "NotFoundError"


def test_relate_links_two_memories_and_rejects_unknown_relations(home: Path) -> None:
    a = remember(home, "We hit database is locked under concurrent syncs")
    b = remember(home, "We set busy_timeout to 5000 ms")
    envelope = run_json(home, "relate", str(b), str(a), "result_of")
    assert envelope["data"]["edge"]["relation"] == "result_of"
    assert "Linked" in run(home, "relate", str(a), str(b), "related_to").output
    bad = run(home, "relate", str(a), str(b), "loves")
    assert bad.exit_code == 2
    assert "loves" in bad.output
    envelope = run_json(home, "relate", str(a), str(b), "loves")
    assert envelope["success"] is False
    assert "loves" in envelope["data"]["error"]["message"]


def test_recall_finds_memories_and_explains_with_json(home: Path) -> None:
    remember(home, "The deploy target is a Hetzner VPS running Debian 12", "--type", "fact")
    remember(home, "I prefer concise answers", "--type", "preference")
    envelope = run_json(home, "recall", "Hetzner deploy target", "--explain", "--limit", "3")
    results = envelope["data"]["results"]
    assert results
    assert "Hetzner" in results[0]["content"]
    assert results[0]["signals"]
    text = run(home, "recall", "Hetzner deploy", "--explain").output
    assert "Hetzner" in text
    assert "why:" in text
    filtered = run_json(home, "recall", "Hetzner", "--type", "preference", "--no-episodes")["data"]
    assert all(r["type"] == "preference" for r in filtered["results"])


def test_recall_rejects_bad_time_and_empty_query(home: Path) -> None:
    remember(home, "anything at all")
    result = run(home, "recall", "x", "--since", "last tuesday-ish")
    assert result.exit_code == 1
    assert "cannot read time" in result.output
    assert run(home, "recall", "  ").exit_code == 1


def test_user_scopes_do_not_leak(home: Path) -> None:
    alice = run_json(home, "--user", "alice", "remember", "Alice's side project is Bluebird")
    assert alice["data"]["memory"]["scope"].startswith("user:alice~")
    bob = run_json(home, "--user", "bob", "recall", "Bluebird side project")["data"]
    assert bob["results"] == []
    assert run_json(home, "--user", "alice", "recall", "Bluebird side project")["data"]["results"]
    assert run(home, "--user", "bob", "show", str(alice["data"]["memory"]["id"])).exit_code == 3


def test_status_shows_counts_as_a_table_and_json(home: Path) -> None:
    remember(home, "I prefer pytest", "--type", "preference")
    remember(home, "Ship Quillstack 1.0 by March", "--type", "goal")
    data = run_json(home, "status")["data"]
    assert data["visible_memories"] == {"preference": 1, "goal": 1}
    assert data["journal_backlog"] == 0
    text = run(home, "status").output
    assert "memories" in text
    assert "preference" in text
    assert "goal" in text


def chat_lines(*records: object) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"


def test_malformed_import_is_rejected_with_line_number_and_nothing_written(
    home: Path, tmp_path: Path
) -> None:
    remember(home, "something already stored")
    before = run_json(home, "status")["data"]["counts"]
    path = tmp_path / "chat.jsonl"
    path.write_text(
        chat_lines(
            {"role": "user", "content": "I live in Lisbon", "session_id": "a"},
            {"role": "assistant", "content": "ok", "session_id": "a"},
            '{"role": "user", "content": broken}',
        ),
        encoding="utf-8",
    )
    result = run(home, "import", str(path))
    assert result.exit_code == 1
    assert "line 3" in result.output
    assert "not valid JSON" in result.output
    envelope = run_json(home, "import", str(path))
    assert envelope["success"] is False
    assert "line 3" in envelope["data"]["error"]["message"]
    assert run_json(home, "status")["data"]["counts"] == before


def test_malformed_import_creates_no_database(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "conv.json"
    path.write_text(
        '{"conversations": [{"sample_id": "x", "sessions": {"session_1": [{"speaker": "A"}]}}]}',
        encoding="utf-8",
    )
    result = run(home, "import", str(path))
    assert result.exit_code == 1
    assert "missing 'text'" in result.output
    assert not (home / "bowerbird" / "memory.db").exists()


def test_import_chat_log_journals_and_curates(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(
        chat_lines(
            {
                "role": "user",
                "content": "My name is Marcus Rivera and I live in Austin.",
                "session_id": "s1",
                "timestamp": "2025-05-15T09:12:00",
            },
            {"role": "assistant", "content": "Nice to meet you, Marcus.", "session_id": "s1"},
            {"role": "user", "content": "I prefer dark roast coffee.", "session_id": "s2"},
            {"role": "assistant", "content": "Noted.", "session_id": "s2"},
        ),
        encoding="utf-8",
    )
    data = run_json(home, "import", str(path))["data"]
    assert (data["format"], data["turns"], data["sessions"], data["curated"]) == ("jsonl", 2, 2, 2)
    status = run_json(home, "status")["data"]
    assert status["journal_backlog"] == 0
    assert status["counts"]["episodes"] >= 2
    hits = run_json(home, "recall", "where does Marcus live")["data"]["results"]
    assert any("Austin" in h["content"] for h in hits)
    again = run_json(home, "import", str(path))["data"]
    assert (again["turns"], again["skipped"]) == (0, 2)
    assert run_json(home, "status")["data"]["counts"] == status["counts"]


def test_import_markdown_memory_file(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("Project uses SQLite.\n§\nDeploys on Fridays.", encoding="utf-8")
    data = run_json(home, "import", str(path))["data"]
    assert (data["format"], data["entries"], data["imported"]) == ("markdown", 2, 2)
    again = run_json(home, "import", str(path))["data"]
    assert again["imported"] == 0
    assert again["skipped"] == 2


def test_export_jsonl_and_markdown(home: Path, tmp_path: Path) -> None:
    a = remember(home, "I prefer Helix as my editor", "--type", "preference")
    b = remember(home, "Quillstack uses SQLite", "--type", "decision")
    run(home, "relate", str(b), str(a), "related_to")
    out = tmp_path / "dump.jsonl"
    data = run_json(home, "export", "-o", str(out))["data"]
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert data["counts"] == {"memory": 2, "edge": 1}
    assert {r["kind"] for r in records} == {"memory", "edge"}
    piped = run(home, "export").output.splitlines()
    assert [json.loads(line)["id"] for line in piped if '"memory"' in line][:2] == [a, b]
    folder = tmp_path / "md"
    counts = run_json(home, "export", "--markdown", str(folder))["data"]["entries"]
    assert counts == {"USER.md": 1, "MEMORY.md": 1}
    assert (folder / "USER.md").read_text(encoding="utf-8") == "I prefer Helix as my editor"


def test_maintain_bulletin_doctor_and_backup(home: Path, tmp_path: Path) -> None:
    remember(home, "My name is Maya Okafor", "--type", "identity")
    remember(home, "Ship Quillstack 1.0 by the end of March", "--type", "goal")
    maintain = run_json(home, "maintain", "--dry-run")
    assert maintain["success"]
    assert maintain["data"]["dry_run"] is True
    bulletin = run_json(home, "bulletin", "--force")["data"]["bulletin"]
    assert "Maya" in bulletin["text"]
    assert "Maya" in run(home, "bulletin").output
    doctor = run_json(home, "doctor")
    assert doctor["success"]
    assert doctor["data"]["problems"] == []
    assert "All checks passed" in run(home, "doctor").output
    dest = tmp_path / "backup.db"
    assert run_json(home, "backup", str(dest))["data"]["bytes"] > 0
    again = run(home, "backup", str(dest))
    assert again.exit_code == 1
    assert "already exists" in again.output
    copy = run_json(home, "--db", str(dest), "list")["data"]
    assert copy["count"] == 2


def test_unknown_maintenance_job_is_a_clear_error(home: Path) -> None:
    remember(home, "anything")
    result = run(home, "maintain", "polish-the-silver")
    assert result.exit_code == 1
    assert "polish-the-silver" in result.output


def test_reindex_without_a_model_says_why(home: Path) -> None:
    remember(home, "anything")
    result = run(home, "reindex")
    assert result.exit_code == 1
    assert "embedding" in result.output.lower()


def test_hermes_install_and_uninstall(home: Path) -> None:
    (home / "config.yaml").write_text(
        "model: gpt\nmemory:\n  provider: holographic\n", encoding="utf-8"
    )
    installed = run_json(home, "hermes-install")["data"]
    assert installed["previous_provider"] == "holographic"
    assert (home / "plugins" / "bowerbird" / "cli.py").exists()
    assert "provider: bowerbird" in (home / "config.yaml").read_text(encoding="utf-8")
    removed = run_json(home, "hermes-uninstall")["data"]
    assert removed["restored_provider"] == "holographic"
    assert "provider: holographic" in (home / "config.yaml").read_text(encoding="utf-8")


def test_hermes_bridge_routes_argparse_to_click(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in KEYWORD_ONLY.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HERMES_HOME", str(home))
    parser = argparse.ArgumentParser(prog="hermes")
    sub = parser.add_subparsers(dest="command").add_parser("bowerbird")
    hermes_cli_bridge.register_cli(sub)

    args = parser.parse_args(
        ["bowerbird", "--json", "remember", "I prefer tabs", "--type", "preference"]
    )
    assert args.func(args) == 0
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["command"] == "remember"
    assert envelope["data"]["memory"]["scope"] == "profile:default"

    args = parser.parse_args(["bowerbird", "show", "999"])
    with pytest.raises(SystemExit) as info:
        args.func(args)
    assert info.value.code == 3
    assert "no memory with id 999" in capsys.readouterr().err

    args = parser.parse_args(["bowerbird", "help", "recall"])
    assert args.func(args) == 0
    assert "--explain" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7d", 1_000_000.0 - 7 * 86400),
        ("12h", 1_000_000.0 - 12 * 3600),
        ("2w", 1_000_000.0 - 14 * 86400),
        ("1700000000", 1_700_000_000.0),
        ("2023-11-14T22:13:20Z", 1_700_000_000.0),
        (None, None),
    ],
)
def test_parse_time(value: str | None, expected: float | None) -> None:
    assert parse_time(value, 1_000_000.0) == expected


def test_hermes_discovers_the_installed_cli_and_runs_it(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_plugins = pytest.importorskip("plugins.memory")
    for key, value in KEYWORD_ONLY.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HERMES_HOME", str(home))
    assert run(home, "hermes-install").exit_code == 0
    commands = memory_plugins.discover_plugin_cli_commands()
    assert [c["name"] for c in commands] == ["bowerbird"]
    parser = argparse.ArgumentParser(prog="hermes")
    sub = parser.add_subparsers(dest="command").add_parser("bowerbird")
    commands[0]["setup_fn"](sub)
    args = parser.parse_args(["bowerbird", "--json", "remember", "Deploys happen on Fridays"])
    assert args.func(args) == 0
    envelope = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert envelope["success"]
    assert (home / "bowerbird" / "memory.db").exists()
