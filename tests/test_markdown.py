"""MEMORY.md / USER.md: the host's § format read and written exactly, bad files refused, limits kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_bowerbird import markdown
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.errors import InvalidInputError
from hermes_bowerbird.options import RememberOptions
from hermes_bowerbird.types import MemoryType, Source


@pytest.mark.parametrize(
    "text, entries",
    [
        (
            "Project uses SQLite.\n§\nDeploys on Fridays.",
            ["Project uses SQLite.", "Deploys on Fridays."],
        ),
        ("One entry\nspanning lines", ["One entry\nspanning lines"]),
        ("a\r\n§\r\nb", ["a", "b"]),
        ("", []),
        ("\n§\n\n§\n", []),
        ("uses § inline\n§\nnext", ["uses § inline", "next"]),
    ],
)
def test_split_entries(text: str, entries: list[str]) -> None:
    assert markdown.split_entries(text) == entries


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\x00\x01binary", "binary"),
        (b"\xff\xfe not utf-8", "not UTF-8"),
    ],
)
def test_bad_files_are_refused_and_nothing_is_written(
    engine: Bowerbird, tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(content)
    with pytest.raises(InvalidInputError, match=message):
        markdown.import_file(engine, path, scope="profile:default")
    assert engine.store.health.counts()["memories"] == 0


def test_import_is_idempotent_and_typed_by_file(engine: Bowerbird, tmp_path: Path) -> None:
    (tmp_path / "USER.md").write_text("Name is Ada.\n§\nPrefers dark mode in every editor.")
    for expected in (2, 0):
        report = markdown.import_file(engine, tmp_path / "USER.md", scope="profile:default")
        assert report.imported == expected
    types = {m.type for m in engine.store.memories.find()}
    assert types <= {MemoryType.IDENTITY, MemoryType.PREFERENCE, MemoryType.GOAL}
    assert {m.source for m in engine.store.memories.find()} == {Source.IMPORT}


def test_export_round_trips_and_respects_the_host_limits(engine: Bowerbird, tmp_path: Path) -> None:
    for i in range(60):
        engine.remember(
            f"Service {i} runs on port {8000 + i} behind the gateway.",
            scope="profile:default",
            options=RememberOptions(type=MemoryType.FACT),
        )
    engine.remember(
        "Name is Ada.", scope="profile:default", options=RememberOptions(type=MemoryType.IDENTITY)
    )
    counts = markdown.export_markdown(
        engine, tmp_path / "out", scopes=["profile:default"], within_limits=True
    )
    memory_text = (tmp_path / "out" / "MEMORY.md").read_text()
    assert len(memory_text) <= markdown.HOST_LIMITS["memory"]
    assert not memory_text.endswith("\n")
    assert (tmp_path / "out" / "USER.md").read_text() == "Name is Ada."
    assert counts["MEMORY.md"] == len(markdown.split_entries(memory_text)) < 60
    full = markdown.export_markdown(engine, tmp_path / "all", scopes=["profile:default"])
    assert full["MEMORY.md"] == 60
