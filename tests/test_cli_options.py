"""The global options work on either side of every command's name, from one definition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hermes_homes import KEYWORD_ONLY

from hermes_bowerbird.cli import GLOBAL_NAMES, State, cli

# no home or database from the environment: each test names its own
OFFLINE: dict[str, str | None] = {**KEYWORD_ONLY, "HERMES_HOME": None, "BOWERBIRD_DB_PATH": None}

# Arguments that let each command run up to opening its files. Paths below "blocker" (a plain file) cannot be
# created, so every command stops early with a JSON error envelope instead of doing its work.
COMMAND_ARGS: dict[str, list[str]] = {
    "status": [],
    "recall": ["tea"],
    "remember": ["Priya drinks tea"],
    "relate": ["1", "2", "related_to"],
    "update": ["1", "Priya drinks coffee"],
    "forget": ["1"],
    "show": ["1"],
    "list": [],
    "import": ["{chat}"],
    "export": [],
    "maintain": [],
    "bulletin": [],
    "reindex": [],
    "doctor": [],
    "backup": ["{tmp}/copy.db"],
    "hermes-install": [],
    "hermes-uninstall": [],
    "demo": ["--fixture", "{chat}"],
    "mcp": [],
    "release": ["1"],
    "serve": ["--no-open", "--port", "0"],
    "migrate": [],
    "store": ["copy", "--to", "{tmp}/copy2.db"],
}
# what the envelope of a command of a group is named
ENVELOPE_NAMES = {"store": "store copy"}
SIDES = ["before", "after"]


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, Path]:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder would have to be")
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"role": "user", "content": "I drink tea"}\n', encoding="utf-8")
    return {"db": blocker / "memory.db", "home": blocker / "home", "chat": chat, "tmp": tmp_path}


def _global_args(paths: dict[str, Path]) -> list[str]:
    return [
        "--json",
        "--db",
        str(paths["db"]),
        "--hermes-home",
        str(paths["home"]),
        "--user",
        "alice",
        "--profile",
        "work",
    ]


def _invoke(args: list[str], state: State | None = None) -> Result:
    return CliRunner().invoke(cli, args, obj=state, env=OFFLINE, catch_exceptions=False)


def _command_line(name: str, paths: dict[str, Path], side: str) -> list[str]:
    args = [a.format(chat=paths["chat"], tmp=paths["tmp"]) for a in COMMAND_ARGS[name]]
    options = _global_args(paths)
    return [*options, name, *args] if side == "before" else [name, *args, *options]


def test_the_table_names_every_command() -> None:
    assert set(COMMAND_ARGS) == set(cli.commands)


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_command_declares_the_global_options(name: str) -> None:
    declared = {param.name for param in cli.commands[name].params}
    assert set(GLOBAL_NAMES) <= declared


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("name", sorted(COMMAND_ARGS))
def test_global_options_reach_the_command_on_either_side(
    name: str, side: str, paths: dict[str, Path]
) -> None:
    state = State()
    _invoke(_command_line(name, paths, side), state)
    assert (state.db, state.hermes_home, state.user, state.profile, state.json_mode) == (
        paths["db"],
        paths["home"],
        "alice",
        "work",
        True,
    )


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("name", sorted(COMMAND_ARGS))
def test_json_after_or_before_gives_one_envelope_named_after_the_command(
    name: str, side: str, paths: dict[str, Path]
) -> None:
    envelope = json.loads(_invoke(_command_line(name, paths, side)).output)
    assert envelope["command"] == ENVELOPE_NAMES.get(name, name)


# -- on a real store ---------------------------------------------------------------------------------------------
@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "hermes"
    folder.mkdir()
    for user, text in (
        ("alice", "Alice keeps bees on her roof"),
        ("bob", "Bob keeps bees in the orchard"),
    ):
        assert (
            _invoke(["--hermes-home", str(folder), "--user", user, "remember", text]).exit_code == 0
        )
    return folder


def _recall(home: Path, *args: str) -> dict[str, Any]:
    result = _invoke(["recall", "bees", *args, "--hermes-home", str(home)])
    return dict(json.loads(result.output)["data"])


def test_recall_with_json_and_user_after_the_query(home: Path) -> None:
    data = _recall(home, "--json", "--user", "alice")
    assert [r["content"] for r in data["results"]] == ["Alice keeps bees on her roof"]


def test_a_value_after_the_command_name_wins_over_one_before(home: Path) -> None:
    result = _invoke(
        ["--user", "bob", "recall", "bees", "--json", "--user", "alice", "--hermes-home", str(home)]
    )
    assert [r["content"] for r in json.loads(result.output)["data"]["results"]] == [
        "Alice keeps bees on her roof"
    ]


def test_a_value_before_the_command_name_still_counts(home: Path) -> None:
    result = _invoke(["--user", "bob", "--json", "recall", "bees", "--hermes-home", str(home)])
    assert [r["content"] for r in json.loads(result.output)["data"]["results"]] == [
        "Bob keeps bees in the orchard"
    ]


def test_a_usage_error_after_json_is_a_json_envelope(home: Path) -> None:
    result = _invoke(["recall", "bees", "--json", "--limit", "many", "--hermes-home", str(home)])
    assert json.loads(result.output)["success"] is False


def test_json_given_as_an_argument_after_double_dash_is_text(home: Path) -> None:
    result = _invoke(["--hermes-home", str(home), "remember", "--", "--json"])
    assert result.output.startswith("Stored #")


def test_verbose_after_the_command_logs_at_info(home: Path) -> None:
    state = State()
    _invoke(["status", "-v", "--hermes-home", str(home)], state)
    assert state.verbose == 1


def test_completion_script_for_bash_is_generated() -> None:
    result = CliRunner().invoke(
        cli, [], prog_name="bowerbird", env={"_BOWERBIRD_COMPLETE": "bash_source"}
    )
    assert "_BOWERBIRD_COMPLETE=bash_complete" in result.output
