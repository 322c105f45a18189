"""Who a person is to the user: role words become aliases of the person's entity, and questions by role reach them."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_bowerbird import render
from hermes_bowerbird.config import load_config
from hermes_bowerbird.curation.entities import find_entities
from hermes_bowerbird.curation.roles import find_roles
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import RecallOptions, TurnCapture
from hermes_bowerbird.retrieval import RecallRequest
from hermes_bowerbird.serialize import detail_json
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import MemoryFilter

SCOPE = "profile:default"


def _roles(text: str) -> dict[str, tuple[str, ...]]:
    return find_roles(text, dict(find_entities(text)))


@pytest.mark.parametrize(
    "text, name, aliases",
    [
        ("My husband Tomasz works nights.", "Tomasz", ("husband", "hubby", "spouse", "partner")),
        ("It's for my best friend Joaquin, he turns 40.", "Joaquin", ("best friend", "friend")),
        ("My manager is Priya Raman.", "Priya Raman", ("manager", "boss")),
        ("My daughter's name is Clementine.", "Clementine", ("daughter", "kid", "child")),
        ("I invited Joaquin, my oldest friend.", "Joaquin", ("friend", "mate")),
        ("Priya Raman is my manager.", "Priya Raman", ("manager", "boss")),
        # a new holder: the role is then both people's, so a question by role names neither
        ("My violin teacher is now Mr Haddad.", "Mr Haddad", ("teacher",)),
        ("my older sister Ines is a vet", "Ines", ("sister", "sibling")),
        ("Our cat, Miso, hates the vet.", "Miso", ("cat", "pet")),
        ("We have a dog called Rex.", "Rex", ("dog", "pet")),
        ("I have a younger sister, Ines.", "Ines", ("sister", "sibling")),
        ("my dog called Rex is ill", "Rex", ("dog", "pet")),
        ("My mother-in-law Margaret is staying.", "Margaret", ("mother-in-law",)),
        ("Ask my mum Rosa.", "Rosa", ("mum", "mother", "mom")),
        ("User's wife is Maria Silva.", "Maria Silva", ("wife", "spouse")),  # the agent's note
        ("The user's dog Biscuit is 3.", "Biscuit", ("dog", "pet")),
        (
            "contractor is Bill Novak, his cell is 614-555-0142",
            "Bill Novak",
            ("contractor", "builder"),
        ),
        ("Good news. new manager is Tom Becker.", "Tom Becker", ("manager", "boss")),
        # a terse note's role, the "my" unsaid
        ("Lachlan (husband) offshore. 3 weeks on 3 off.", "Lachlan", ("husband", "spouse")),
        ("Childminder Gail Urquhart. Tue + Thu.", "Gail Urquhart", ("childminder", "babysitter")),
        ("Sometimes babysitter Chloe come, she is a student", "Chloe", ("babysitter",)),
        ("Son is Ren, 7 years old.", "Ren", ("son", "kid")),
        ("I am living in Victoria BC with husband Dario and 2 kids.", "Dario", ("husband",)),
    ],
)
def test_a_persons_role_gives_its_aliases(
    text: str, name: str | None, aliases: tuple[str, ...]
) -> None:
    found = _roles(text)
    if name is None:
        assert found == {}
    else:
        assert set(aliases) <= set(found[name])


@pytest.mark.parametrize(
    "text",
    [
        "I told Sam my dog is ill.",  # Sam is not the dog
        "My wife and I went to Paris.",
        "My son's teacher Mrs Patel called.",  # the son's teacher, not the user's
        "Her husband Tomasz is a nurse.",  # someone else's relation
        "My husband is Italian.",  # a name, but not a person's
    ],
)
def test_no_role_without_the_speakers_own_named_person(text: str) -> None:
    assert _roles(text) == {}


# -- in the store ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, aliases",
    [
        (
            "We live in Leeds with our two kids, Mia (7) and Leo (4).",
            {"Mia": ("kid", "child"), "Leo": ("kid", "child")},
        ),
        ("my kids Sam and Alex", {"Sam": ("kid", "child"), "Alex": ("kid", "child")}),
        (
            "My sons Tom, Ben and Max play rugby.",
            {name: ("son", "kid", "child", "boy") for name in ("Tom", "Ben", "Max")},
        ),
        ("My kids and Sam went out.", {}),  # Sam is not one of them
        (
            "Notes for you. Kids: Euan 4, Elspeth 2. Both at Wee Sparrows nursery.",
            {"Euan": ("kid", "child"), "Elspeth": ("kid", "child")},
        ),
    ],
)
def test_children_named_together_are_each_a_kid(
    text: str, aliases: dict[str, tuple[str, ...]]
) -> None:
    assert _roles(text) == aliases


def test_an_alias_several_people_share_names_none_and_a_name_wins(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    clementine = store.graph.upsert_entity(SCOPE, "Clementine", "clementine", "person")
    theo = store.graph.upsert_entity(SCOPE, "Theo", "theo", "person")
    store.graph.add_aliases(clementine, [("daughter", "daughter"), ("kid", "kid")])
    store.graph.add_aliases(theo, [("son", "son"), ("kid", "kid"), ("clementine", "clementine")])
    norms = store.graph.names_and_roles([SCOPE])[0]
    assert norms["daughter"] == clementine
    assert norms["son"] == theo
    assert "kid" not in norms
    assert norms["clementine"] == clementine
    assert store.graph.get_entities([theo])[theo].aliases == ("son", "kid", "clementine")
    store.close()


def test_an_alias_in_another_scope_is_not_shared(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    mine = store.graph.upsert_entity("user:a", "Tomasz", "tomasz", "person")
    theirs = store.graph.upsert_entity("user:b", "Piotr", "piotr", "person")
    store.graph.add_aliases(mine, [("husband", "husband")])
    store.graph.add_aliases(theirs, [("husband", "husband")])
    assert store.graph.names_and_roles(["user:a"])[0]["husband"] == mine
    assert store.graph.names_and_roles(["user:b"])[0]["husband"] == theirs
    store.close()


# -- end to end ----------------------------------------------------------------------------------------------


def _tell(engine: Bowerbird, user: str, assistant: str = "Noted.") -> None:
    engine.capture_turn(TurnCapture(user, assistant, scope=SCOPE, session_id="s1"))
    engine.curate_now()


def _tomasz(engine: Bowerbird) -> int:
    return engine.store.graph.names_and_roles([SCOPE])[0]["tomasz"]


def test_the_users_words_make_a_role_an_alias(engine: Bowerbird) -> None:
    _tell(engine, "My husband Tomasz is back from Krakow.")
    tomasz = _tomasz(engine)
    assert engine.store.graph.get_entities([tomasz])[tomasz].aliases[:2] == ("husband", "hubby")
    analysis = engine.retriever.analyze("What does my hubby do for work?", [SCOPE])
    assert tomasz in analysis.entity_ids


def test_a_remembered_note_makes_a_role_an_alias(engine: Bowerbird) -> None:
    engine.remember("User's husband Tomasz works nights at the Royal Infirmary.", scope=SCOPE)
    tomasz = _tomasz(engine)
    assert "spouse" in engine.store.graph.get_entities([tomasz])[tomasz].aliases
    assert engine.store.graph.names_and_roles([SCOPE])[0]["spouse"] == tomasz


def test_the_assistants_words_make_no_alias(engine: Bowerbird) -> None:
    _tell(engine, "Tomasz is visiting.", "My brother Tomasz says hi.")
    tomasz = _tomasz(engine)
    assert engine.store.graph.get_entities([tomasz])[tomasz].aliases == ()


def test_a_question_by_role_reaches_what_was_said_by_name(engine: Bowerbird) -> None:
    _tell(engine, "My husband Tomasz is a nurse.")
    _tell(engine, "Tomasz's birthday is the 12th of April.")
    hits = engine.recall(
        "Which date should I keep free for my spouse?",
        scopes=[SCOPE],
        options=RecallOptions(explain=True),
    )
    birthday = next(h for h in hits if "April" in h.content)
    assert birthday.signals.get("coverage", 0.0) > 0


def test_a_memory_shows_its_people_with_their_roles(engine: Bowerbird) -> None:
    _tell(engine, "My husband Tomasz is a nurse at the Royal Infirmary.")
    memory = engine.store.memories.find([SCOPE], MemoryFilter())[0]
    detail = engine.inspect.show(memory.id, scopes=[SCOPE])
    assert "Tomasz (husband, hubby, spouse, partner, other half)" in render.detail_text(
        detail, engine.clock()
    )
    people = [e for e in detail_json(detail)["entities"] if e["name"] == "Tomasz"]
    assert people[0]["aliases"] == ["husband", "hubby", "spouse", "partner", "other half"]


def test_a_terse_users_notes_of_their_people_are_kept(engine: Bowerbird) -> None:
    """Notes that name the children and the husband by role without "my" make what is noted of them memories."""
    _tell(engine, "Notes for you. Kids: Euan 4, Elspeth 2. Both at Wee Sparrows nursery, Culloden.")
    _tell(engine, "Elspeth - egg allergy. No egg at all incl. baked.")
    _tell(engine, "Lachlan (husband) offshore. 3 weeks on 3 off. Back 14th.")
    _tell(engine, "Euan swimming Fri 4pm, Inverness Leisure.")
    contents = [m.content for m in engine.store.memories.find([SCOPE], MemoryFilter())]
    assert any(c.startswith("Elspeth - egg allergy") for c in contents)
    assert any(c.startswith("Lachlan (husband) offshore") for c in contents)
    assert any(c.startswith("Euan swimming Fri 4pm") for c in contents)


def test_a_remembered_note_naming_someone_by_its_form_alone_is_kept(engine: Bowerbird) -> None:
    memory = engine.remember("Lachlan (husband) offshore, 3 weeks on 3 off.", scope=SCOPE)
    assert memory.content.startswith("Lachlan (husband)")


def test_alias_names_map_a_role_to_its_one_persons_name(tmp_path: Path) -> None:
    """Only an alias of exactly one person in the scopes asked, and never another entity's own name."""
    store = Store.open(tmp_path / "m.db")
    tomasz = store.graph.upsert_entity(SCOPE, "Tomasz", "tomasz", "person")
    mia = store.graph.upsert_entity(SCOPE, "Mia", "mia", "person")
    leo = store.graph.upsert_entity(SCOPE, "Leo", "leo", "person")
    elsewhere = store.graph.upsert_entity("user:b", "Piotr", "piotr", "person")
    store.graph.add_aliases(tomasz, [("husband", "husband"), ("mia", "mia")])
    store.graph.add_aliases(mia, [("kid", "kid"), ("daughter", "daughter")])
    store.graph.add_aliases(leo, [("kid", "kid")])
    store.graph.add_aliases(elsewhere, [("brother", "brother")])
    assert store.graph.names_and_roles([SCOPE])[1] == {"husband": "Tomasz", "daughter": "Mia"}
    assert store.graph.names_and_roles(["user:b"])[1] == {"brother": "Piotr"}
    store.close()


def test_a_question_by_role_ranks_what_was_said_by_name(
    tmp_path: Path, minilm: LocalEmbedder
) -> None:
    """ "A present for my husband" shares no word and little meaning with "Tomasz's birthday": the role's name,
    put after it, brings that turn into the first results; the gate still reads the question without it."""
    config = load_config(
        tmp_path,
        environ={"BOWERBIRD_LLM_BACKEND": "none", "BOWERBIRD_MAINTENANCE_ENABLED": "false"},
    )
    engine = Bowerbird(config, embedder=minilm, background=False)
    try:
        for text in (
            "My husband Tomasz works night shifts as a nurse at the Royal Infirmary.",
            "Tomasz's birthday is the 12th of April, remind me nearer the time?",
            "I started learning the cello in January, it's humbling.",
            "We're saving for a house deposit, the target is 60k by next summer.",
            "My shoe size is 44 EU, in case you ever need it for gift ideas.",
            "Can you help me write a birthday message? It's for my best friend Joaquin.",
        ):
            _tell(engine, text)
        question = "When should I have a present ready for my husband?"
        assert engine.retriever.analyze(question, [SCOPE]).role_names == ("Tomasz",)
        hits = engine.recall(question, scopes=[SCOPE], options=RecallOptions(explain=True))
        assert any("12th of April" in h.content for h in hits[:3])
        gated = engine.retriever.search(
            RecallRequest(question, (SCOPE,), limit=5, min_relevance=0.01, explain=True),
            touch=False,
        )
        birthday = next(h for h in gated if "12th of April" in h.content)
        assert birthday.signals["gate_cosine"] < birthday.signals["cosine"]
        # who holds the role: what names them answers, however little it shares with the question
        who = engine.retriever.search(
            RecallRequest("Who is my closest mate?", (SCOPE,), limit=5, min_relevance=0.5),
            touch=False,
        )
        assert any("Joaquin" in h.content for h in who)
    finally:
        engine.shutdown()


def test_a_role_one_person_holds_at_a_time_moves_to_the_new_holder(engine: Bowerbird) -> None:
    _tell(engine, "My manager is Priya Raman.")
    _tell(engine, "My violin teacher is called Ms Okonkwo.")
    _tell(engine, "Priya left last month, my new manager is Tom Becker.")
    _tell(engine, "My violin teacher is now Mr Haddad.")
    norms = engine.store.graph.names_and_roles([SCOPE])[0]
    assert norms["manager"] == norms["tom becker"]
    assert engine.store.graph.names_and_roles([SCOPE])[1]["boss"] == "Tom Becker"
    assert "teacher" not in norms  # two teachers at once: a question by role names neither
    analysis = engine.retriever.analyze("What does my boss want from me?", [SCOPE])
    assert analysis.role_names == ("Tom Becker",)
