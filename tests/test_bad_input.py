"""Bad input gets one clear error and loses nothing: surrogates, NULs, huge ids, odd files, broken JSONL."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hermes_bowerbird import importers
from hermes_bowerbird.cli import cli
from hermes_bowerbird.errors import InvalidInputError
from hermes_bowerbird.explain import describe
from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.sanitize import storable

ENV = {
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "HF_HUB_OFFLINE": "1",
}


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
    ("text", "expected"),
    [
        ("caf\udce9 au lait", "caf\ufffd au lait"),
        ("\ud83d\ude00 pair", "\U0001f600 pair"),
        ("lone high \ud800 end", "lone high \ufffd end"),
        ("nul\x00byte", "nulbyte"),
        ("plain text", "plain text"),
    ],
)
def test_storable_replaces_surrogates_and_drops_nuls(text: str, expected: str) -> None:
    assert storable(text) == expected


def test_a_turn_with_a_lone_surrogate_is_journaled_not_dropped(home: Path) -> None:
    provider = BowerbirdProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    provider.sync_turn("My badge number is 4471 \udcff and my desk is C\x00-12.", "Noted \ud800.")
    assert provider.engine is not None
    texts = [
        (e.user_content, e.assistant_content) for e in provider.engine.store.journal.pending(10)
    ]
    provider.shutdown()
    assert texts == [("My badge number is 4471 \ufffd and my desk is C-12.", "Noted \ufffd.")]


def test_multimodal_turn_content_is_journaled_as_its_text(home: Path) -> None:
    provider = BowerbirdProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    provider.sync_turn([{"type": "text", "text": "I use Helix."}], None)
    assert provider.engine is not None
    texts = [e.user_content for e in provider.engine.store.journal.pending(10)]
    provider.shutdown()
    assert texts == ["I use Helix."]


def test_non_utf8_argv_is_stored_with_replacement_characters(home: Path) -> None:
    stored = json.loads(_run(home, "--json", "remember", "My caf\udce9 is Blue Bottle").stdout)
    assert stored["data"]["memory"]["content"] == "My caf\ufffd is Blue Bottle"


def test_non_utf8_query_recalls(home: Path) -> None:
    _run(home, "remember", "The Blue Bottle cafe opens at seven")
    found = json.loads(_run(home, "--json", "recall", "Blue Bottle caf\udce9").stdout)
    assert found["data"]["results"][0]["content"] == "The Blue Bottle cafe opens at seven"


@pytest.mark.parametrize("command", ["show", "forget"])
def test_huge_ids_are_a_clear_usage_error(home: Path, command: str) -> None:
    _run(home, "remember", "anything at all")
    result = _run(home, command, str(10**30))
    assert result.exit_code == 2
    assert "is not in the range" in result.output


def test_huge_tool_ids_name_the_problem(home: Path) -> None:
    provider = BowerbirdProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    answer = json.loads(provider.handle_tool_call("bowerbird_forget", {"id": 10**30}))
    provider.shutdown()
    assert answer == {"error": "'id' is out of range (no record has such an id)"}


def test_import_refuses_a_device(home: Path) -> None:
    result = _run(home, "import", "/dev/zero", "--format", "jsonl")
    assert result.exit_code == 1
    assert "not a regular file" in result.stderr


def test_import_refuses_a_fifo_without_hanging(home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "chat.jsonl"
    os.mkfifo(fifo)
    env = {**os.environ, **ENV}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "hermes_bowerbird.cli",
            "--hermes-home",
            str(home),
            "import",
            str(fifo),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 1
    assert "not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


def test_import_refuses_a_folder(home: Path, tmp_path: Path) -> None:
    result = _run(home, "import", str(tmp_path))
    assert result.exit_code == 2
    assert "is a directory" in result.output


def test_import_files_over_the_bound_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("x" * 11, encoding="utf-8")
    with pytest.raises(InvalidInputError, match="11 bytes; files over 10 bytes"):
        importers.check_import_file(path, limit=10)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b'{"role": "user", "content": "hi"}\n{"role": "user", "content": "\xff\xfe"}\n',
            "line 2: not valid UTF-8",
        ),
        (b'{"role": "user", "content": "hi"}\n\n{"role": "user"', "line 3: not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "line 1: JSON nested too deeply"),
        (
            b'{"role": "user", "content": "hi", "timestamp": NaN}\n',
            "line 1: 'timestamp' nan is out of range",
        ),
        (
            b'{"role": "user", "content": "hi", "timestamp": 1e400}\n',
            "line 1: 'timestamp' inf is out of range",
        ),
    ],
)
def test_jsonl_errors_name_their_line(
    home: Path, tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(content)
    result = _run(home, "import", str(path))
    assert result.exit_code == 1
    assert message in result.stderr


def test_a_failed_import_writes_nothing(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(b'{"role": "user", "content": "I live in Porto"}\n{"role": 7}\n')
    _run(home, "remember", "anything at all")
    _run(home, "import", str(path))
    status = json.loads(_run(home, "--json", "status").stdout)
    assert status["data"]["journal"] == {}


@pytest.mark.parametrize(
    "messages",
    [
        None,
        5,
        "not a list",
        [None, 3, "x", {"role": "user"}],
        [{"role": "user", "content": {"nested": 1}}],
    ],
)
def test_pre_compress_with_malformed_messages_returns_text(home: Path, messages: object) -> None:
    provider = BowerbirdProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    summary = provider.on_pre_compress(messages)
    provider.shutdown()
    assert isinstance(summary, str)


@pytest.mark.parametrize(
    ("error", "sentence"),
    [
        (
            sqlite3.OperationalError("attempt to write a readonly database"),
            "the memory database is read-only (the file or its folder cannot be written)",
        ),
        (
            sqlite3.OperationalError("database is locked"),
            "the memory database is busy (another process holds a write lock); try again shortly",
        ),
        (
            sqlite3.DatabaseError("database disk image is malformed"),
            "the memory database is damaged; run `bowerbird doctor --repair`",
        ),
        (
            PermissionError(13, "Permission denied", "/x/memory.db"),
            "/x/memory.db: permission denied",
        ),
        (
            OverflowError("Python int too large to convert to SQLite INTEGER"),
            "an unexpected OverflowError occurred: Python int too large to convert to SQLite INTEGER",
        ),
        (InvalidInputError("the query is empty"), "the query is empty"),
    ],
)
def test_errors_are_described_in_one_sentence(error: BaseException, sentence: str) -> None:
    assert describe(error) == sentence
