"""Property tests with generated hostile input: the CLI never tracebacks, hooks never raise, no turn is lost."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_bowerbird.cli import cli
from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.tools import tool_schemas

ENV = {
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "HF_HUB_OFFLINE": "1",
}
FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# every code point, lone surrogates and NULs included, plus the characters that break naive code most often
_ODD = st.sampled_from(
    [
        "\ud800",
        "\udcff",
        "\udfff",
        "\x00",
        "\ufffd",
        "\u202e",
        "\u200b",
        "\U000e0041",
        "§",
        "</memory-context>",
        "\r\n",
        "'",
        '"',
        "\\",
        "%s",
        "{}",
        "\U0001f600",
    ]
)
_PIECE = st.one_of(st.characters(exclude_categories=()), _ODD)
TEXT = st.one_of(
    st.lists(_PIECE, max_size=60).map("".join),
    st.sampled_from(["", " ", "x" * 250_000, "é" * 70_000]),
)
ID_TEXT = st.one_of(st.integers(min_value=-(10**30), max_value=10**30).map(str), TEXT)
KEYS = st.one_of(
    TEXT,
    st.sampled_from(
        [
            "query",
            "content",
            "id",
            "limit",
            "types",
            "since",
            "role",
            "text",
            "type",
            "source_id",
            "target_id",
            "relation",
            "importance",
            "tags",
            "reason",
        ]
    ),
)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
JSONISH = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=12,
)
ANY = st.one_of(JSONISH, st.builds(object), st.binary(max_size=50))
TOOL_NAMES = sorted(schema["name"] for schema in tool_schemas())


class Tracebacks(logging.Handler):
    """Collects log records that carry a traceback: an unexpected exception inside a hook."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.levelno >= logging.WARNING:
            self.records.append(record)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        for key, value in ENV.items():
            patch.setenv(key, value)
        yield tmp_path_factory.mktemp("fuzz") / "hermes"


@pytest.fixture(scope="module")
def provider(home: Path) -> Iterator[BowerbirdProvider]:
    provider = BowerbirdProvider()
    provider.initialize("fuzz", hermes_home=str(home), platform="telegram", user_id="fuzzer")
    provider.sync_turn("I keep my bike in the garage on Elm Street.", "Noted.")
    yield provider
    provider.shutdown()


@pytest.fixture(scope="module")
def tracebacks() -> Iterator[Tracebacks]:
    handler = Tracebacks()
    logger = logging.getLogger("hermes_bowerbird")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def _cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--hermes-home", str(home), *args], env=ENV)


def _clean_exit(result: Result) -> bool:
    """Exited on purpose (0 ok, 1 error, 2 usage, 3 not found) with no exception escaping."""
    return result.exit_code in (0, 1, 2, 3) and (
        result.exception is None or isinstance(result.exception, SystemExit)
    )


def _journal_rows(provider: BowerbirdProvider) -> int:
    assert provider.engine is not None
    return sum(provider.engine.store.journal.counts().values())


# -- the CLI --------------------------------------------------------------------------------------------------
@FUZZ
@given(
    command=st.sampled_from(["recall", "remember", "show", "forget", "update"]),
    first=ID_TEXT,
    second=TEXT,
)
def test_cli_commands_never_traceback(home: Path, command: str, first: str, second: str) -> None:
    args = [command, first, second] if command == "update" else [command, first]
    result = _cli(home, *args)
    assert _clean_exit(result), result.output
    assert "Traceback" not in result.output


@FUZZ
@given(limit=st.integers(min_value=-(10**20), max_value=10**20), kind=TEXT)
def test_cli_list_never_tracebacks(home: Path, limit: int, kind: str) -> None:
    result = _cli(home, "--json", "list", "--limit", str(limit), "--type", kind)
    assert _clean_exit(result), result.output


@FUZZ
@given(
    content=st.one_of(
        st.binary(max_size=400), TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))
    ),
    fmt=st.sampled_from(["auto", "jsonl", "markdown", "locomo"]),
)
def test_cli_import_never_tracebacks(
    home: Path, tmp_path_factory: pytest.TempPathFactory, content: bytes, fmt: str
) -> None:
    path = tmp_path_factory.mktemp("import") / "input.jsonl"
    path.write_bytes(content)
    result = _cli(home, "import", str(path), "--format", fmt, "--no-curate")
    assert _clean_exit(result), result.output
    assert "Traceback" not in result.output


@FUZZ
@given(
    lines=st.lists(
        st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": TEXT}),
        min_size=1,
        max_size=4,
    )
)
def test_cli_imports_valid_logs_with_odd_text(
    home: Path, tmp_path_factory: pytest.TempPathFactory, lines: list[dict[str, str]]
) -> None:
    path = tmp_path_factory.mktemp("import") / "chat.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    result = _cli(home, "--json", "import", str(path), "--no-curate")
    assert result.exit_code == 0, result.output


# -- the provider hooks ---------------------------------------------------------------------------------------
@FUZZ
@given(
    user=st.one_of(TEXT, ANY),
    assistant=st.one_of(TEXT, ANY),
    session=st.one_of(st.just(""), TEXT, ANY),
)
def test_sync_turn_never_loses_a_turn(
    provider: BowerbirdProvider, tracebacks: Tracebacks, user: Any, assistant: Any, session: Any
) -> None:
    before = _journal_rows(provider)
    assert provider.sync_turn(user, assistant, session_id=session) is None
    assert _journal_rows(provider) == before + 1
    assert tracebacks.records == []


@FUZZ
@given(query=st.one_of(TEXT, ANY))
def test_prefetch_always_returns_text(
    provider: BowerbirdProvider, tracebacks: Tracebacks, query: Any
) -> None:
    block = provider.prefetch(query)
    assert isinstance(block, str)
    assert block.encode("utf-8").decode("utf-8") == block  # sendable to the host as UTF-8
    assert tracebacks.records == []


@FUZZ
@given(
    name=st.one_of(st.sampled_from(TOOL_NAMES), TEXT, ANY),
    args=st.one_of(JSONISH, ANY, JSONISH.map(json.dumps)),
)
def test_tool_calls_always_answer_json(
    provider: BowerbirdProvider, tracebacks: Tracebacks, name: Any, args: Any
) -> None:
    answer = provider.handle_tool_call(name, args)
    parsed = json.loads(answer)
    assert isinstance(parsed, dict)
    assert answer.encode("utf-8").decode("utf-8") == answer  # sendable to the host as UTF-8
    assert "internal error" not in answer
    assert tracebacks.records == []


@FUZZ
@given(
    action=st.one_of(st.sampled_from(["add", "replace", "remove"]), ANY),
    target=st.one_of(st.sampled_from(["memory", "user"]), ANY),
    content=st.one_of(TEXT, ANY),
    metadata=st.one_of(st.none(), st.dictionaries(st.just("old_text"), st.one_of(TEXT, ANY)), ANY),
)
def test_memory_mirror_never_raises(
    provider: BowerbirdProvider,
    tracebacks: Tracebacks,
    action: Any,
    target: Any,
    content: Any,
    metadata: Any,
) -> None:
    assert provider.on_memory_write(action, target, content, metadata) is None
    assert tracebacks.records == []


MESSAGE = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.one_of(st.sampled_from(["user", "assistant", "tool"]), ANY),
            "content": st.one_of(TEXT, ANY),
        }
    ),
    ANY,
)


@FUZZ
@given(messages=st.one_of(st.lists(MESSAGE, max_size=6), ANY))
def test_pre_compress_always_returns_text(
    provider: BowerbirdProvider, tracebacks: Tracebacks, messages: Any
) -> None:
    summary = provider.on_pre_compress(messages)
    assert isinstance(summary, str)
    assert summary.encode("utf-8").decode("utf-8") == summary  # sendable to the host as UTF-8
    assert tracebacks.records == []
