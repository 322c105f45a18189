"""MEMORY.md / USER.md (the host's built-in memory files): import into the store and export back."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InvalidInputError
from .types import Memory, MemoryType, Source, type_specs

if TYPE_CHECKING:
    from .engine import Bowerbird

log = logging.getLogger(__name__)

DELIMITER = "\n§\n"
HOST_LIMITS = {"memory": 2200, "user": 1375}  # the host's character limits per file
_FILES = {"memory": "MEMORY.md", "user": "USER.md"}
_MAX_FILE_BYTES = 2_000_000
IMPORT_BATCH = 100  # entries per model call and transaction


@dataclass(frozen=True)
class ImportReport:
    path: str
    entries: int
    imported: int
    skipped: int


def split_entries(text: str) -> list[str]:
    """Entries of a host memory file: split on the § delimiter, multi-line entries kept whole."""
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    return [entry.strip() for entry in normalised.split(DELIMITER) if entry.strip()]


def target_for(path: Path) -> str:
    """'user' for USER.md, 'memory' for anything else."""
    return "user" if path.name.lower().startswith("user") else "memory"


def read_entries(path: Path) -> list[str]:
    """Read and split a host memory file; binary or huge files are refused with a clear error."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror}") from exc
    if size > _MAX_FILE_BYTES:
        raise InvalidInputError(
            f"{path} is {size} bytes; a memory file over {_MAX_FILE_BYTES} bytes is refused"
        )
    raw = path.read_bytes()
    if b"\x00" in raw:
        raise InvalidInputError(f"{path} looks binary (it contains NUL bytes)")
    try:
        return split_entries(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path} is not UTF-8 text (byte {exc.start})") from exc


def import_file(
    engine: Bowerbird,
    path: Path,
    *,
    scope: str,
    target: str | None = None,
    source: Source = Source.IMPORT,
    stop: threading.Event | None = None,
) -> ImportReport:
    """Import every entry once (idempotent by content hash), typed for its file, IMPORT_BATCH at a time.

    An entry seen before is skipped even when it was forgotten since: forgetting must survive the next start.
    A set `stop` ends the import between batches; the next import picks up the rest.
    """
    target = target or target_for(path)
    entries = read_entries(path)
    fresh = [e for e in dict.fromkeys(entries) if not engine.inspect.seen_before(scope, e)]
    imported = 0
    for start in range(0, len(fresh), IMPORT_BATCH):
        if stop is not None and stop.is_set():
            break
        batch = fresh[start : start + IMPORT_BATCH]
        engine.remember_many(
            [(entry, type_for_entry(engine, entry, target)) for entry in batch],
            scope=scope,
            source=source,
            actor=f"import:{path.name}",
        )
        imported += len(batch)
    log.info("imported %d of %d entries from %s", imported, len(entries), path.name)
    return ImportReport(str(path), len(entries), imported, len(entries) - imported)


def type_for_entry(engine: Bowerbird, entry: str, target: str) -> MemoryType:
    """USER.md entries are identity unless they read as a preference/goal; MEMORY.md ones keep their reading."""
    from .curation.extract import extract_candidates

    candidates = extract_candidates(entry, "")
    guess = max(candidates, key=lambda c: c.importance).type if candidates else None
    if target == "user":
        return guess if guess in user_file_types() else MemoryType.IDENTITY
    return guess or MemoryType.FACT


def user_file_types() -> frozenset[MemoryType]:
    """The memory types that belong in USER.md (`TypeSpec.markdown`); every other exported type is MEMORY.md's."""
    return frozenset(s.name for s in type_specs() if s.markdown == "user")


def import_host_memories(
    engine: Bowerbird, hermes_home: Path, *, scope: str, stop: threading.Event | None = None
) -> list[ImportReport]:
    """Import $HERMES_HOME/memories/{MEMORY,USER}.md when present; safe to call on every start."""
    reports = []
    for target, name in _FILES.items():
        path = hermes_home / "memories" / name
        if path.is_file():
            reports.append(import_file(engine, path, scope=scope, target=target, stop=stop))
    return reports


def export_markdown(
    engine: Bowerbird, folder: Path, *, scopes: Sequence[str], within_limits: bool = False
) -> dict[str, int]:
    """Write MEMORY.md and USER.md in the host's format, grouped by type, most important first.

    With `within_limits`, each file is cut to the host's character limit (whole entries only).
    Quarantined memories are left out (the host injects these files). Returns the number of entries per file.
    """
    # quarantined ones never: the host puts these files in its prompt
    return write_markdown(folder, engine.inspect.prompt_safe(scopes), within_limits=within_limits)


def write_markdown(
    folder: Path, memories: Sequence[Memory], *, within_limits: bool = False
) -> dict[str, int]:
    """MEMORY.md and USER.md of these memories in `folder` (both written, empty when none goes in one)."""
    grouped = group_for_export(memories)
    folder.mkdir(parents=True, exist_ok=True)
    counts = {}
    for target, items in grouped.items():
        entries = _fit([m.content for m in items], HOST_LIMITS[target] if within_limits else None)
        (folder / _FILES[target]).write_text(DELIMITER.join(entries), encoding="utf-8")
        counts[_FILES[target]] = len(entries)
    return counts


def group_for_export(memories: Sequence[Memory]) -> dict[str, list[Memory]]:
    """Memories per host file ("user", "memory") by their type's `TypeSpec.markdown`, types in `markdown_rank`
    order, each type's memories in the given order; types with no target are left out."""
    grouped: dict[str, list[Memory]] = {"user": [], "memory": []}
    for spec in sorted(type_specs(), key=lambda s: s.markdown_rank):
        if spec.markdown is not None:
            grouped[spec.markdown].extend(m for m in memories if m.type == spec.name)
    return grouped


def _fit(entries: list[str], limit: int | None) -> list[str]:
    if limit is None:
        return entries
    kept: list[str] = []
    used = 0
    for entry in entries:
        cost = len(entry) + (len(DELIMITER) if kept else 0)
        if used + cost > limit:
            continue
        kept.append(entry)
        used += cost
    return kept
