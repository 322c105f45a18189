"""No secret of the corpus reaches the disk: a whole session through the provider hooks, then a byte search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_bowerbird.cli import cli
from hermes_bowerbird.provider import BowerbirdProvider

CORPUS = [
    json.loads(line)
    for line in (Path(__file__).resolve().parent / "fixtures" / "secrets_corpus.jsonl")
    .read_text()
    .splitlines()
    if line
]
SECRETS = sorted({row["secret"] for row in CORPUS})
TWINS = [row for row in CORPUS if "twin" in row]
ENV = {
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
}


def _session(home: Path) -> tuple[BowerbirdProvider, list[str]]:
    """Every storing path once per corpus sentence; returns the provider and the texts handed back to the host."""
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("\n§\n".join(row["text"] for row in CORPUS[:12]))
    provider = BowerbirdProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli")
    messages: list[dict[str, str]] = []
    for n, row in enumerate(CORPUS):
        user, assistant = (
            (row["text"], "Got it.")
            if row["role"] == "user"
            else ("Set it up please.", row["text"])
        )
        provider.sync_turn(user, f"{assistant}\n\nTool output:\n{row['text']}")
        messages += [
            {"role": "user", "content": user},
            {"role": "assistant", "content": assistant},
            {"role": "tool", "content": row["text"]},
        ]
        provider.on_memory_write("add", "memory" if n % 2 else "user", row["text"])
        stored = json.loads(
            provider.handle_tool_call("bowerbird_remember", {"content": f"Note {n}: {row['text']}"})
        )
        provider.handle_tool_call(
            "bowerbird_update",
            {"id": stored["stored"]["id"], "content": f"Note {n} again: {row['text']}"},
        )
    for row in TWINS:  # the benign look-alike of each flag and config form, said on its own
        if row["role"] == "user":
            provider.sync_turn(row["twin"], "Got it.")
        else:
            provider.sync_turn("Show me how.", row["twin"])
    handed_back = [
        provider.on_pre_compress([*messages[:40], {"role": "user", "content": "I am new, hi"}])
    ]
    provider.on_session_end(messages)
    handed_back += [
        provider.system_prompt_block(),
        *(provider.prefetch(f"what is my {row['form'].replace('_', ' ')}") for row in CORPUS[:10]),
    ]
    return provider, handed_back


@pytest.fixture(scope="module")
def finished_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    home = tmp_path_factory.mktemp("hermes")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in ENV.items():
            patch.setenv(key, value)
        provider, handed_back = _session(home)
        assert provider.engine is not None and provider.engine.flush(60)
        runner = CliRunner()
        for args in (
            ["export", "-o", str(home / "exports" / "all.jsonl")],
            ["export", "--markdown", str(home / "exports" / "md")],
        ):
            result = runner.invoke(
                cli, ["--hermes-home", str(home), *args], env=ENV, catch_exceptions=False
            )
            assert result.exit_code == 0, result.output
        provider.shutdown()
    return home, handed_back


def _stored_files(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file() and p.parent.name != "memories"]


def test_the_session_wrote_a_database_and_exports(finished_home: tuple[Path, list[str]]) -> None:
    home, _ = finished_home
    names = {p.name for p in _stored_files(home)}
    assert {"memory.db", "all.jsonl", "MEMORY.md", "USER.md"} <= names


@pytest.mark.parametrize("secret", SECRETS)
def test_no_file_holds_the_secret(finished_home: tuple[Path, list[str]], secret: str) -> None:
    home, _ = finished_home
    needle = secret.encode()
    assert [p.name for p in _stored_files(home) if needle in p.read_bytes()] == []


@pytest.mark.parametrize("secret", SECRETS)
def test_no_text_handed_to_the_host_holds_the_secret(
    finished_home: tuple[Path, list[str]], secret: str
) -> None:
    _, handed_back = finished_home
    assert [t for t in handed_back if secret in t] == []


def test_the_session_stored_the_harmless_parts(finished_home: tuple[Path, list[str]]) -> None:
    home, _ = finished_home
    assert b"sshpass" in (home / "exports" / "all.jsonl").read_bytes()


def _exported_turns(home: Path) -> list[str]:
    records = [
        json.loads(line) for line in (home / "exports" / "all.jsonl").read_text().splitlines()
    ]
    return [r["content"] for r in records if r.get("kind") == "episode"]


@pytest.mark.parametrize("row", TWINS, ids=lambda r: r["form"])
def test_the_benign_twin_is_stored_verbatim(
    finished_home: tuple[Path, list[str]], row: dict[str, str]
) -> None:
    home, _ = finished_home
    assert [t for t in _exported_turns(home) if row["twin"].strip() in t] != []
