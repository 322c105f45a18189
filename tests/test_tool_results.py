"""Tool results: a tool's message is never stored by itself; what the assistant quotes of it, and a subagent's result,
are redacted and screened like any text (a secret and a payload inside a tool result, through every hook)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_bowerbird.curation.summary import durable_points
from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.types import ItemKind

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SECRETS = [
    json.loads(line)
    for line in (FIXTURES / "secrets_corpus.jsonl").read_text().splitlines()
    if line
]
PAYLOADS = [
    json.loads(line)
    for line in (FIXTURES / "poisoning_corpus.jsonl").read_text().splitlines()
    if line
]
CHOSEN_SECRETS = [
    r
    for r in SECRETS
    if r["form"]
    in (
        "env_db_password",
        "cookie_header",
        "github_pat",
        "jwt",
        "docker_login_flag",
        "k8s_secret_data",
    )
]
CHOSEN_PAYLOADS = [
    p for p in PAYLOADS if p["kind"] in ("closing_fence", "exfil_image", "chatml_token")
] + [  # the first call shape and planted order
    next(p for p in PAYLOADS if p["kind"] == kind) for kind in ("tool_call_json", "standing_order")
]
TOOL_ONLY = "The build log of the quartermaster pipeline lists zebrafinch as the last stage."
ENV = {
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "BOWERBIRD_IMPORT_MARKDOWN": "false",
}


def _tool_result(n: int) -> str:
    secret, payload = (
        CHOSEN_SECRETS[n % len(CHOSEN_SECRETS)],
        CHOSEN_PAYLOADS[n % len(CHOSEN_PAYLOADS)],
    )
    return f"HTTP 200\n{secret['text']}\n{payload['text']}"


def _conversation(n: int) -> list[dict[str, object]]:
    result = _tool_result(n)
    return [
        {"role": "user", "content": f"Please fetch the settings page number {n}."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"c{n}",
                    "type": "function",
                    "function": {"name": "web_fetch", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"{result}\n{TOOL_ONLY}"},
        {"role": "assistant", "content": f"The page returned:\n{result}"},
    ]


@pytest.fixture(scope="module")
def session(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[BowerbirdProvider, Path, list[str]]]:
    home = tmp_path_factory.mktemp("hermes")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in ENV.items():
            patch.setenv(key, value)
        provider = BowerbirdProvider()
        provider.initialize("t1", hermes_home=str(home), platform="cli")
        messages: list[dict[str, object]] = []
        count = max(len(CHOSEN_SECRETS), len(CHOSEN_PAYLOADS))
        # sync_turn gets the messages with the tool results, as the host sends them
        for n in range(count):
            turn = _conversation(n)
            messages += turn
            provider.sync_turn(str(turn[0]["content"]), str(turn[-1]["content"]), messages=messages)
        # turns sync_turn never saw: they reach the store at compression/end
        for n in range(count, 2 * count):
            messages += _conversation(n)
        handed = [provider.on_pre_compress(messages, require_checkpoint=True)]
        provider.on_session_end(messages)
        for n in range(count):
            provider.on_delegation(
                f"Fetch settings page {n}", _tool_result(n), child_session_id=f"child-{n}"
            )
        assert provider.engine is not None and provider.engine.flush(60)
        provider.on_session_switch("fresh")
        handed += [provider.system_prompt_block()]
        handed += [provider.prefetch(f"what did settings page {n} return") for n in range(count)]
        yield provider, home, handed
        provider.shutdown()


def _files(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file()]


@pytest.mark.parametrize("row", CHOSEN_SECRETS, ids=lambda r: r["form"])
def test_no_secret_of_a_tool_result_is_on_disk(
    session: tuple[BowerbirdProvider, Path, list[str]], row: dict[str, str]
) -> None:
    _, home, _ = session
    assert [p.name for p in _files(home) if row["secret"].encode() in p.read_bytes()] == []


@pytest.mark.parametrize("row", CHOSEN_SECRETS, ids=lambda r: r["form"])
def test_no_secret_of_a_tool_result_is_handed_back(
    session: tuple[BowerbirdProvider, Path, list[str]], row: dict[str, str]
) -> None:
    _, _, handed = session
    assert [t for t in handed if row["secret"] in t] == []


@pytest.mark.parametrize("payload", CHOSEN_PAYLOADS, ids=lambda p: p["kind"])
def test_no_payload_of_a_tool_result_is_handed_back(
    session: tuple[BowerbirdProvider, Path, list[str]], payload: dict[str, str]
) -> None:
    _, _, handed = session
    assert [t for t in handed if payload["marker"] in t] == []


def test_tool_messages_are_not_stored_on_their_own(
    session: tuple[BowerbirdProvider, Path, list[str]],
) -> None:
    _, home, _ = session
    assert [p.name for p in _files(home) if b"zebrafinch" in p.read_bytes()] == []


def test_quoted_tool_payloads_were_stored_and_quarantined(
    session: tuple[BowerbirdProvider, Path, list[str]],
) -> None:
    provider, _, _ = session
    assert provider.engine is not None
    store = provider.engine.store
    episodes = [
        e
        for e in store.episodes.find(provider.visible)
        if any(p["marker"] in e.content for p in CHOSEN_PAYLOADS)
    ]
    held = set(store.quarantine.reasons(ItemKind.EPISODE))
    assert episodes and [e.id for e in episodes if e.id not in held] == []


@pytest.mark.parametrize("role", ["user", "assistant"])
@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: p["kind"])
def test_compression_points_leave_payloads_out(role: str, payload: dict[str, str]) -> None:
    assert payload["marker"] not in durable_points([{"role": role, "content": payload["text"]}])


def test_compression_points_never_read_a_tool_message() -> None:
    assert (
        durable_points(
            [{"role": "tool", "content": "I live in Porto and I work at Acme as a nurse."}]
        )
        == ""
    )
