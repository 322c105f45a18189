"""The rest of the Hermes contract in-process: delegation, turn start, queued prefetch, authors on shared chats,
checkpointing compression, recall_status, and every newer-host call shape next to the 0.19 one."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_bowerbird import scopes as scopes_of
from hermes_bowerbird.provider import BowerbirdProvider


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, storage_env: Path | str) -> Path:
    monkeypatch.setenv("BOWERBIRD_LLM_BACKEND", "none")
    # keyword + graph: fast and deterministic
    monkeypatch.setenv("BOWERBIRD_EMBEDDING_BACKEND", "none")
    monkeypatch.setenv("BOWERBIRD_MAINTENANCE_ENABLED", "false")
    return tmp_path


@pytest.fixture
def opened(home: Path) -> Iterator[Callable[..., BowerbirdProvider]]:
    providers: list[BowerbirdProvider] = []

    def make(session: str = "s1", **kw: Any) -> BowerbirdProvider:
        provider = BowerbirdProvider()
        provider.initialize(
            session, hermes_home=str(home), platform=kw.pop("platform", "telegram"), **kw
        )
        providers.append(provider)
        return provider

    yield make
    for provider in providers:
        provider.shutdown()


def _settle(provider: BowerbirdProvider) -> None:
    assert provider.engine is not None and provider.engine.flush(30)


TASK = "Find out which port the staging database of Quillstack listens on."
RESULT = "The Quillstack staging database listens on port 6543 behind pgbouncer."


@pytest.fixture
def delegated(opened: Callable[..., BowerbirdProvider]) -> BowerbirdProvider:
    parent = opened("parent-1", platform="cli")
    parent.on_delegation(TASK, RESULT, child_session_id="child-7")
    _settle(parent)
    return parent


# -- on_delegation ---------------------------------------------------------------------------------------------
def test_delegation_is_an_episode_of_the_parent_session(delegated: BowerbirdProvider) -> None:
    assert delegated.engine is not None
    episodes = delegated.engine.store.episodes.find(session_id="parent-1")
    assert any("6543" in e.content for e in episodes)


def test_delegation_provenance_names_the_source_and_the_child_session(
    delegated: BowerbirdProvider,
) -> None:
    assert delegated.engine is not None
    store = delegated.engine.store
    episode = next(e for e in store.episodes.find(session_id="parent-1") if "6543" in e.content)
    assert episode.journal_id is not None
    journal = store.journal.get(episode.journal_id)
    assert journal is not None and journal.platform == "delegation:child-7"


def test_delegation_result_is_recalled_in_the_parent_session(delegated: BowerbirdProvider) -> None:
    question = "Which port does the staging database listen on?"
    # the tool result is still in the host's context
    assert "6543" not in delegated.prefetch(question)
    delegated.on_session_switch("parent-2", reset=True)
    assert "6543" in delegated.prefetch(question)


def test_delegation_result_is_found_by_the_recall_tool(delegated: BowerbirdProvider) -> None:
    result = json.loads(
        delegated.handle_tool_call("bowerbird_recall", {"query": "staging database port"})
    )
    assert any("6543" in hit["content"] for hit in result["results"])


def test_a_subagent_provider_records_no_delegation(
    opened: Callable[..., BowerbirdProvider],
) -> None:
    child = opened("child-7", agent_context="subagent")
    child.on_delegation(TASK, RESULT, child_session_id="child-8")
    assert child.engine is not None and child.engine.store.health.counts()["journal"] == 0


def test_an_empty_delegation_records_nothing(opened: Callable[..., BowerbirdProvider]) -> None:
    parent = opened("parent-2")
    parent.on_delegation("  ", "")
    assert parent.engine is not None and parent.engine.store.health.counts()["journal"] == 0


def test_delegation_takes_the_next_turn_index_of_the_parent(
    opened: Callable[..., BowerbirdProvider],
) -> None:
    parent = opened("parent-3")
    parent.sync_turn("We use Postgres 16 for Quillstack.", "Noted.", session_id="parent-3")
    parent.on_delegation(TASK, RESULT, child_session_id="c")
    _settle(parent)
    assert parent.engine is not None
    turns = {
        e.turn_index
        for e in parent.engine.store.episodes.find(session_id="parent-3")
        if "6543" in e.content
    }
    assert turns == {1}


# -- on_turn_start and recall_status ---------------------------------------------------------------------------
def test_on_turn_start_keeps_the_hosts_turn_count(opened: Callable[..., BowerbirdProvider]) -> None:
    provider = opened()
    for turn in (1, 2, 3):
        provider.on_turn_start(
            turn, f"message {turn}", remaining_tokens=1000, model="m", platform="cli"
        )
    assert provider.recall_status()["turn"] == 3


def test_recall_status_counts_visible_memories(opened: Callable[..., BowerbirdProvider]) -> None:
    provider = opened()
    provider.handle_tool_call(
        "bowerbird_remember", {"content": "Priya's team deploys on Thursdays."}
    )
    assert provider.recall_status()["memories"] == 1


def test_recall_status_has_a_label_with_the_count(opened: Callable[..., BowerbirdProvider]) -> None:
    provider = opened()
    provider.handle_tool_call(
        "bowerbird_remember", {"content": "Priya's team deploys on Thursdays."}
    )
    assert provider.recall_status()["label"].startswith("bowerbird: 1 memories")


def test_recall_status_before_initialize_says_so() -> None:
    assert BowerbirdProvider().recall_status() == {
        "label": "bowerbird: not initialised",
        "memories": 0,
    }


# -- queue_prefetch ------------------------------------------------------------------------------------------
@pytest.fixture
def teacher(opened: Callable[..., BowerbirdProvider]) -> BowerbirdProvider:
    provider = opened("q1")
    provider.sync_turn("My violin teacher is called Ms Okonkwo.", "Noted.", session_id="q1")
    _settle(provider)
    provider.on_session_switch("q2", parent_session_id="q1", reset=True)
    return provider


def _queue_and_wait(provider: BowerbirdProvider, query: str) -> None:
    provider.queue_prefetch(query)
    queued = provider.recall.queued()
    assert queued is not None
    queued.result(timeout=30)


def test_prefetch_collects_the_queued_recall_for_the_same_query(teacher: BowerbirdProvider) -> None:
    _queue_and_wait(teacher, "Who is my violin teacher?")
    teacher.handle_tool_call(
        "bowerbird_remember", {"content": "My violin teacher is now Mr Haddad."}
    )
    collected = teacher.prefetch("Who is my violin teacher?")
    # found before the new memory existed
    assert "Okonkwo" in collected and "Haddad" not in collected


def test_prefetch_computes_afresh_when_the_query_differs(teacher: BowerbirdProvider) -> None:
    _queue_and_wait(teacher, "Who is my violin teacher?")
    teacher.handle_tool_call(
        "bowerbird_remember", {"content": "My violin teacher is now Mr Haddad."}
    )
    assert "Haddad" in teacher.prefetch("Tell me about my violin teacher")


def test_a_queued_recall_is_used_once(teacher: BowerbirdProvider) -> None:
    _queue_and_wait(teacher, "Who is my violin teacher?")
    teacher.prefetch("Who is my violin teacher?")
    assert teacher.recall.queued() is None


def test_a_queued_recall_never_repeats_what_the_session_was_given(
    teacher: BowerbirdProvider,
) -> None:
    _queue_and_wait(teacher, "Who is my violin teacher?")
    assert "Okonkwo" in teacher.prefetch("Who is my violin teacher?")
    _queue_and_wait(teacher, "Who is my violin teacher?")
    assert "Okonkwo" not in teacher.prefetch("Who is my violin teacher?")


def test_trivial_prompts_queue_nothing(teacher: BowerbirdProvider) -> None:
    teacher.queue_prefetch("thanks!")
    assert teacher.recall.queued() is None


# -- turn_author on a shared chat ------------------------------------------------------------------------------
@pytest.fixture
def shared_chat(opened: Callable[..., BowerbirdProvider]) -> BowerbirdProvider:
    group = opened("g1", chat_id="chat-9", chat_type="group", user_id="carol")
    group.sync_turn(
        "My bike lock code is kept in the red wallet.",
        "Noted.",
        session_id="g1",
        turn_author="dave",
    )
    _settle(group)
    return group


def test_a_turn_with_an_author_is_stored(shared_chat: BowerbirdProvider) -> None:
    assert shared_chat.engine is not None
    assert any(
        "red wallet" in e.content for e in shared_chat.engine.store.episodes.find(session_id="g1")
    )


def test_a_turn_with_an_author_goes_to_the_authors_scope(shared_chat: BowerbirdProvider) -> None:
    assert shared_chat.engine is not None
    scopes = {
        e.scope
        for e in shared_chat.engine.store.episodes.find(session_id="g1")
        if "red wallet" in e.content
    }
    assert scopes == {scopes_of.user_scope("dave", "telegram")}


def test_the_author_recalls_their_turn(
    shared_chat: BowerbirdProvider, opened: Callable[..., BowerbirdProvider]
) -> None:
    dave = opened("d1", user_id="dave")
    assert "red wallet" in dave.prefetch("where is my bike lock code kept?")


def test_another_member_of_the_chat_does_not_recall_it(shared_chat: BowerbirdProvider) -> None:
    assert "red wallet" not in shared_chat.prefetch("where is the bike lock code kept?")


@pytest.mark.parametrize("author", [{"user_id": "erin", "name": "Erin"}, {"id": "erin"}, "erin"])
def test_an_author_given_as_text_or_mapping_scopes_the_turn(
    opened: Callable[..., BowerbirdProvider], author: Any
) -> None:
    group = opened("g2", chat_type="group", user_id="carol")
    group.sync_turn("Erin's locker is number 41.", "Noted.", session_id="g2", turn_author=author)
    _settle(group)
    assert group.engine is not None
    stored = {e.scope for e in group.engine.store.episodes.find(session_id="g2")}
    assert stored == {scopes_of.user_scope("erin", "telegram")}


def test_without_an_author_the_turn_stays_in_the_agents_scope(
    opened: Callable[..., BowerbirdProvider],
) -> None:
    group = opened("g3", user_id="carol")
    group.sync_turn("Carol's locker is number 12.", "Noted.", session_id="g3", turn_author=None)
    _settle(group)
    assert group.engine is not None
    stored = {e.scope for e in group.engine.store.episodes.find(session_id="g3")}
    assert stored == {scopes_of.user_scope("carol", "telegram")}


# -- checkpoint v2 -------------------------------------------------------------------------------------------
def test_the_provider_asks_for_checkpoint_api_2() -> None:
    assert BowerbirdProvider.pre_compress_checkpoint_api_version == 2


@pytest.fixture
def compressed_once(opened: Callable[..., BowerbirdProvider]) -> BowerbirdProvider:
    provider = opened("c1", platform="cli")
    provider.sync_turn(
        "We decided to host Quillstack on Hetzner in Falkenstein.", "Good choice.", session_id="c1"
    )
    provider.on_pre_compress(
        [
            {"role": "user", "content": "We decided to host Quillstack on Hetzner in Falkenstein."},
            {"role": "assistant", "content": "Good choice."},
        ]
    )
    provider.on_session_switch("c2", parent_session_id="c1", reset=False, reason="compression")
    _settle(provider)
    return provider


LATER = [
    {"role": "user", "content": "I prefer deploys to happen on Thursday mornings."},
    {"role": "assistant", "content": "Noted, Thursday mornings."},
]


def test_a_checkpoint_has_the_points_compressed_away_earlier(
    compressed_once: BowerbirdProvider,
) -> None:
    assert "Falkenstein" in compressed_once.on_pre_compress(LATER, require_checkpoint=True)


def test_a_checkpoint_has_the_current_points(compressed_once: BowerbirdProvider) -> None:
    assert "Thursday" in compressed_once.on_pre_compress(LATER, require_checkpoint=True)


def test_without_a_checkpoint_only_the_current_messages_count(
    compressed_once: BowerbirdProvider,
) -> None:
    assert "Falkenstein" not in compressed_once.on_pre_compress(LATER)


def test_a_reset_starts_a_new_conversation(compressed_once: BowerbirdProvider) -> None:
    compressed_once.on_session_switch("c3", reset=True)
    assert "Falkenstein" not in compressed_once.on_pre_compress(LATER, require_checkpoint=True)


# -- initialize kwargs ---------------------------------------------------------------------------------------
def test_initialize_accepts_the_newer_kwargs(
    opened: Callable[..., BowerbirdProvider], home: Path
) -> None:
    provider = opened(
        "n1",
        user_id_alt="alt-1",
        agent_workspace=str(home),
        parent_session_id="n0",
        user_name="Nia",
        gateway_session_key="k",
        session_title="t",
    )
    assert provider.engine is not None and provider.lineage == ["n0", "n1"]


# -- every call shape, 0.19 and newer ----------------------------------------------------------------------------
CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("prefetch", ("q",), {}),
    ("prefetch", ("q",), {"session_id": "s"}),
    ("queue_prefetch", ("q",), {}),
    ("queue_prefetch", ("q",), {"session_id": "s"}),
    ("sync_turn", ("u", "a"), {"session_id": "s", "messages": []}),
    ("sync_turn", ("u", "a"), {"session_id": "s", "messages": [], "turn_author": "x"}),
    ("on_turn_start", (1, "m"), {}),
    ("on_turn_start", (1, "m"), {"remaining_tokens": 5, "model": "m"}),
    ("on_pre_compress", ([],), {}),
    ("on_pre_compress", ([],), {"require_checkpoint": True}),
    ("on_delegation", ("t", "r"), {}),
    ("on_delegation", ("t", "r"), {"child_session_id": "c", "extra": 1}),
    (
        "on_session_switch",
        ("s2",),
        {"parent_session_id": "s", "reset": False, "rewound": False, "reason": "x"},
    ),
    ("recall_status", (), {}),
    ("on_session_end", ([],), {}),
    ("on_memory_write", ("add", "memory", "c"), {"metadata": {}}),
]


@pytest.mark.parametrize("name, args, kwargs", CALLS)
def test_every_call_shape_binds(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    inspect.signature(getattr(BowerbirdProvider(), name)).bind(*args, **kwargs)


@pytest.mark.parametrize("name, args, kwargs", CALLS)
def test_every_call_shape_answers_without_logging_an_error(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    opened: Callable[..., BowerbirdProvider],
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = opened("s")
    # the hooks' guard logs there
    with caplog.at_level("ERROR", logger="hermes_bowerbird.provider"):
        getattr(provider, name)(*args, **kwargs)
    assert [r.getMessage() for r in caplog.records if r.name == "hermes_bowerbird.provider"] == []


def test_the_installed_host_calls_match_ours() -> None:
    base = pytest.importorskip("agent.memory_provider").MemoryProvider
    for name in (
        "prefetch",
        "queue_prefetch",
        "sync_turn",
        "on_turn_start",
        "on_pre_compress",
        "on_delegation",
        "on_session_switch",
        "on_session_end",
        "on_memory_write",
    ):
        host = inspect.signature(getattr(base, name))
        ours = inspect.signature(getattr(BowerbirdProvider, name))
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ours.parameters.values())
        missing = [
            p
            for n, p in host.parameters.items()
            if n not in ours.parameters
            and not (
                takes_any
                and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD)
            )
        ]
        assert missing == [], name
