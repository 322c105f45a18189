"""The benchmark's measure of what prefetch injects: asked through the real provider, alone and in one session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_bowerbird.config import Config
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import TurnCapture
from hermes_bowerbird.retrieval import estimate_tokens

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from through_provider import Ask, Injected, ask_through_provider

FACT = "We decided to deploy the billing service with Ansible from now on."


@pytest.fixture
def filled(chat_config: Config, minilm: LocalEmbedder) -> Iterator[Config]:
    """A home whose shared engine holds one told fact, in the scope a provider reads for user "ada"."""
    engine = Bowerbird.open_shared(chat_config, embedder=minilm)
    engine.capture_turn(TurnCapture(FACT, "Noted.", scope="user:ada", session_id="earlier"))
    assert engine.flush(60)
    yield chat_config
    engine.release()


def _holds_ansible(text: str, slots: list[list[str]]) -> bool:
    return "Ansible" in text


def test_a_question_asked_twice_is_answered_alone_each_time_but_once_in_a_session(
    filled: Config,
) -> None:
    asks = [Ask("How do we deploy the billing service?", _holds_ansible)] * 2
    got = ask_through_provider(filled, asks, user_id="ada", name="twice")
    assert got["alone"].answered == [True, True]
    assert got["session"].answered == [True, False]
    assert got["alone"].asked == got["session"].asked == 2
    assert len(got["alone"].tokens) == 2 and len(got["session"].tokens) == 1


def test_tokens_and_lines_are_counted_per_injected_turn_only() -> None:
    got = Injected(asked=3, tokens=[estimate_tokens("x" * 400), 50], lines=[2, 1])
    row = got.row()
    assert (row["injected"], row["tokens"], row["lines"], row["total"]) == (2 / 3, 75.0, 1.5, 150.0)
