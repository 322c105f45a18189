"""Memories found by the questions they answer: the rules that write them, their table and vectors, and recall."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_bowerbird.config import load_config
from hermes_bowerbird.curation.questions import ASKS, MAX_QUESTIONS, Known, questions_for
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import RecallOptions
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewMemory, QuestionOrigin, Source
from hermes_bowerbird.vocabulary import SUBJECTS

SCOPE = "user:a"


@pytest.mark.parametrize(
    ("known", "expected"),
    [
        (
            Known(MemoryType.FACT, "My manager is Priya Raman.", "user:manager"),
            ("who is my manager?", "who do I report to?"),
        ),
        (
            Known(MemoryType.IDENTITY, "I work at Globex.", "user:employer"),
            ("where do I work?", "who is my employer?"),
        ),
        (
            Known(MemoryType.FACT, "My dentist is Dr. Patel.", "user:contact:dentist"),
            ("who is my dentist?",),
        ),
        (
            Known(MemoryType.IDENTITY, "I live in Porto.", "user:residence"),
            ("where do I live?", "what timezone am I in?"),
        ),
        # a role the text gives someone, with no subject slot
        (
            Known(
                MemoryType.FACT,
                "Ask Dana, my boss, before Friday.",
                roles={"Dana": ("boss", "manager")},
            ),
            ("who is my boss?", "who do I report to?"),
        ),
        # a tool that fills a slot: the slot's questions
        (
            Known(MemoryType.FACT, "The laptop runs Fedora 41.", entities=("Fedora",)),
            ("what operating system do I use?",),
        ),
        # a preference about the language of replies, by type and words
        (
            Known(MemoryType.PREFERENCE, "Please always answer me in British English."),
            ("how should you write to me?",),
        ),
        # the question a first-person statement answers, on text no row was written from
        (
            Known(MemoryType.FACT, "My weekly piano lesson is on Thursday at 6pm."),
            ("when is my weekly piano lesson?",),
        ),
        (
            Known(MemoryType.FACT, "Our staging cluster runs on Hetzner."),
            ("what does our staging cluster run on?",),
        ),
        (
            Known(MemoryType.GOAL, "I'm saving up for a sailing course."),
            ("what am I saving up for?",),
        ),
        (Known(MemoryType.FACT, "I drive a red Volvo."), ("what do I drive?",)),
        (
            Known(MemoryType.PREFERENCE, "I take my coffee with oat milk."),
            ("how do I take my coffee?",),
        ),
        # a slot no row names is asked after by its name
        (
            Known(MemoryType.FACT, "We use Prisma for the schema.", "project:orm"),
            ("which orm do we use?",),
        ),
        (
            Known(MemoryType.FACT, "Our issues live in Linear.", "project:issue-tracker"),
            ("which issue tracker do we use?",),
        ),
        # someone the user calls by a role elsewhere, told of by name
        (
            Known(
                MemoryType.FACT,
                "Tomasz's birthday is on the 12th of April.",
                called={"Tomasz": "husband"},
            ),
            ("when is my husband's birthday?",),
        ),
        # a role and its first other word
        (
            Known(
                MemoryType.FACT, "My sister Ines is a vet.", roles={"Ines": ("sister", "sibling")}
            ),
            ("what does my sister do?", "what does my sibling do?"),
        ),
    ],
)
def test_questions_come_from_what_curation_knows(known: Known, expected: tuple[str, ...]) -> None:
    written = questions_for(known)
    assert [q for q in expected if q not in written] == []


@pytest.mark.parametrize(
    "content",
    [
        "Nice weather today.",
        "Thanks, that worked!",
        "I think so.",
    ],
)
def test_text_that_states_nothing_of_the_user_gets_no_question(content: str) -> None:
    assert questions_for(Known(MemoryType.OBSERVATION, content)) == ()


def test_a_memory_gets_at_most_max_questions_each_once() -> None:
    written = questions_for(
        Known(
            MemoryType.IDENTITY,
            "My wife Hannah lives in Porto.",
            "user:residence",
            ("Hannah", "Porto"),
            {"Hannah": ("wife", "spouse", "partner")},
        )
    )
    assert (len(written) <= MAX_QUESTIONS, len(set(written)) == len(written)) == (True, True)


def test_every_table_row_names_a_declared_slot_a_role_or_a_type() -> None:
    keys = {s.key for s in SUBJECTS}
    types = {f"type:{t}" for t in MemoryType}
    kinds = {"user:", "project:"}
    odd = [r.by for r in ASKS if r.by not in keys | types | kinds and not r.by.startswith("role:")]
    assert odd == []


# -- the table of questions and their vectors ------------------------------------------------------------------
def _memory(store: Store, content: str = "My manager is Priya.") -> int:
    return store.insert_memory(
        NewMemory(scope=SCOPE, type=MemoryType.FACT, content=content, source=Source.TOOL)
    ).id


def test_questions_are_stored_once_each_with_their_origin(store: Store) -> None:
    memory_id = _memory(store)
    added = store.questions.add(
        memory_id, ["who is my manager?", "who is my manager?"], QuestionOrigin.RULES
    )
    again = store.questions.add(
        memory_id, ["who is my manager?", "who is my boss?"], QuestionOrigin.MODEL
    )
    stored = [(q.text, q.origin) for q in store.questions.of([memory_id])[memory_id]]
    assert ([t for _, t in added], [t for _, t in again]) == (
        ["who is my manager?"],
        ["who is my boss?"],
    )
    assert stored == [
        ("who is my manager?", QuestionOrigin.RULES),
        ("who is my boss?", QuestionOrigin.MODEL),
    ]


def test_a_models_questions_replace_those_of_the_rules(store: Store) -> None:
    memory_id = _memory(store)
    store.questions.add(memory_id, ["who is my manager?"], QuestionOrigin.RULES)
    store.questions.add(memory_id, ["who leads my team?"], QuestionOrigin.MODEL)
    dropped = store.questions.drop_rules(memory_id)
    assert (len(dropped), [q.text for q in store.questions.of([memory_id])[memory_id]]) == (
        1,
        ["who leads my team?"],
    )


def test_question_vectors_are_a_kind_of_their_own(store: Store) -> None:
    import numpy as np

    memory_id = _memory(store)
    [(question_id, _)] = store.questions.add(
        memory_id, ["who is my manager?"], QuestionOrigin.RULES
    )
    store.vectors.put(ItemKind.QUESTION, "m", [(question_id, np.ones(4, dtype=np.float32) / 2)])
    ids, matrix = store.vectors.load(ItemKind.QUESTION, "m", 4)
    assert (ids.tolist(), matrix.shape) == ([question_id], (1, 4))
    assert store.questions.memories_of([question_id]) == {question_id: memory_id}


def test_forgetting_drops_the_question_vectors_and_purging_the_questions(store: Store) -> None:
    import numpy as np

    memory_id = _memory(store)
    [(question_id, _)] = store.questions.add(
        memory_id, ["who is my manager?"], QuestionOrigin.RULES
    )
    store.vectors.put(ItemKind.QUESTION, "m", [(question_id, np.ones(4, dtype=np.float32) / 2)])
    forgotten = store.forget(memory_id, reason="test", actor="test")
    assert (forgotten, store.vectors.ids(ItemKind.QUESTION, "m", 4).tolist()) == ([question_id], [])
    assert store.search.ids_after(ItemKind.QUESTION, [SCOPE]) == [question_id]
    assert store.vectors.missing_texts(ItemKind.QUESTION, "m", 4, 10) == []
    store.purge(memory_id, reason="test", actor="test")
    assert (store.questions.of([memory_id]), store.health.orphan_counts()["question_vectors"]) == (
        {},
        0,
    )


def test_live_questions_without_a_vector_are_left_for_catch_up(store: Store) -> None:
    memory_id = _memory(store)
    store.questions.add(memory_id, ["who is my manager?"], QuestionOrigin.RULES)
    missing = store.vectors.missing_texts(ItemKind.QUESTION, "m", 4, 10)
    assert [text for _, text in missing] == ["who is my manager?"]


def test_other_scopes_questions_are_not_searched(store: Store) -> None:
    memory_id = _memory(store)
    store.questions.add(memory_id, ["who is my manager?"], QuestionOrigin.RULES)
    assert store.search.ids_after(ItemKind.QUESTION, ["user:b"]) == []


# -- through the engine: curation writes them, recall finds the memory by them -----------------------------------
@pytest.fixture
def home(tmp_path: Path, minilm: LocalEmbedder, storage_env: Path | str) -> Iterator[Bowerbird]:
    """An engine with the real model on each backend."""
    environ = {"BOWERBIRD_LLM_BACKEND": "none", "BOWERBIRD_MAINTENANCE_ENABLED": "false"}
    if isinstance(storage_env, str):
        environ["BOWERBIRD_DATABASE_URL"] = storage_env
    config = load_config(tmp_path, environ=environ)
    engine = Bowerbird(config, background=False, embedder=minilm)
    yield engine
    engine.shutdown()


def test_a_remembered_memory_gets_the_rules_questions_with_vectors(home: Bowerbird) -> None:
    memory = home.remember("My manager is Priya Raman.", scope=SCOPE)
    questions = home.store.questions.of([memory.id])[memory.id]
    model = home.vectors.embeddings.current()
    assert model is not None
    stored = set(
        home.store.vectors.ids(ItemKind.QUESTION, model.model_name, model.dimension).tolist()
    )
    assert "who do I report to?" in [q.text for q in questions]
    assert {q.origin for q in questions} == {QuestionOrigin.RULES}
    assert {q.id for q in questions} <= stored


def test_recall_finds_a_memory_by_a_question_it_answers(home: Bowerbird) -> None:
    home.remember("My manager is Priya Raman.", scope=SCOPE)
    home.remember("I take the train to the office.", scope=SCOPE)
    hits = home.recall(
        "Who do I report to?", scopes=(SCOPE,), options=RecallOptions(limit=3, explain=True)
    )
    assert "Priya" in hits[0].content
    assert hits[0].signals["question"] > 0.9


def test_a_forgotten_memory_is_not_found_by_its_questions(home: Bowerbird) -> None:
    memory = home.remember("My manager is Priya Raman.", scope=SCOPE)
    home.forget(memory.id, scopes=(SCOPE,))
    hits = home.recall("Who do I report to?", scopes=(SCOPE,), options=RecallOptions(limit=3))
    assert [h.id for h in hits if h.kind is ItemKind.MEMORY] == []


def test_reindex_gives_memories_from_before_questions_theirs_and_embeds_them(
    home: Bowerbird,
) -> None:
    memory = home.remember("My manager is Priya Raman.", scope=SCOPE)
    home.store.questions.drop_rules(memory.id)  # as a store from before questions existed
    home.store.health.delete_orphans()
    embedded = home.admin.reindex()
    questions = home.store.questions.of([memory.id])[memory.id]
    model = home.vectors.embeddings.current()
    assert model is not None
    stored = set(
        home.store.vectors.ids(ItemKind.QUESTION, model.model_name, model.dimension).tolist()
    )
    assert ("who do I report to?" in [q.text for q in questions], embedded) == (
        True,
        len(questions),
    )
    assert {q.id for q in questions} <= stored
    assert home.admin.reindex() == 0  # nothing left: a second run finds the work done


def test_show_lists_the_questions_a_memory_is_found_by(home: Bowerbird) -> None:
    from hermes_bowerbird.render import detail_text
    from hermes_bowerbird.serialize import detail_json

    memory = home.remember("My manager is Priya Raman.", scope=SCOPE)
    detail = home.inspect.show(memory.id, scopes=(SCOPE,))
    assert {"text": "who do I report to?", "origin": "rules"} in detail_json(detail)["questions"]
    assert "  who do I report to?  (rules)" in detail_text(detail, home.clock()).splitlines()


def test_the_roles_the_user_gave_people_are_read_back_by_name(home: Bowerbird) -> None:
    from hermes_bowerbird.curation.curator import called_by_role

    home.remember("My husband Tomasz is a nurse.", scope=SCOPE)
    assert called_by_role(home.store, SCOPE) == {"Tomasz": "husband"}


def test_what_is_told_of_someone_by_name_is_asked_after_by_their_role() -> None:
    unknown = questions_for(Known(MemoryType.FACT, "Tomasz's birthday is on the 12th of April."))
    assert unknown == ()
