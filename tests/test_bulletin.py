"""The bulletin: sections in order, word caps, scope isolation, rebuilt only on change, LLM path with fallback."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import FakeClock
from gemini_stub import GeminiStub

from hermes_bowerbird.config import Config, build_config
from hermes_bowerbird.llm.gemini import GeminiLLM
from hermes_bowerbird.maintenance import BulletinBuilder, changes_since
from hermes_bowerbird.maintenance.bulletin import sections
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import MemoryFilter, MemoryType, NewMemory, Source

T0 = 1_700_000_000.0
ALICE, BOB, PROFILE = "user:alice", "user:bob", "profile:default"
VISIBLE = (ALICE, PROFILE)

FIXTURE = [
    (ALICE, MemoryType.IDENTITY, "Alice is a marine biologist based in Lisbon."),
    (ALICE, MemoryType.GOAL, "Alice wants to publish her coral reef paper this spring."),
    (ALICE, MemoryType.DECISION, "Alice decided to use PostgreSQL for the survey database."),
    (ALICE, MemoryType.TODO, "Alice needs to renew her diving licence."),
    (ALICE, MemoryType.PREFERENCE, "Alice prefers short answers with code first."),
    (ALICE, MemoryType.FACT, "Alice's lab uses a Zeiss microscope."),
    (ALICE, MemoryType.EVENT, "Alice presented at the ocean conference."),
    (ALICE, MemoryType.OBSERVATION, "Alice often works late on Thursdays."),
    (PROFILE, MemoryType.PROCEDURE, "Deploys run through the staging pipeline first."),
    (BOB, MemoryType.IDENTITY, "Bob is a pastry chef in Montreal."),
    (BOB, MemoryType.PREFERENCE, "Bob prefers long detailed explanations."),
]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Store:
    store = Store.open(tmp_path / "m.db", clock=clock)
    for scope, type_, text in FIXTURE:
        store.insert_memory(NewMemory(scope, type_, text, Source.TURN))
    return store


@pytest.fixture
def stub() -> Iterator[GeminiStub]:
    with GeminiStub(api_key="good") as running:
        yield running


def gemini(stub: GeminiStub) -> GeminiLLM:
    return GeminiLLM("good", base_url=stub.url, attempts=1, wait_max=0.1)


def test_deterministic_bulletin_has_sections_in_order_and_only_visible_memories(
    store: Store, config: Config, clock: FakeClock
) -> None:
    gone = store.insert_memory(
        NewMemory(ALICE, MemoryType.FACT, "Alice's lab uses a Leica microscope.", Source.TURN)
    )
    store.forget(gone.id, reason="wrong", actor="test")
    old = store.insert_memory(
        NewMemory(ALICE, MemoryType.TODO, "Alice needs to book the ferry.", Source.TURN)
    )
    new = store.insert_memory(
        NewMemory(ALICE, MemoryType.TODO, "Alice booked the ferry already.", Source.TURN)
    )
    store.supersede(old.id, new.id, reason="done", actor="test")
    bulletin = BulletinBuilder(store, config, clock).current(ALICE, VISIBLE)
    assert (
        bulletin is not None and bulletin.generator == "deterministic" and bulletin.scope == ALICE
    )
    header, *rest = bulletin.text.splitlines()
    assert header.startswith("Memory bulletin")
    assert [line[:-1] for line in rest if not line.startswith("- ")] == [
        s.title for s in sections()
    ]
    for scope, _, text in FIXTURE:
        assert (text in bulletin.text) is (scope != BOB)
    assert "Leica" not in bulletin.text and "book the ferry" not in bulletin.text
    assert len(bulletin.text.split()) <= config.bulletin_max_words


def test_another_users_bulletin_never_shows_alices_memories(
    store: Store, config: Config, clock: FakeClock
) -> None:
    bulletin = BulletinBuilder(store, config, clock).current(BOB, (BOB, PROFILE))
    assert bulletin is not None
    assert "Bob is a pastry chef" in bulletin.text and "Alice" not in bulletin.text


@pytest.mark.parametrize("max_words", [80, 500])
def test_word_cap_holds_and_every_section_gets_a_share(
    tmp_path: Path, store: Store, clock: FakeClock, max_words: int
) -> None:
    config = build_config(
        tmp_path, {"db_path": str(tmp_path / "unused.db"), "bulletin_max_words": max_words}
    )
    filler = " ".join(f"word{n}" for n in range(35))
    for type_ in MemoryType:
        for n in range(12):
            store.insert_memory(NewMemory(ALICE, type_, f"{type_} note {n}: {filler}", Source.TURN))
    text = BulletinBuilder(store, config, clock).current(ALICE, VISIBLE, force=True)
    assert text is not None and len(text.text.split()) <= max_words
    if max_words >= 500:
        assert all(f"{s.title}:" in text.text for s in sections())


def test_rebuilt_at_once_when_memory_changed_and_never_while_idle(
    store: Store, config: Config, clock: FakeClock
) -> None:
    builder = BulletinBuilder(store, config, clock)
    first = builder.current(ALICE, VISIBLE)
    assert first is not None
    store.insert_memory(
        NewMemory(ALICE, MemoryType.GOAL, "Alice wants to learn Portuguese.", Source.TURN)
    )
    clock.now += 60
    second = builder.current(ALICE, VISIBLE)  # a minute later: a new session sees the new memory
    assert second is not None and second.id != first.id and "Portuguese" in second.text
    assert store.bulletins.latest(
        ALICE
    ) == second and second.state_hash == store.memories.state_hash(VISIBLE)
    clock.now += 5 * config.bulletin_interval_seconds
    assert builder.current(ALICE, VISIBLE) == second  # idle: nothing changed, nothing rebuilt
    store.memories.touch([1])  # a recall is not a change of memory
    assert builder.current(ALICE, VISIBLE) == second
    forced = builder.current(ALICE, VISIBLE, force=True)
    assert forced is not None and forced.id != second.id


def test_the_model_briefing_keeps_the_hourly_rule(
    store: Store, config: Config, clock: FakeClock, stub: GeminiStub
) -> None:
    builder = BulletinBuilder(store, config, clock, gemini(stub))
    stub.replies.append("Alice is a marine biologist in Lisbon.")
    briefing = builder.current(ALICE, VISIBLE)
    assert briefing is not None and briefing.generator.startswith("llm:")
    store.insert_memory(
        NewMemory(ALICE, MemoryType.GOAL, "Alice wants to learn Portuguese.", Source.TURN)
    )
    clock.now += 60
    # within the hour: the deterministic bulletin, no model call
    fresh = builder.current(ALICE, VISIBLE)
    assert fresh is not None and fresh.generator == "deterministic" and "Portuguese" in fresh.text
    assert stub.count(":generateContent") == 1
    assert builder.current(ALICE, VISIBLE, synthesise=False) == fresh
    clock.now += config.bulletin_interval_seconds
    stub.replies.append("Alice is a marine biologist learning Portuguese.")
    rewritten = builder.current(ALICE, VISIBLE)
    assert (
        rewritten is not None
        and rewritten.generator.startswith("llm:")
        and "Portuguese" in rewritten.text
    )
    assert stub.count(":generateContent") == 2


def test_session_start_sees_a_change_made_after_the_briefing(
    store: Store, config: Config, clock: FakeClock, stub: GeminiStub
) -> None:
    builder = BulletinBuilder(store, config, clock, gemini(stub))
    stub.replies.append("Alice is a marine biologist in Lisbon.")
    assert builder.current(ALICE, VISIBLE) is not None
    store.insert_memory(
        NewMemory(ALICE, MemoryType.IDENTITY, "Alice's partner is called Rui.", Source.TURN)
    )
    clock.now += 120
    opened = builder.current(ALICE, VISIBLE, synthesise=False)
    assert opened is not None and "Rui" in opened.text
    assert stub.count(":generateContent") == 1


def test_a_change_in_another_users_scope_does_not_rebuild(
    store: Store, config: Config, clock: FakeClock
) -> None:
    builder = BulletinBuilder(store, config, clock)
    first = builder.current(ALICE, VISIBLE)
    store.insert_memory(NewMemory(BOB, MemoryType.GOAL, "Bob wants to open a bakery.", Source.TURN))
    clock.now += 2 * config.bulletin_interval_seconds
    assert builder.current(ALICE, VISIBLE) == first


def test_nothing_remembered_means_no_bulletin(
    tmp_path: Path, config: Config, clock: FakeClock
) -> None:
    empty = Store.open(tmp_path / "empty.db", clock=clock)
    assert BulletinBuilder(empty, config, clock).current(ALICE, VISIBLE) is None
    assert empty.bulletins.latest(ALICE) is None


def test_llm_bulletin_from_the_gemini_stub(
    store: Store, config: Config, clock: FakeClock, stub: GeminiStub
) -> None:
    briefing = (
        "Alice is a marine biologist in Lisbon finishing a coral reef paper. Keep answers short."
    )
    stub.replies.append(briefing)
    bulletin = BulletinBuilder(store, config, clock, gemini(stub)).current(ALICE, VISIBLE)
    assert (
        bulletin is not None
        and bulletin.text == briefing
        and bulletin.generator.startswith("llm:gemini")
    )
    sent = json.dumps(stub.requests[-1].body)
    assert "coral reef paper" in sent and "Deploys run through" in sent and "Bob" not in sent


def test_llm_failure_falls_back_to_the_deterministic_bulletin(
    store: Store, config: Config, clock: FakeClock, stub: GeminiStub
) -> None:
    stub.fail_always(500)
    bulletin = BulletinBuilder(store, config, clock, gemini(stub)).current(ALICE, VISIBLE)
    assert stub.count(":generateContent") >= 1
    expected = BulletinBuilder(store, config, clock).generate(VISIBLE, clock.now)[0]
    assert (
        bulletin is not None and bulletin.generator == "deterministic" and bulletin.text == expected
    )


def test_session_start_never_waits_for_the_model_and_the_job_upgrades_later(
    store: Store, config: Config, clock: FakeClock, stub: GeminiStub
) -> None:
    builder = BulletinBuilder(store, config, clock, gemini(stub))
    quick = builder.current(ALICE, VISIBLE, synthesise=False)
    assert quick is not None and quick.generator == "deterministic"
    assert stub.count(":generateContent") == 0
    # nothing changed: served as it is
    assert builder.current(ALICE, VISIBLE, synthesise=False) == quick
    stub.replies.append("Alice is a marine biologist in Lisbon.")
    upgraded = builder.current(ALICE, VISIBLE)  # what the maintenance job asks for, within the hour
    assert (
        upgraded is not None
        and upgraded.generator.startswith("llm:")
        and upgraded.state_hash == quick.state_hash
    )
    assert builder.current(ALICE, VISIBLE) == upgraded  # upgraded once per memory state
    assert stub.count(":generateContent") == 1


def test_a_failed_upgrade_adds_no_copy(
    store: Store, config: Config, clock: FakeClock, stub: GeminiStub
) -> None:
    builder = BulletinBuilder(store, config, clock, gemini(stub))
    quick = builder.current(ALICE, VISIBLE, synthesise=False)
    stub.fail_always(500)
    assert builder.current(ALICE, VISIBLE) == quick
    assert store.bulletins.latest(ALICE) == quick


@pytest.mark.parametrize(
    "words,generator,max_len",
    [
        (1_600, "deterministic", 500),  # past the hard cap: not trusted, deterministic instead
        (700, "llm", 300),  # longer than configured: clipped to bulletin_llm_max_words
    ],
)
def test_overlong_llm_bulletins(
    store: Store,
    config: Config,
    clock: FakeClock,
    stub: GeminiStub,
    words: int,
    generator: str,
    max_len: int,
) -> None:
    stub.replies.append(" ".join(["Alice studies reefs."] * (words // 3)))
    bulletin = BulletinBuilder(store, config, clock, gemini(stub)).current(ALICE, VISIBLE)
    assert bulletin is not None and bulletin.generator.startswith(generator)
    assert len(bulletin.text.split()) <= max_len


def test_changes_since_notes_what_was_added_and_dropped(
    store: Store, config: Config, clock: FakeClock
) -> None:
    builder = BulletinBuilder(store, config, clock)
    first = builder.current(ALICE, VISIBLE)
    store.insert_memory(
        NewMemory(ALICE, MemoryType.GOAL, "Alice wants to learn Portuguese.", Source.TURN)
    )
    todo = store.memories.find([ALICE], MemoryFilter(types=[MemoryType.TODO]))[0]
    store.forget(todo.id, reason="done", actor="test")
    second = builder.current(ALICE, VISIBLE, force=True)
    assert first is not None and second is not None
    note = changes_since(first, second)
    lines = note.splitlines()
    assert 2 <= len(lines) <= 6
    assert any(line.startswith("+ ") and "Portuguese" in line for line in lines)
    assert any("no longer current" in line and "diving licence" in line for line in lines)
    assert changes_since(second, second) == ""
    rewritten = dataclasses.replace(
        second, id=second.id + 1, text="Alice studies reefs.", hash="other"
    )
    # same memory state: nothing changed for the session
    assert changes_since(second, rewritten) == ""
