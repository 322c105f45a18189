"""Chat-log and LoCoMo importers: validation with line numbers, turn pairing, all-or-nothing journaling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_bowerbird import importers
from hermes_bowerbird.config import build_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.errors import InvalidInputError
from hermes_bowerbird.types import Source


def write_lines(path: Path, records: list[object]) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n",
        encoding="utf-8",
    )
    return path


def msg(
    role: str, content: str, session: str = "s1", ts: object = "2025-05-15T09:12:00"
) -> dict[str, object]:
    return {"role": role, "content": content, "timestamp": ts, "session_id": session}


def test_chat_log_pairs_user_and_assistant_messages_per_session(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "chat.jsonl",
        [
            msg("user", "I'm Marcus."),
            msg("assistant", "Hi Marcus."),
            msg("system", "ignored"),
            msg("user", "I live in Austin."),
            msg("user", "Near the lake."),
            msg("assistant", "Nice."),
            msg("user", "New session here.", session="s2"),
        ],
    )
    plan = importers.parse_chat_jsonl(path)
    assert [(t.session_id, t.user, t.assistant) for t in plan.turns] == [
        ("s1", "I'm Marcus.", "Hi Marcus."),
        ("s1", "I live in Austin.\n\nNear the lake.", "Nice."),
        ("s2", "New session here.", ""),
    ]
    assert plan.sessions == 2
    assert plan.turns[0].created_at == pytest.approx(1747300320.0)


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"content": "no role"}', "missing 'role'"),
        ('{"role": "robot", "content": "x"}', "unknown role 'robot'"),
        ('{"role": "user", "content": 5}', "'content' must be a string"),
        ('{"role": "user", "content": "x", "timestamp": "yesterday"}', "cannot read timestamp"),
        (
            '{"role": "user", "content": "x", "session_id": ""}',
            "'session_id' must be a non-empty string",
        ),
    ],
)
def test_malformed_chat_line_is_reported_with_its_line_number(
    tmp_path: Path, bad_line: str, message: str
) -> None:
    path = write_lines(
        tmp_path / "chat.jsonl", [msg("user", "fine"), msg("assistant", "ok"), "", bad_line]
    )
    with pytest.raises(InvalidInputError) as info:
        importers.parse_chat_jsonl(path)
    assert "line 4" in str(info.value)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1700000000, 1700000000.0),
        (1700000000123, 1700000000.123),
        ("2023-11-14T22:13:20Z", 1700000000.0),
        ("2023-11-14T23:13:20+01:00", 1700000000.0),
        (None, None),
    ],
)
def test_timestamps_are_read_as_epoch_seconds(value: object, expected: float | None) -> None:
    assert importers._timestamp(value, "here") == (
        pytest.approx(expected) if expected is not None else None
    )


def locomo_dev(sessions: dict[str, object]) -> dict[str, object]:
    return {
        "category_names": {"1": "multi-hop"},
        "conversations": [
            {"sample_id": "conv-1", "speakers": ["Ann", "Bo"], "sessions": sessions, "qa": []}
        ],
    }


def test_locomo_dev_format_becomes_one_turn_per_line_in_session_order(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(
        json.dumps(
            locomo_dev(
                {
                    "session_2": [{"dia_id": "D2:1", "speaker": "Bo", "text": "Later."}],
                    "session_1": [
                        {"dia_id": "D1:1", "speaker": "Ann", "text": "Hi Bo!"},
                        {
                            "dia_id": "D1:2",
                            "speaker": "Bo",
                            "text": "Look.",
                            "blip_caption": "a dog",
                        },
                    ],
                }
            )
        ),
        encoding="utf-8",
    )
    plan = importers.parse_locomo(path)
    assert [(t.session_id, t.user) for t in plan.turns] == [
        ("conv-1/session_1", "Ann: Hi Bo!"),
        ("conv-1/session_1", "Bo: Look. [shares a photo: a dog]"),
        ("conv-1/session_2", "Bo: Later."),
    ]


def test_locomo_upstream_format_reads_session_dates(tmp_path: Path) -> None:
    path = tmp_path / "locomo10.json"
    path.write_text(
        json.dumps(
            [
                {
                    "sample_id": "conv-26",
                    "conversation": {
                        "speaker_a": "Caroline",
                        "speaker_b": "Melanie",
                        "session_1_date_time": "1:56 pm on 8 May, 2023",
                        "session_1": [
                            {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"}
                        ],
                    },
                    "qa": [],
                }
            ]
        ),
        encoding="utf-8",
    )
    plan = importers.parse_locomo(path)
    assert plan.turns[0].session_id == "conv-26/session_1"
    assert plan.turns[0].created_at == pytest.approx(1683554160.0)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"conversations": [\n  {"sample_id": "x",\n  }\n]}', "line 3"),
        ('{"conversations": []}', "expected a list of conversations"),
        (
            json.dumps(locomo_dev({"session_1": [{"speaker": "Ann"}]})),
            "session_1[0]: missing 'text'",
        ),
        (json.dumps(locomo_dev({"session_1": "nope"})), "expected a list of dialogue turns"),
        (json.dumps({"conversations": [{"sample_id": "x"}]}), "no 'sessions'"),
    ],
)
def test_malformed_locomo_file_is_rejected_with_its_location(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidInputError) as info:
        importers.parse_locomo(path)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("MEMORY.md", "a\n§\nb", "markdown"),
        ("log.jsonl", "{}", "jsonl"),
        ("data.json", "{}", "locomo"),
        (
            "export",
            '{"role": "user", "content": "x"}\n{"role": "assistant", "content": "y"}',
            "jsonl",
        ),
        ("export", '[{"sample_id": "x"}]', "locomo"),
    ],
)
def test_format_is_detected_from_name_then_content(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert importers.detect_format(path) == expected


def test_apply_plan_journals_every_turn_with_import_source(tmp_path: Path) -> None:
    config = build_config(tmp_path, {"embedding_backend": "none", "llm_backend": "none"})
    engine = Bowerbird(config, background=False)
    try:
        path = write_lines(
            tmp_path / "chat.jsonl",
            [
                msg("user", "I'm Marcus."),
                msg("assistant", "Hi."),
                msg("user", "Bye.", session="s2"),
            ],
        )
        plan = importers.parse_chat_jsonl(path)
        assert importers.apply_plan(engine, plan, scope="profile:default") == importers.ApplyReport(
            2, 0
        )
        rows = engine.store.journal.pending(limit=10)
        assert [(r.session_id, r.turn_index, r.source) for r in rows] == [
            ("s1", 0, Source.IMPORT),
            ("s2", 0, Source.IMPORT),
        ]
        assert rows[0].created_at == pytest.approx(1747300320.0)
        assert importers.apply_plan(engine, plan, scope="profile:default") == importers.ApplyReport(
            0, 2
        )
        assert len(engine.store.journal.pending(limit=10)) == 2
    finally:
        engine.shutdown()
