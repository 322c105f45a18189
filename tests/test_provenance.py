"""Provenance weighting: what only the assistant or a tool said weighs less than the user's own words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_bowerbird import scopes
from hermes_bowerbird.cli import cli
from hermes_bowerbird.config import load_config
from hermes_bowerbird.curation.provenance import column_origin, model_origin, origin_of, weigh
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import RecallOptions, TurnCapture
from hermes_bowerbird.types import LLM, Candidate, Memory, MemoryFilter, MemoryType

ALICE, BOB = "user:alice", "user:bob"
PROFILE = scopes.profile_scope()
CLI_ENV = {
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
}
STEP = "Make sure to always run the migrations before deploying the billing service."
PAGE_TURN = (
    "What battery life do the Zephyr X2 headphones have?",
    "The product page I opened says the Zephyr X2 headphones last 40 hours on one charge.",
)
CLAIM = "The Zephyr X2 headphones last 40 hours on one charge."


class ModelReply:
    """Stands in for the extraction model: a batch whose turns mention `when` gets these decisions."""

    def __init__(self, decisions: list[dict[str, object]], when: str) -> None:
        self.reply = json.dumps({"decisions": decisions})
        self.when = when

    @property
    def name(self) -> str:
        return "scripted"

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 1024,
        json_mode: bool = False,
        timeout: float = 30.0,
    ) -> str:
        return self.reply if self.when in prompt else '{"decisions": []}'


def _engine(home: Path, minilm: LocalEmbedder, llm: LLM | None = None) -> Bowerbird:
    config = load_config(
        home,
        environ={
            "BOWERBIRD_LLM_BACKEND": "none",
            "BOWERBIRD_LLM_BATCH_TURNS": "1",
            "BOWERBIRD_MAINTENANCE_ENABLED": "false",
        },
    )
    return Bowerbird(config, embedder=minilm, llm=llm, background=False)


@pytest.fixture
def engine(tmp_path: Path, minilm: LocalEmbedder) -> Iterator[Bowerbird]:
    bowerbird = _engine(tmp_path, minilm)
    yield bowerbird
    bowerbird.shutdown()


def _memories(engine: Bowerbird, scope: str) -> list[Memory]:
    return engine.store.memories.find([scope], MemoryFilter(current_only=True))


def _say(
    engine: Bowerbird,
    user: str,
    assistant: str,
    *,
    scope: str = ALICE,
    session: str = "s1",
    platform: str = "cli",
) -> None:
    engine.capture_turn(
        TurnCapture(user, assistant, scope=scope, session_id=session, platform=platform)
    )
    engine.curate_now()


def _only(engine: Bowerbird, scope: str, text: str) -> Memory:
    found = [m for m in _memories(engine, scope) if text in m.content]
    assert len(found) == 1, found
    return found[0]


# ------------------------------------------------------------------------------------------- the rules alone


@pytest.mark.parametrize(
    "role, platform, origin",
    [
        ("user", "cli", "user"),
        ("assistant", "cli", "assistant"),
        ("user", "delegation:child-1", "assistant"),
        ("assistant", "delegation:child-1", "tool"),
    ],
)
def test_column_origin(role: str, platform: str, origin: str) -> None:
    assert column_origin(role, platform) == origin


@pytest.mark.parametrize(
    "content, user, assistant, origin",
    [
        ("The user lives in Lisbon.", "I moved to Lisbon last month.", "Congratulations!", "user"),
        (CLAIM, *PAGE_TURN, "assistant"),
        ("Likes tea.", "Hello there.", "Good morning.", ""),
    ],
)
def test_model_origin(content: str, user: str, assistant: str, origin: str) -> None:
    assert model_origin(content, user, assistant) == origin


@pytest.mark.parametrize(
    "origin, importance, confidence",
    [
        ("user", 0.8, 0.9),
        ("explicit", 0.8, 0.9),
        ("assistant", 0.48, 0.6),
        ("tool", 0.4, 0.5),
    ],
)
def test_weigh(origin: str, importance: float, confidence: float) -> None:
    weighed = weigh(Candidate(MemoryType.FACT, "x", importance=0.8, confidence=0.9), origin)
    assert (weighed.origin, weighed.importance, weighed.confidence) == (
        origin,
        importance,
        confidence,
    )


@pytest.mark.parametrize(
    "metadata, origin",
    [
        ({"role": "user", "origin": "assistant"}, "assistant"),
        ({"role": "assistant"}, "assistant"),
        ({"role": "model"}, "user"),
        ({}, "user"),
        ({"origin": "bogus"}, "user"),
    ],
)
def test_origin_of_older_memories(metadata: dict[str, object], origin: str) -> None:
    assert origin_of(metadata) == origin


# ------------------------------------------------------------------------------------------- through curation


def test_user_statement_outweighs_the_same_words_from_the_assistant(engine: Bowerbird) -> None:
    _say(engine, STEP, "Noted.", scope=ALICE)
    _say(engine, "How do I ship the billing service?", STEP, scope=BOB)
    said, echoed = _only(engine, ALICE, STEP), _only(engine, BOB, STEP)
    assert (origin_of(said.metadata), origin_of(echoed.metadata)) == ("user", "assistant")
    assert echoed.importance < said.importance


def test_user_statement_ranks_first(engine: Bowerbird) -> None:
    _say(engine, STEP, "Noted.", scope=ALICE)
    _say(engine, "How do I ship the billing service?", STEP, scope=BOB)
    found = engine.recall(
        "run migrations before deploying billing",
        scopes=(ALICE, BOB),
        options=RecallOptions(include_episodes=False, touch=False),
    )
    hits = [h.id for h in found if h.content == STEP]
    # the same words in both scopes: the user's come first
    assert hits[0] == _only(engine, ALICE, STEP).id


def test_user_repeating_an_assistant_memory_promotes_it(engine: Bowerbird) -> None:
    _say(engine, "How do I ship the billing service?", STEP)
    first = _only(engine, ALICE, STEP)
    _say(engine, STEP, "Yes, exactly.", session="s2")
    promoted = _only(engine, ALICE, STEP)
    assert (
        promoted.id,
        origin_of(promoted.metadata),
        promoted.importance,
        promoted.confidence,
    ) == (first.id, "user", 0.75, 0.75)


def test_assistant_repeating_a_user_memory_keeps_its_weight(engine: Bowerbird) -> None:
    _say(engine, STEP, "Noted.")
    said = _only(engine, ALICE, STEP)
    _say(engine, "Remind me how we ship?", STEP, session="s2")
    kept = _only(engine, ALICE, STEP)
    assert (origin_of(kept.metadata), kept.importance, kept.confidence) == (
        "user",
        said.importance,
        said.confidence,
    )


def test_subagent_result_is_tool_provenance(engine: Bowerbird) -> None:
    _say(
        engine,
        "Check the deploy docs.",
        f"The subagent's result: {STEP}",
        platform="delegation:child-7",
    )
    assert origin_of(_only(engine, ALICE, STEP).metadata) == "tool"


def test_remembered_memory_is_explicit(engine: Bowerbird) -> None:
    memory = engine.remember("My locker code is on the blue card.", scope=ALICE)
    assert (origin_of(memory.metadata), memory.confidence) == ("explicit", 1.0)


# ------------------------------------------------------------------------------------------- model decisions


def _claim(turn: int = 1, **extra: object) -> dict[str, object]:
    return {
        "action": "add",
        "type": "fact",
        "content": CLAIM,
        "importance": 0.8,
        "turn": turn,
        **extra,
    }


def test_a_web_page_claim_weighs_less(tmp_path: Path, minilm: LocalEmbedder) -> None:
    engine = _engine(tmp_path, minilm, ModelReply([_claim()], when="Zephyr"))
    _say(engine, *PAGE_TURN, scope=ALICE)
    _say(engine, CLAIM, "Good to know.", scope=BOB)
    from_page, from_user = _only(engine, ALICE, CLAIM), _only(engine, BOB, CLAIM)
    engine.shutdown()
    assert (origin_of(from_page.metadata), origin_of(from_user.metadata)) == ("assistant", "user")
    assert from_page.importance < from_user.importance


def test_a_web_page_claim_never_replaces_what_the_user_said(
    tmp_path: Path, minilm: LocalEmbedder
) -> None:
    claim = _claim(turn=1, content="The user lives in Munich.", subject="user:residence")
    engine = _engine(tmp_path, minilm, ModelReply([claim], when="Munich"))
    _say(engine, "I live in Berlin.", "Nice city.")
    _say(
        engine,
        "Where do people think I live?",
        "A profile page I found says the user lives in Munich.",
    )
    residence = sorted(
        m.content for m in engine.store.memories.current_by_subject(ALICE, "user:residence")
    )
    engine.shutdown()
    assert residence == ["I live in Berlin.", "The user lives in Munich."]


# ------------------------------------------------------------------------------------------- visible to the user


def test_show_json_reports_origin(tmp_path: Path, minilm: LocalEmbedder) -> None:
    engine = _engine(tmp_path, minilm)
    _say(engine, "How do I ship the billing service?", STEP, scope=PROFILE)
    memory_id = _only(engine, PROFILE, STEP).id
    engine.shutdown()
    result = CliRunner().invoke(
        cli, ["--hermes-home", str(tmp_path), "--json", "show", str(memory_id)], env=CLI_ENV
    )
    assert json.loads(result.output)["data"]["memory"]["origin"] == "assistant"


def test_show_text_reports_origin(tmp_path: Path, minilm: LocalEmbedder) -> None:
    engine = _engine(tmp_path, minilm)
    _say(engine, "How do I ship the billing service?", STEP, scope=PROFILE)
    memory_id = _only(engine, PROFILE, STEP).id
    engine.shutdown()
    result = CliRunner().invoke(
        cli, ["--hermes-home", str(tmp_path), "show", str(memory_id)], env=CLI_ENV
    )
    assert "origin       assistant" in result.output
