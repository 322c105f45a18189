"""The subject vocabulary: every declared key is one curation writes, and every key shown to a model is declared."""

from __future__ import annotations

import json
import re

import pytest

from hermes_bowerbird.curation.extract import extract_candidates
from hermes_bowerbird.curation.llm_batch import BatchTurn, build_prompt
from hermes_bowerbird.curation.subjects import subject_of
from hermes_bowerbird.curation.tool_names import (
    CHOSEN_ONLY_WITH_A_CAPITAL,
    DISPLAY,
    EVERYDAY_WORDS,
    KNOWN_TOOLS,
    SLOT_OF,
)
from hermes_bowerbird.retrieval.query import subject_hints
from hermes_bowerbird.types import MemoryType
from hermes_bowerbird.vocabulary import SUBJECTS, declared, prompt_keys, subject_type

# one statement per declared key (a family's statement yields one member of it)
EXAMPLES = {
    "user:name": "My name is Dana.",
    "user:age": "I'm 41 years old.",
    "user:residence": "I live in Porto now.",
    "user:home": "We bought a house last year.",
    "user:origin": "I grew up in Lyon.",
    "user:faith": "I'm Muslim.",
    "user:job": "I work as a nurse.",
    "user:employer": "I work at Google.",
    "user:work-location": "I work from home.",
    "user:relationship": "I'm married.",
    "user:children": "I have two kids.",
    "user:pet:": "We adopted a dog.",
    "user:diet": "I'm vegan.",
    "user:allergy:": "I'm allergic to peanuts.",
    "user:health:": "I was diagnosed with asthma.",
    "user:health:intolerance:": "Gluten makes me ill.",
    "user:medication:": "I take vitamin D supplements.",
    "user:weight": "I weigh 82 kg.",
    "user:metric:": "My resting heart rate is 60 now.",
    "user:manager": "My manager is Priya.",
    "user:contact:": "My dentist is Dr. Okafor.",
    "user:habit:": "I quit smoking.",
    "user:routine:": "I run every morning.",
    "user:study:": "I'm learning Japanese.",
    "user:favourite:": "My favourite band is Radiohead.",
    "user:car": "I drive a Toyota.",
    "user:vehicle:": "I bought a motorcycle.",
    "user:phone": "My phone is an iPhone.",
    "user:browser": "I switched to Firefox.",
    "user:os": "I use Linux.",
    "user:music-app": "I use Spotify.",
    "user:email": "I moved to Fastmail.",
    "user:password-manager": "I use Bitwarden.",
    "user:reply-language": "From now on, answer me in Portuguese.",
    "user:phone-number": "My new number is 086 555 7710.",
    "project:database": "We switched to Postgres.",
    "project:frontend-framework": "We use React.",
    "project:backend-framework": "We use Django.",
    "project:hosting": "We host on Heroku.",
    "project:test-framework": "We test with pytest.",
    "project:package-manager": "We use pnpm.",
    "project:ci": "We use Jenkins.",
    "project:editor": "I use Neovim.",
    "project:chat-app": "We use Slack.",
    "project:notes-app": "I use Obsidian.",
    "project:deploy-tool": "We deploy with Ansible.",
    "project:build-tool": "We build with Bazel.",
    "project:linter": "We lint with ruff.",
    "project:formatter": "We format with black.",
    "project:monitoring": "We monitor with Grafana.",
    "project:issue-tracker": "We track tickets in Linear now.",
}


def _offered_keys() -> list[str]:
    """The subject keys the extraction prompt shows the model (from the schema it embeds)."""
    prompt = build_prompt([BatchTurn(1, "I live in Porto.", "")], [])
    schema = json.loads(prompt.splitlines()[1])
    description = schema["properties"]["decisions"]["items"]["properties"]["subject"]["description"]
    return re.findall(r"(?:user|project):[\w:<>-]+", description)


def test_every_declared_key_has_an_example() -> None:
    assert sorted(EXAMPLES) == sorted(s.key for s in SUBJECTS)


def test_the_prompt_offers_exactly_the_declared_keys() -> None:
    assert _offered_keys() == prompt_keys()


@pytest.mark.parametrize("offered", prompt_keys())
def test_every_offered_key_is_one_curation_writes(offered: str) -> None:
    key = offered.removesuffix("<kind>")
    assert declared(subject_of(EXAMPLES[key]) or "") == declared(key)


@pytest.mark.parametrize(
    ("key", "memory_type"),
    [
        ("user:name", MemoryType.IDENTITY),
        ("user:residence", MemoryType.IDENTITY),
        ("user:diet", MemoryType.PREFERENCE),
        ("user:work-location", MemoryType.FACT),
        ("user:pet:dog", MemoryType.IDENTITY),
        ("user:routine:running", MemoryType.PREFERENCE),
        ("user:favourite:band", MemoryType.PREFERENCE),
        ("user:habit:smoking", MemoryType.PREFERENCE),
        ("user:health:asthma", MemoryType.FACT),
        ("project:database", MemoryType.FACT),
        ("user:city", MemoryType.FACT),  # undeclared (a model's own key): a fact
    ],
)
def test_subject_type(key: str, memory_type: MemoryType) -> None:
    assert subject_type(key) == memory_type


@pytest.mark.parametrize(
    ("sentence", "memory_type"),
    [
        ("I live in Porto now.", MemoryType.IDENTITY),
        ("I'm vegan.", MemoryType.PREFERENCE),
        ("We adopted a dog.", MemoryType.IDENTITY),
    ],
)
def test_extraction_types_a_statement_by_its_key(sentence: str, memory_type: MemoryType) -> None:
    assert [c.type for c in extract_candidates(sentence, "")] == [memory_type]


@pytest.mark.parametrize(
    "question",
    [
        "Where do I live?",
        "Where do I work?",
        "What is my diet?",
        "Am I married?",
        "What is my name?",
        "How old am I?",
        "Where is my hometown?",
        "What car do I drive?",
        "What phone do I have?",
        "Do I have kids?",
        "What are my hobbies?",
        "Do I have pets?",
        "How is my health?",
        "What am I allergic to?",
    ],
)
def test_query_hints_name_declared_keys(question: str) -> None:
    assert [key for key in subject_hints(question) if declared(key) is None] == []


def test_the_tool_table_is_consistent() -> None:
    assert set(SLOT_OF) <= KNOWN_TOOLS
    assert set(DISPLAY) <= KNOWN_TOOLS
    assert EVERYDAY_WORDS <= KNOWN_TOOLS
    assert CHOSEN_ONLY_WITH_A_CAPITAL <= EVERYDAY_WORDS
    assert all(declared(slot) is not None for slot in SLOT_OF.values())
