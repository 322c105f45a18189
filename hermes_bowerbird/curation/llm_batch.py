"""The batched extraction prompt for a language model, and strict parsing of its JSON decisions."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import LLMError
from ..types import MEMORY_TYPES, Candidate, Memory, MemoryType, Relation, type_spec, type_specs
from ..vocabulary import importance_floor, prompt_keys
from .questions import MAX_QUESTION_CHARS, MAX_QUESTIONS
from .redact import redact

ACTIONS = ("add", "update", "supersede", "ignore")
# an `ignore` of an existing memory that brings questions for it: they are stored with that memory
ASK = "ask"
MAX_CONTENT_CHARS = 600
_TURN_CHARS = 2_000
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


def system_prompt() -> str:
    """The extraction instructions; the kinds of memory named are the extractable types of the TypeSpec table."""
    kinds = [s.description for s in type_specs() if s.extractable]
    return (
        "You maintain a long-term memory about one user. From the conversation turns you are given, decide which "
        f"durable facts are worth remembering: {', '.join(kinds)}. Ignore greetings, thanks, small "
        "talk, one-off requests and anything only true for this moment. Write each memory as one short standalone "
        'sentence in the third person ("The user ..."). Compare with the existing memories: if a turn changes one '
        "of them (a new city, a new job, a changed plan), answer `supersede` with its id; if it only rephrases or "
        "refines one, answer `update` with its id; if it is already known, answer `ignore` with its id. For each "
        f"memory you add, update, supersede or ignore, write up to {MAX_QUESTIONS} short questions the user might "
        'later ask you to get it back, in the user\'s own voice and in different words ("who do I report to?", '
        '"what is my boss called?"). Reply with JSON only.'
    )


def response_schema() -> dict[str, Any]:
    """The JSON schema the model answers in; its type enum is the extractable types of the TypeSpec table."""
    return {
        "type": "object",
        "required": ["decisions"],
        "properties": {
            "decisions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["action", "content"],
                    "properties": {
                        "action": {"enum": list(ACTIONS)},
                        "type": {"enum": [str(s.name) for s in type_specs() if s.extractable]},
                        "content": {"type": "string"},
                        "subject": {
                            "type": ["string", "null"],
                            "description": "key of the changing fact it states (a newer memory with the same key "
                            f"supersedes the older one): one of {', '.join(prompt_keys())}; a "
                            "key of the same form only when none of these fits; null for a fact "
                            "that does not change",
                        },
                        "importance": {"type": "number", "minimum": 0, "maximum": 1},
                        "target_id": {
                            "type": ["integer", "null"],
                            "description": "existing memory id for update/supersede/ignore",
                        },
                        "turn": {
                            "type": ["integer", "null"],
                            "description": "number of the turn it comes from",
                        },
                        "entities": {"type": "array", "items": {"type": "string"}},
                        "questions": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "questions the user might ask to get this memory back, in the "
                            "user's voice",
                        },
                        "relations": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["relation", "target_id"],
                                "properties": {
                                    "relation": {
                                        "enum": [
                                            str(r) for r in Relation if r is not Relation.UPDATES
                                        ]
                                    },
                                    "target_id": {"type": "integer"},
                                },
                            },
                        },
                    },
                },
            }
        },
    }


@dataclass(frozen=True)
class BatchTurn:
    """One captured turn as the model sees it (numbered from 1 within the batch)."""

    number: int
    user: str
    assistant: str


@dataclass(frozen=True)
class Decision:
    action: str
    candidate: Candidate
    turn: int | None = None


def build_prompt(turns: Sequence[BatchTurn], existing: Sequence[Memory]) -> str:
    """One prompt for the whole batch: the schema, the nearest existing memories, then the turns."""
    lines = [
        "Answer with JSON matching this schema:",
        json.dumps(response_schema(), separators=(",", ":")),
        "",
    ]
    lines.append("Existing memories (id, type, subject, content):")
    if existing:
        lines += [f"- [{m.id}] {m.type} {m.subject or '-'}: {m.content}" for m in existing]
    else:
        lines.append("- (none)")
    lines += ["", "Conversation turns:"]
    for turn in turns:
        lines.append(f"## Turn {turn.number}")
        if turn.user.strip():
            lines.append(f"User: {turn.user.strip()[:_TURN_CHARS]}")
        if turn.assistant.strip():
            lines.append(f"Assistant: {turn.assistant.strip()[:_TURN_CHARS]}")
    return "\n".join(lines)


def parse_decisions(text: str, *, known_ids: Collection[int], turns: int) -> list[Decision]:
    """Validated decisions from the model's reply; LLMError when the reply is not the JSON asked for.

    Individual malformed entries are dropped; update/supersede with an unknown target become plain adds.
    """
    payload = _load_json(text)
    items = payload.get("decisions") if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        raise LLMError("the model's JSON has no 'decisions' list")
    out = []
    for item in items:
        decision = _decision(item, known_ids, turns) if isinstance(item, dict) else None
        if decision is not None:
            out.append(decision)
    return out


def _load_json(text: str) -> Any:
    body = _FENCE.sub("", text.strip())
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise LLMError("the model's reply contains no JSON")
    try:
        return json.loads(body[start:])
    except json.JSONDecodeError:
        end = max(body.rfind("}"), body.rfind("]"))
        try:
            return json.loads(body[start : end + 1])
        except json.JSONDecodeError as exc:
            raise LLMError(f"the model's reply is not valid JSON: {exc}") from exc


def _decision(item: dict[str, Any], known_ids: Collection[int], turns: int) -> Decision | None:
    action = str(item.get("action", "")).strip().lower()
    content = item.get("content")
    if action not in ACTIONS or not isinstance(content, str) or not content.strip():
        return None
    memory_type = _memory_type(item.get("type"))
    subject = _subject(item.get("subject"))
    target = _int(item.get("target_id"))
    if action in ("update", "supersede") and (target is None or target not in known_ids):
        action, target = "add", None
    questions = _questions(item.get("questions"))
    if action == "ignore" and target in known_ids and questions:
        action = ASK
    candidate = Candidate(
        type=memory_type,
        content=redact(" ".join(content.split()))[:MAX_CONTENT_CHARS],
        importance=max(_importance(item.get("importance"), memory_type), importance_floor(subject)),
        confidence=0.85,
        subject=subject,
        entities=_strings(item.get("entities")),
        role="model",
        supersedes=target if action in ("update", "supersede", ASK) else None,
        relations=_relations(item.get("relations"), known_ids),
        questions=questions,
    )
    turn = _int(item.get("turn"))
    return Decision(action, candidate, turn if turn is not None and 1 <= turn <= turns else None)


def _memory_type(value: Any) -> MemoryType:
    """The extractable type the model named; a fact when it named none (or one extraction may not produce)."""
    spec = MEMORY_TYPES.get(str(value).strip().lower())
    return spec.name if spec is not None and spec.extractable else MemoryType.FACT


def _importance(value: Any, memory_type: MemoryType) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return type_spec(memory_type).importance


def _subject(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join(value.strip().lower().split())[:80]


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v.strip()[:80] for v in value if isinstance(v, str) and v.strip())[:10]


def _questions(value: Any) -> tuple[str, ...]:
    """The model's questions, each one line of at most MAX_QUESTION_CHARS, secrets redacted, each once."""
    if not isinstance(value, list):
        return ()
    found = (
        redact(" ".join(v.split()))[:MAX_QUESTION_CHARS]
        for v in value
        if isinstance(v, str) and v.strip()
    )
    return tuple(dict.fromkeys(found))[:MAX_QUESTIONS]


def _relations(value: Any, known_ids: Collection[int]) -> tuple[tuple[Relation, int], ...]:
    if not isinstance(value, list):
        return ()
    out = []
    for item in value:
        if not isinstance(item, dict):
            continue
        target = _int(item.get("target_id"))
        try:
            relation = Relation(str(item.get("relation", "")).strip().lower())
        except ValueError:
            continue
        if target in known_ids and relation is not Relation.UPDATES:
            out.append((relation, int(target)))  # type: ignore[arg-type]
    return tuple(out)
