"""`bowerbird demo` end to end: the shipped conversation through the real provider hooks, offline, under 60 s."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_bowerbird.cli import cli
from hermes_bowerbird.demo import default_fixture, load_script, run_demo

pytestmark = pytest.mark.slow


def test_shipped_fixture_is_a_realistic_multi_session_conversation() -> None:
    script = load_script(default_fixture())
    assert 3 <= len(script.sessions) <= 5
    assert 20 <= sum(len(s.turns) for s in script.sessions) <= 35
    assert len({s.session_id for s in script.sessions}) == len(script.sessions)
    assert script.questions


def test_demo_replays_and_shows_capture_recall_supersession_and_bulletin(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["--json", "demo", "--keep", str(tmp_path / "home")],
        env={"GEMINI_API_KEY": "", "HF_HUB_OFFLINE": "1"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.output.splitlines()[-1])
    assert envelope["command"] == "demo" and envelope["success"] is True
    data = envelope["data"]
    assert data["turns"] == 25
    assert data["seconds"] < 60
    assert {"identity", "decision", "todo", "preference", "goal"} <= set(data["captured"])
    moved = [s for s in data["superseded"] if "Lisbon" in s["old"]]
    assert moved and "Berlin" in moved[0]["new"]
    where = next(r for r in data["recall"] if r["question"] == "Where do I live now?")
    assert any("Berlin" in hit["content"] for hit in where["results"])
    assert all("signals" in hit for r in data["recall"] for hit in r["results"])
    assert "Berlin" in data["bulletin"] and "Lisbon" not in data["bulletin"]
    # open items closed by what the user said later: a todo done, a choice made, a bug fixed
    for stale, closing in (
        ("TODO: add rate limiting", "is done"),
        ("I'm comparing PostgreSQL and SQLite", "We decided to use SQLite"),
        ("We hit a bug", "We fixed the locking error"),
    ):
        successors = [s["new"] for s in data["superseded"] if s["old"].startswith(stale)]
        assert len(successors) == 1 and closing in successors[0], (stale, successors)
        assert stale not in data["bulletin"]
    assert (tmp_path / "home" / "bowerbird" / "memory.db").exists()


def test_demo_prints_every_section_and_restores_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "must-not-be-used")
    monkeypatch.setenv("HERMES_HOME", "/nonexistent/hermes")
    before = dict(os.environ)
    lines: list[str] = []
    data = run_demo(echo=lines.append)
    text = "\n".join(lines)
    for heading in (
        "Captured memories by type",
        "Recall (top 3",
        "Superseded facts",
        "Bulletin",
        "Done in",
    ):
        assert heading in text
    assert "why:" in text and "superseded by #" in text
    assert dict(os.environ) == before
    assert not Path(str(data["home"])).exists()
