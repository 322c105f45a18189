"""Prefetch through the provider: what counts as given to the host, and what the agent already sees."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import pytest

from hermes_bowerbird.config import Config, load_config
from hermes_bowerbird.embeddings.cache import WrappedEmbedder
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import RecallOptions, TurnCapture
from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.retrieval import Hit
from hermes_bowerbird.session_recall import MODEL_WAIT_SHARE, SessionRecall
from hermes_bowerbird.types import ItemKind

if TYPE_CHECKING:
    from hermes_bowerbird.types import FloatArray

FACT = "We decided to deploy the billing service with Ansible from now on."
QUERY = "How do we deploy the billing service with Ansible?"


class SlowModel(WrappedEmbedder):
    """The real model behind a switchable delay (a busy or remote embedding backend)."""

    def __init__(self, inner: LocalEmbedder) -> None:
        super().__init__(inner)
        self.delay = 0.0
        self.slow_calls_done = threading.Event()

    def embed(self, text: str) -> FloatArray:
        return self.embed_batch([text])[0]

    def embed_query(self, text: str) -> FloatArray:
        return self.embed(text)

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        delay = self.delay
        vectors = self.inner.embed_batch(texts)
        if delay:
            time.sleep(delay)
            self.slow_calls_done.set()
        return vectors


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, storage_env: Path | str) -> Config:
    monkeypatch.setenv("BOWERBIRD_LLM_BACKEND", "none")
    monkeypatch.setenv("BOWERBIRD_MAINTENANCE_ENABLED", "false")
    monkeypatch.setenv("BOWERBIRD_PREFETCH_TIMEOUT_SECONDS", "0.2")
    return load_config(tmp_path)


@pytest.fixture
def slow(config: Config, minilm: LocalEmbedder) -> Iterator[tuple[SlowModel, Bowerbird]]:
    model = SlowModel(minilm)
    # providers opened on this home share this engine
    engine = Bowerbird.open_shared(config, embedder=model)
    yield model, engine
    engine.release()


def _provider(config: Config, session: str = "now") -> BowerbirdProvider:
    provider = BowerbirdProvider()
    provider.initialize(session, hermes_home=str(config.hermes_home), platform="cli")
    return provider


def _told_earlier(engine: Bowerbird, provider: BowerbirdProvider, text: str = FACT) -> None:
    engine.capture_turn(
        TurnCapture(text, "Noted.", scope=provider.write_scope, session_id="earlier")
    )
    assert engine.flush(30)


def test_a_timed_out_prefetch_leaves_its_hits_for_the_next_turn(
    config: Config, slow: tuple[SlowModel, Bowerbird]
) -> None:
    model, engine = slow
    provider = _provider(config)
    _told_earlier(engine, provider)
    model.delay = 0.5
    assert provider.prefetch(QUERY) == ""  # 0.5 s of recall against a 0.2 s timeout
    assert model.slow_calls_done.wait(5)
    model.delay = 0.0
    time.sleep(0.1)  # the timed-out recall finishes its last steps on the prefetch thread
    assert "Ansible" in provider.prefetch(QUERY)
    provider.shutdown()


# ------------------------------------------------------------------ what the agent already sees

DENTIST = "My dentist is Dr Okafor on Rua Augusta and I see her every March."
ASK_DENTIST = "Who is my dentist again?"


@pytest.fixture
def quick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, storage_env: Path | str
) -> Iterator[BowerbirdProvider]:
    monkeypatch.setenv("BOWERBIRD_LLM_BACKEND", "none")
    monkeypatch.setenv("BOWERBIRD_EMBEDDING_BACKEND", "none")
    monkeypatch.setenv("BOWERBIRD_MAINTENANCE_ENABLED", "false")
    provider = BowerbirdProvider()
    provider.initialize("s1", hermes_home=str(tmp_path), platform="cli")
    yield provider
    provider.shutdown()


def _say(provider: BowerbirdProvider, text: str) -> None:
    provider.sync_turn(text, "Noted.", session_id=provider.session_id)
    assert provider.engine is not None and provider.engine.flush(30)


def test_only_what_fits_the_budget_counts_as_given(quick: BowerbirdProvider) -> None:
    engine = quick.engine
    assert engine is not None
    long = "We keep the spare keys with the neighbours at number nine, the blue door. " * 6
    found = [
        Hit(ItemKind.EPISODE, i, None, f"{i}: {long}", 1.0 / i, time.time()) for i in range(1, 41)
    ]
    block = quick.recall.block(engine, found, quick.visible, quick.write_scope)
    shown = [h.id for h in block.hits]
    assert 0 < len(shown) < len(found)
    assert all(f"[episode #e{i}," in block.text for i in shown)
    assert not any(f"[episode #e{h.id}," in block.text for h in found if h.id not in shown)
    quick.recall.mark_given(block)
    later = quick.recall.block(engine, found, quick.visible, quick.write_scope)
    assert later.hits and not {h.id for h in later.hits} & set(shown)  # the rest may come later


def test_a_turn_still_in_the_context_is_not_injected(quick: BowerbirdProvider) -> None:
    _say(quick, DENTIST)
    assert "Okafor" not in quick.prefetch(ASK_DENTIST)


def test_after_compression_it_may_be_injected(quick: BowerbirdProvider) -> None:
    _say(quick, DENTIST)
    quick.on_pre_compress(
        [{"role": "user", "content": DENTIST}, {"role": "assistant", "content": "Noted."}]
    )
    quick.on_session_switch("s1-b", parent_session_id="s1", reset=False, reason="compression")
    assert "Okafor" in quick.prefetch(ASK_DENTIST)


def test_compression_in_place_keeps_later_turns_out(quick: BowerbirdProvider) -> None:
    _say(quick, DENTIST)
    quick.on_pre_compress([{"role": "user", "content": DENTIST}])
    quick.on_session_switch("s1", parent_session_id="s1", reset=False, reason="compression")
    _say(quick, "My physiotherapist is Dr Brandt in Campo de Ourique.")
    text = quick.prefetch("Who are my dentist and my physiotherapist?")
    assert "Okafor" in text
    assert "Brandt" not in text


def test_a_new_session_gets_what_the_last_one_said(quick: BowerbirdProvider) -> None:
    _say(quick, DENTIST)
    quick.on_session_end([])
    quick.on_session_switch("s2", reset=True)
    assert "Okafor" in quick.prefetch(ASK_DENTIST)


def test_a_resumed_session_holds_its_history_again(quick: BowerbirdProvider) -> None:
    _say(quick, DENTIST)
    quick.on_session_switch("s2", reset=True)
    quick.on_session_switch("s1", reset=False)  # /resume loads s1's messages back into the context
    assert "Okafor" not in quick.prefetch(ASK_DENTIST)


def test_a_bulletin_note_leaves_out_what_this_session_said(quick: BowerbirdProvider) -> None:
    engine = quick.engine
    assert engine is not None
    engine.remember("My name is Ada and I live in Porto.", scope=quick.write_scope)
    quick.system_prompt_block()
    _say(quick, "We decided to move the billing API to Rust this quarter.")
    engine.bulletin(quick.write_scope, visible=quick.visible, force=True)
    assert "Rust" not in quick.prefetch("What did we decide about the billing API language?")


class LoadingModel:
    """An engine's admin whose model is still loading: `wait_model` records how long each caller would wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def wait_model(self, seconds: float) -> bool:
        self.waits.append(seconds)
        return False


def test_the_first_search_waits_for_a_loading_model_within_the_prefetch_timeout() -> None:
    admin = LoadingModel()
    asked: list[str] = []

    def recall(query: str, **_: object) -> list[object]:
        asked.append(query)
        return []

    engine = SimpleNamespace(
        admin=admin,
        config=SimpleNamespace(
            prefetch_timeout_seconds=2.0, prefetch_budget_tokens=400, prefetch_gate=0.5
        ),
        recall=recall,
    )
    session = SessionRecall()
    session.search(cast("Bowerbird", engine), "which tool do I deploy with?", ["profile:default"])
    session.search(cast("Bowerbird", engine), "and on Fridays?", ["profile:default"])
    # once, and leaving a fifth of the timeout for the search: a first build takes minutes, and keywords serve
    assert admin.waits == [pytest.approx(2.0 * MODEL_WAIT_SHARE)]
    assert MODEL_WAIT_SHARE < 1
    assert asked == ["which tool do I deploy with?", "and on Fridays?"]


def test_a_question_wrapped_in_chat_gets_what_the_question_alone_gets(
    chat: BowerbirdProvider,
) -> None:
    chat.sync_turn(
        "My daughter's name is Clementine and she is allergic to peanuts.",
        "Noted.",
        session_id="s0",
    )
    assert chat.engine is not None and chat.engine.flush(60)
    for n, question in enumerate(
        [
            "Hey, quick question - what is my little girl called? Thanks!",
            "Can you remind me: which nuts must my kid avoid? cheers :)",
            "which nuts must my kid avoid",
            # said after something else
            "I'm sorting out some stuff this afternoon. What is my little girl called?",
        ]
    ):
        chat.on_session_switch(f"ask{n}", reset=True)
        block = chat.prefetch(question)
        assert "Clementine" in block, question


# ------------------------------------------------------------------ what is worth injecting, and only once

ADA = "Hi, I'm Ada Lovelace. I always deploy with Ansible, and we never deploy on Fridays."
ASKED = "Which tool should I use to deploy the billing service?"
ANSWERED = "Use Ansible: the billing playbook lives in the ops repository and runs from the release branch."


def _told(chat: BowerbirdProvider, *turns: tuple[str, str, str]) -> Bowerbird:
    """Turns (user, assistant, session) captured and curated; then a new session opens."""
    engine = chat.engine
    assert engine is not None
    for user, assistant, session in turns:
        chat.sync_turn(user, assistant, session_id=session)
        assert engine.flush(60)
    chat.on_session_end([])
    chat.on_session_switch("asking", reset=True)
    return engine


def _lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith("- [")]


def test_a_past_question_is_not_injected_but_the_tool_still_finds_it(
    chat: BowerbirdProvider,
) -> None:
    _told(chat, (ADA, "Noted.", "s1"), ("Remind me, how do we deploy things here?", "Sure.", "s2"))
    block = chat.prefetch("How do we deploy?")
    assert _lines(block) == [next(line for line in _lines(block) if "Ansible" in line)]
    assert "Remind me" not in block
    found = json.loads(chat.handle_tool_call("bowerbird_recall", {"query": "how do we deploy"}))
    assert "Remind me, how do we deploy things here?" in [r["content"] for r in found["results"]]


def test_an_answer_stays_injectable_when_its_question_is_not(chat: BowerbirdProvider) -> None:
    _told(chat, (ASKED, ANSWERED, "s1"))
    block = chat.prefetch("Where does the billing playbook live?")
    assert ANSWERED in block
    assert ASKED not in block


def test_the_turn_a_given_memory_came_from_is_not_injected_later(
    chat: BowerbirdProvider,
) -> None:
    _told(chat, (ADA, "Noted.", "s1"))
    first = chat.prefetch("Which deployment tool do we rely on again?")
    second = chat.prefetch("How do we deploy?")
    assert [block.count("Ansible") for block in (first, second)] == [1, 0]


def test_a_memory_shown_in_the_turn_it_came_from_is_not_injected_again(
    chat: BowerbirdProvider,
) -> None:
    engine = _told(chat, (ADA, "Noted.", "s1"))
    turn = next(e for e in engine.inspect.session_episodes(chat.visible, "s1") if e.role == "user")
    shown = Hit(ItemKind.EPISODE, turn.id, None, turn.content, 1.0, turn.created_at)
    chat.recall.mark_given(chat.recall.block(engine, [shown], chat.visible, chat.write_scope))
    assert "Ansible" not in chat.prefetch("Which deployment tool do we rely on again?")


def test_a_held_memory_that_does_not_answer_leaves_its_turn_injectable(
    chat: BowerbirdProvider,
) -> None:
    engine = _told(chat, (ADA, "Noted.", "s1"))
    memories = {m.content: m.id for m in engine.inspect.list_memories(chat.visible)}
    engine.forget(memories["I always deploy with Ansible."], scopes=chat.visible, reason="test")
    held = [("memory", memories["I'm Ada Lovelace."])]
    hits = engine.recall(
        "How do we deploy?",
        scopes=chat.visible,
        options=RecallOptions(min_relevance=0.5, inject=True, exclude=held, touch=False),
    )
    assert [h.content for h in hits] == [ADA]


def test_a_turn_quoting_a_line_given_earlier_in_the_session_is_not_injected(
    chat: BowerbirdProvider,
) -> None:
    engine = chat.engine
    assert engine is not None
    given = Hit(ItemKind.MEMORY, 1, None, "I always deploy with Ansible.", 1.0, 0.0)
    chat.recall.mark_given(chat.recall.block(engine, [given], chat.visible, chat.write_scope))
    quoting = Hit(ItemKind.EPISODE, 2, None, "Hi, I'm Ada. I always deploy with Ansible.", 1.0, 0.0)
    other = Hit(ItemKind.EPISODE, 3, None, "We never deploy on Fridays.", 1.0, 0.0)
    block = chat.recall.block(engine, [quoting, other], chat.visible, chat.write_scope)
    assert [h.id for h in block.hits] == [3]
