"""Read chat logs (JSONL) and LoCoMo conversations into validated turn plans, then journal them in one transaction."""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InvalidInputError
from .explain import describe
from .sanitize import storable
from .timestamps import parse_iso

if TYPE_CHECKING:
    from .engine import Bowerbird

log = logging.getLogger(__name__)

CHAT_ROLES = frozenset({"user", "assistant"})
SKIPPED_ROLES = frozenset({"system", "tool", "function", "developer"})
_LOCOMO_DATE_FORMATS = (
    "%I:%M %p on %d %B, %Y",
    "%I:%M %p on %d %b, %Y",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d",
)

Progress = Callable[[int], None]
# far above any chat log or MEMORY.md; a bound, so nothing reads forever
MAX_IMPORT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class ImportedTurn:
    """One user/assistant exchange ready for the journal."""

    session_id: str
    user: str
    assistant: str
    created_at: float | None = None


@dataclass(frozen=True)
class ImportPlan:
    """Everything a file holds, validated; nothing is written until `apply_plan`."""

    format: str
    path: Path
    turns: tuple[ImportedTurn, ...]

    @property
    def sessions(self) -> int:
        return len({t.session_id for t in self.turns})


def detect_format(path: Path) -> str:
    """`markdown` for MEMORY.md / USER.md style files, `jsonl` for chat logs, `locomo` for LoCoMo JSON."""
    suffix = path.suffix.lower()
    if suffix in {".md", ".markdown", ".txt"}:
        return "markdown"
    if suffix in {".jsonl", ".ndjson"}:
        return "jsonl"
    if suffix == ".json":
        return "locomo"
    text = _read_text(path).lstrip()
    if text.startswith("["):
        return "locomo"
    return "locomo" if text.startswith("{") and _is_locomo_document(text) else "jsonl"


def _is_locomo_document(text: str) -> bool:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False  # several JSON objects, one per line: a chat log
    return isinstance(data, dict) and "conversations" in data


def check_import_file(path: Path, limit: int = MAX_IMPORT_BYTES) -> int:
    """Refuse anything but a regular file within the size bound (devices, pipes and folders never hang an
    import); returns the file's size."""
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise InvalidInputError(f"{path}: no such file") from exc
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot read it ({describe(exc)})") from exc
    if stat.S_ISDIR(info.st_mode):
        raise InvalidInputError(f"{path} is a folder; import reads one file")
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInputError(
            f"{path} is not a regular file (a device, pipe or socket); import reads regular "
            "files only"
        )
    if info.st_size > limit:
        raise InvalidInputError(
            f"{path} is {info.st_size:,} bytes; files over {limit:,} bytes are not imported"
        )
    return info.st_size


def _read_text(path: Path, limit: int = MAX_IMPORT_BYTES) -> str:
    """The whole file as UTF-8 text (a BOM is dropped); a decoding error names its line."""
    check_import_file(path, limit)
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot read it ({describe(exc)})") from exc
    if len(raw) > limit:
        raise InvalidInputError(f"{path} grew past {limit:,} bytes while being read; not imported")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInputError(f"{path}: line {line}: not valid UTF-8 (byte {exc.start})") from exc


# -- chat logs --------------------------------------------------------------------------------------------------
def parse_chat_jsonl(path: Path) -> ImportPlan:
    """Validate every line of a {role, content, timestamp, session_id} log, then pair messages into turns."""
    default_session = f"import:{path.stem}"
    messages: list[tuple[str, str, str, float | None]] = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        message = _chat_message(path, number, line, default_session)
        if message is not None:
            messages.append(message)
    if not messages:
        raise InvalidInputError(f"{path}: no user or assistant messages found")
    return ImportPlan("jsonl", path, tuple(_pair_messages(messages)))


def _chat_message(
    path: Path, number: int, line: str, default_session: str
) -> tuple[str, str, str, float | None] | None:
    where = f"{path}: line {number}"
    try:
        record = json.loads(line)
    except ValueError as exc:
        raise InvalidInputError(f"{where}: not valid JSON ({exc.args[0]})") from exc
    except RecursionError as exc:
        raise InvalidInputError(f"{where}: JSON nested too deeply") from exc
    if not isinstance(record, dict):
        raise InvalidInputError(f"{where}: expected a JSON object, got {type(record).__name__}")
    role = record.get("role")
    if not isinstance(role, str) or not role:
        raise InvalidInputError(f"{where}: missing 'role'")
    role = role.lower()
    if role in SKIPPED_ROLES:
        return None
    if role not in CHAT_ROLES:
        raise InvalidInputError(f"{where}: unknown role {role!r} (expected user or assistant)")
    content = record.get("content")
    if not isinstance(content, str):
        raise InvalidInputError(f"{where}: 'content' must be a string")
    session = record.get("session_id", default_session)
    if not isinstance(session, (str, int)) or str(session) == "":
        raise InvalidInputError(f"{where}: 'session_id' must be a non-empty string")
    return (
        role,
        storable(content),
        storable(str(session)),
        _timestamp(record.get("timestamp"), where),
    )


def _timestamp(value: Any, where: str) -> float | None:
    """Epoch seconds (number) or ISO 8601 text (naive times are read as UTC); None when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidInputError(f"{where}: 'timestamp' must be a number or an ISO 8601 date")
    if isinstance(value, (int, float)):
        # beyond year 5000 even in milliseconds; also NaN and infinities
        if not -1e13 < value < 1e14:
            raise InvalidInputError(f"{where}: 'timestamp' {value!r:.40} is out of range")
        # milliseconds are common in exports
        return float(value) / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str):
        try:
            return parse_iso(value)
        except ValueError as exc:
            raise InvalidInputError(f"{where}: cannot read timestamp {value!r}") from exc
    raise InvalidInputError(f"{where}: 'timestamp' must be a number or an ISO 8601 date")


def _pair_messages(
    messages: Sequence[tuple[str, str, str, float | None]],
) -> Iterable[ImportedTurn]:
    """A turn is the user's message(s) and the assistant's reply(ies) that follow, within one session."""
    user: list[str] = []
    assistant: list[str] = []
    session: str | None = None
    started: float | None = None
    for role, content, session_id, ts in messages:
        if session is not None and (session_id != session or (role == "user" and assistant)):
            yield ImportedTurn(session, "\n\n".join(user), "\n\n".join(assistant), started)
            user, assistant, started = [], [], None
        session = session_id
        started = started if started is not None else ts
        (user if role == "user" else assistant).append(content)
    if session is not None and (user or assistant):
        yield ImportedTurn(session, "\n\n".join(user), "\n\n".join(assistant), started)


# -- LoCoMo -----------------------------------------------------------------------------------------------------
def parse_locomo(path: Path) -> ImportPlan:
    """Validate a LoCoMo file (upstream list form or {"conversations": [...]}) and turn each line into a turn."""
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from exc
    except RecursionError as exc:
        raise InvalidInputError(f"{path}: JSON nested too deeply") from exc
    conversations = data.get("conversations") if isinstance(data, dict) else data
    if not isinstance(conversations, list) or not conversations:
        raise InvalidInputError(f"{path}: expected a list of conversations (LoCoMo format)")
    turns: list[ImportedTurn] = []
    for index, conversation in enumerate(conversations):
        turns.extend(_locomo_conversation(path, index, conversation))
    if not turns:
        raise InvalidInputError(f"{path}: the conversations hold no dialogue")
    return ImportPlan("locomo", path, tuple(turns))


def _locomo_conversation(path: Path, index: int, conversation: Any) -> list[ImportedTurn]:
    where = f"{path}: conversations[{index}]"
    if not isinstance(conversation, dict):
        raise InvalidInputError(f"{where}: expected an object")
    sample = storable(str(conversation.get("sample_id") or f"conv-{index}"))
    sessions, dates = _locomo_sessions(where, conversation)
    turns: list[ImportedTurn] = []
    for key in sorted(sessions, key=_session_number):
        ts = dates.get(key)
        for n, line in enumerate(_session_lines(f"{where}.{key}", sessions[key])):
            turns.append(
                ImportedTurn(storable(f"{sample}/{key}"), line, "", None if ts is None else ts + n)
            )
    return turns


def _locomo_sessions(
    where: str, conversation: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, float]]:
    """Sessions and their start times, from either `sessions` or upstream's `conversation.session_N` keys."""
    if isinstance(conversation.get("sessions"), dict):
        source: Mapping[str, Any] = conversation["sessions"]
    elif isinstance(conversation.get("conversation"), dict):
        source = conversation["conversation"]
    else:
        raise InvalidInputError(f"{where}: no 'sessions' (or upstream 'conversation') object")
    sessions = {
        k: v for k, v in source.items() if k.startswith("session_") and not k.endswith("date_time")
    }
    if not sessions:
        raise InvalidInputError(f"{where}: no session_N entries")
    dates = {
        k[: -len("_date_time")]: _locomo_date(v)
        for k, v in source.items()
        if k.endswith("_date_time")
    }
    return sessions, {k: v for k, v in dates.items() if v is not None}


def _session_number(key: str) -> int:
    tail = key.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _session_lines(where: str, lines: Any) -> list[str]:
    if not isinstance(lines, list):
        raise InvalidInputError(f"{where}: expected a list of dialogue turns")
    out = []
    for n, turn in enumerate(lines):
        if not isinstance(turn, dict):
            raise InvalidInputError(f"{where}[{n}]: expected an object")
        speaker, text = turn.get("speaker"), turn.get("text")
        if not isinstance(speaker, str) or not speaker.strip():
            raise InvalidInputError(f"{where}[{n}]: missing 'speaker'")
        if not isinstance(text, str):
            raise InvalidInputError(f"{where}[{n}]: missing 'text'")
        caption = turn.get("blip_caption")
        shared = f" [shares a photo: {caption}]" if isinstance(caption, str) and caption else ""
        out.append(storable(f"{speaker}: {text}{shared}"))
    return out


def _locomo_date(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    for fmt in _LOCOMO_DATE_FORMATS:
        try:
            return datetime.strptime(value.strip(), fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    log.debug("unreadable LoCoMo session date %r", value)
    return None


# -- writing ----------------------------------------------------------------------------------------------------
def parse_file(path: Path, fmt: str | None = None) -> ImportPlan:
    """Validate a chat log or LoCoMo file completely (markdown files go through markdown.import_markdown)."""
    fmt = fmt or detect_format(path)
    if fmt == "jsonl":
        return parse_chat_jsonl(path)
    if fmt == "locomo":
        return parse_locomo(path)
    raise InvalidInputError(f"{path}: format {fmt!r} is not a turn log")


@dataclass(frozen=True)
class ApplyReport:
    journaled: int
    skipped: int  # turns already captured for their session (re-importing a file is harmless)


def apply_plan(
    engine: Bowerbird,
    plan: ImportPlan,
    *,
    scope: str,
    platform: str = "import",
    progress: Progress | None = None,
) -> ApplyReport:
    """Journal every new turn of the plan in one bulk insert (all or nothing); the curator does the rest."""
    from .engine import clean_text

    journaled = engine.admin.journal_imported(
        plan.turns, scope=scope, platform=platform, clean=clean_text, progress=progress
    )
    log.info("journaled %d imported turns from %s", journaled, plan.path.name)
    return ApplyReport(journaled, len(plan.turns) - journaled)
