"""Language-model backends against local stubs: the host's call_llm (OpenAI-compatible) and Gemini (google-genai)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from gemini_stub import GeminiStub
from openai_stub import OpenAIStub, Reply, write_hermes_config

from hermes_bowerbird.config import build_config
from hermes_bowerbird.errors import LLMBudgetExceeded, LLMError
from hermes_bowerbird.llm.budget import BudgetedLLM
from hermes_bowerbird.llm.gemini import GeminiLLM
from hermes_bowerbird.llm.host import HostLLM, response_text
from hermes_bowerbird.llm.selection import select_llm
from hermes_bowerbird.store import Store

GOOD_JSON = (
    '{"decisions": [{"action": "add", "type": "fact", "content": "The user lives in Lisbon."}]}'
)


# -- the OpenAI-compatible stub itself (reused to drive the real host) ----------------------------------------


def test_stub_serves_models_plain_and_streaming_completions_and_tool_calls() -> None:
    from openai import OpenAI

    with OpenAIStub() as stub:
        client = OpenAI(base_url=stub.base_url, api_key="sk-fake", max_retries=0)
        assert [m.id for m in client.models.list()] == ["fake-model"]
        stub.script(
            Reply.of_text("hello there"),
            Reply.of_text("streamed words"),
            Reply.tool_call("memory", {"action": "add", "content": "x"}),
        )
        plain = client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "hi"}]
        )
        assert plain.choices[0].message.content == "hello there"
        chunks = client.chat.completions.create(
            model="fake-model", stream=True, messages=[{"role": "user", "content": "hi again"}]
        )
        assert (
            "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            == "streamed words"
        )
        tool = client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "save"}]
        )
        calls = tool.choices[0].message.tool_calls
        assert calls is not None and calls[0].type == "function"
        call = calls[0]
        assert (call.function.name, call.function.arguments) == (
            "memory",
            '{"action": "add", "content": "x"}',
        )
        assert tool.choices[0].finish_reason == "tool_calls"
        assert [b["messages"][0]["content"] for b in stub.chat_requests] == [
            "hi",
            "hi again",
            "save",
        ]
        assert stub.chat_requests[1]["stream"] is True


def test_stub_scripts_errors_and_delays() -> None:
    from openai import APITimeoutError, OpenAI, RateLimitError

    with OpenAIStub() as stub:
        client = OpenAI(base_url=stub.base_url, api_key="sk-fake", max_retries=0, timeout=0.3)
        stub.script(Reply.rate_limited(), Reply.slow(1.0))
        with pytest.raises(RateLimitError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
        with pytest.raises(APITimeoutError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "b"}])
        assert stub.pending_replies() == 0


# -- the host path: the real agent.auxiliary_client pointed at the stub -----------------------------------------


@pytest.fixture
def host_stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    """A HERMES_HOME whose config.yaml makes the host's main model a custom endpoint served by the stub."""
    aux = pytest.importorskip("agent.auxiliary_client")
    aux.shutdown_cached_clients()  # the host caches clients per provider across calls; start clean
    with OpenAIStub() as stub:
        home = tmp_path / "hermes"
        write_hermes_config(home, stub)
        monkeypatch.setenv("HERMES_HOME", str(home))
        for name in (
            "OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "ANTHROPIC_API_KEY",
            "NOUS_API_KEY",
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "OPENAI_BASE_URL",
        ):
            monkeypatch.delenv(name, raising=False)
        yield stub
    aux.shutdown_cached_clients()


def test_host_is_configured_and_answers(host_stub: OpenAIStub) -> None:
    assert HostLLM.configured()
    host_stub.script(Reply.of_text(GOOD_JSON))
    text = HostLLM().complete("extract this", system="you are careful", max_tokens=300, timeout=10)
    assert text == GOOD_JSON
    sent = host_stub.chat_requests[-1]
    assert sent["model"] == "fake-model"
    assert sent["messages"] == [
        {"role": "system", "content": "you are careful"},
        {"role": "user", "content": "extract this"},
    ]


def test_host_malformed_response_body_is_an_llm_error(host_stub: OpenAIStub) -> None:
    # the host may retry through its fallback chain: every answer is bad
    host_stub.default = Reply.malformed_json()
    with pytest.raises(LLMError):
        HostLLM().complete("x", timeout=5)


def test_host_timeout_is_an_llm_error(host_stub: OpenAIStub) -> None:
    host_stub.default = Reply.slow(3.0)
    started = time.monotonic()
    with pytest.raises(LLMError):
        HostLLM().complete("x", timeout=0.5)
    assert time.monotonic() - started < 10


def test_host_rate_limit_then_success(host_stub: OpenAIStub) -> None:
    host_stub.script(Reply.rate_limited(), Reply.of_text("after the limit"))
    assert HostLLM(wait_max=0.05).complete("x", timeout=5) == "after the limit"
    assert len(host_stub.chat_requests) == 2


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (
            SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="text"))]),
            "text",
        ),
        (
            SimpleNamespace(
                choices=[
                    SimpleNamespace(
                        message=SimpleNamespace(
                            content=[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
                        )
                    )
                ]
            ),
            "ab",
        ),
        (SimpleNamespace(choices=[]), None),
        (SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=None))]), None),
        ("not a response", None),
    ],
)
def test_response_text(response: object, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(LLMError):
            response_text(response)
    else:
        assert response_text(response) == expected


# -- the Gemini path ------------------------------------------------------------------------------------------


@pytest.fixture
def gemini() -> Iterator[GeminiStub]:
    with GeminiStub(api_key="good-key") as stub:
        yield stub


def _gemini(stub: GeminiStub, key: str = "good-key") -> GeminiLLM:
    return GeminiLLM(key, model="gemini-test", base_url=stub.url, attempts=3, wait_max=0.05)


def test_gemini_answers_with_json_mode_and_system_prompt(gemini: GeminiStub) -> None:
    gemini.replies.append(GOOD_JSON)
    assert (
        _gemini(gemini).complete("extract", system="be brief", json_mode=True, max_tokens=99)
        == GOOD_JSON
    )
    body = gemini.requests[-1].body
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert body["generationConfig"]["maxOutputTokens"] == 99
    assert body["systemInstruction"]["parts"][0]["text"] == "be brief"
    assert gemini.requests[-1].model == "gemini-test"


def test_gemini_rate_limit_then_success(gemini: GeminiStub) -> None:
    gemini.fail_next(1, status=429)
    gemini.replies.append("fine now")
    assert _gemini(gemini).complete("x") == "fine now"
    assert gemini.count(":generateContent") == 2


def test_gemini_server_errors_retry_then_give_up(gemini: GeminiStub) -> None:
    gemini.fail_always(503)
    with pytest.raises(LLMError):
        _gemini(gemini).complete("x")
    assert gemini.count(":generateContent") == 3


def test_gemini_auth_error_is_not_retried(gemini: GeminiStub) -> None:
    with pytest.raises(LLMError, match="authentication"):
        _gemini(gemini, key="revoked").complete("x")
    assert gemini.count(":generateContent") == 1


def test_gemini_timeout_is_retried_then_an_llm_error(gemini: GeminiStub) -> None:
    gemini.delay_seconds = 1.5
    started = time.monotonic()
    with pytest.raises(LLMError):
        _gemini(gemini).complete("x", timeout=0.3)
    assert time.monotonic() - started < 6
    assert gemini.count(":generateContent") >= 2


def test_gemini_returns_malformed_json_text_verbatim(gemini: GeminiStub) -> None:
    # the caller's parser decides; the backend does not guess
    gemini.replies.append('{"decisions": [')
    assert _gemini(gemini).complete("x", json_mode=True) == '{"decisions": ['


# -- the budget and selection -------------------------------------------------------------


class _Echo:
    """A trivial LLM for the budget: the budget is the unit under test, not the model."""

    name = "echo"

    def __init__(self) -> None:
        self.calls = 0

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 1024,
        json_mode: bool = False,
        timeout: float = 30.0,
    ) -> str:
        self.calls += 1
        return prompt


def test_budget_counts_calls_per_utc_day(tmp_path: Path) -> None:
    now = [1_750_000_000.0]  # 2025-06-15 15:06 UTC
    store = Store.open(tmp_path / "b.db", clock=lambda: now[0])
    inner = _Echo()
    llm = BudgetedLLM(inner, store, daily_budget=3, clock=lambda: now[0])
    assert [llm.complete(str(i)) for i in range(3)] == ["0", "1", "2"]
    with pytest.raises(LLMBudgetExceeded):
        llm.complete("one too many")
    assert inner.calls == 3 and llm.remaining() == 0
    now[0] += 9 * 3600  # past midnight UTC: a new day, a new budget
    assert llm.complete("tomorrow") == "tomorrow" and llm.calls_today() == 1
    reopened = BudgetedLLM(_Echo(), store, daily_budget=3, clock=lambda: now[0])
    assert reopened.remaining() == 2  # the count lives in the database, not the object
    store.close()


@pytest.mark.parametrize(
    ("values", "host", "expected"),
    [
        ({"llm_backend": "none", "gemini_api_key": "k"}, True, None),
        ({"llm_backend": "auto"}, True, "host:bowerbird"),
        ({"llm_backend": "auto", "gemini_api_key": "k"}, False, "gemini:gemini-2.5-flash"),
        ({"llm_backend": "auto"}, False, None),
        ({"llm_backend": "host", "gemini_api_key": "k"}, False, None),
        ({"llm_backend": "gemini", "gemini_api_key": "k"}, True, "gemini:gemini-2.5-flash"),
        ({"llm_backend": "gemini"}, True, None),
    ],
)
def test_select_llm(
    tmp_path: Path, values: dict[str, str], host: bool, expected: str | None
) -> None:
    config = build_config(tmp_path, values)
    llm = select_llm(config, host_configured=lambda: host)
    assert (llm.name if llm is not None else None) == expected


def test_select_llm_with_a_store_applies_the_budget(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    config = build_config(
        tmp_path, {"llm_backend": "gemini", "gemini_api_key": "k", "llm_daily_budget": "5"}
    )
    llm = select_llm(config, store, host_configured=lambda: False)
    assert (
        isinstance(llm, BudgetedLLM)
        and llm.remaining() == 5
        and llm.name == "gemini:gemini-2.5-flash"
    )
    store.close()
