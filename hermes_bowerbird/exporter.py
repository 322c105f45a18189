"""Export one owner's memories, edges and episodes as JSON records, and guard where an export may be written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import InvalidInputError
from .types import Edge, Episode, Memory, Provenance


def memory_record(
    memory: Memory, provenance: Sequence[Provenance], entities: Sequence[str]
) -> dict[str, Any]:
    return {
        "kind": "memory",
        "id": memory.id,
        "scope": memory.scope,
        "type": str(memory.type),
        "content": memory.content,
        "summary": memory.summary,
        "subject": memory.subject,
        "importance": memory.importance,
        "confidence": memory.confidence,
        "access_count": memory.access_count,
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "accessed_at": memory.accessed_at,
        "valid_from": memory.valid_from,
        "valid_until": memory.valid_until,
        "superseded_by": memory.superseded_by,
        "forgotten": memory.forgotten,
        "source": str(memory.source),
        "session_id": memory.session_id,
        "tags": list(memory.tags),
        "metadata": dict(memory.metadata),
        "entities": list(entities),
        "provenance": [
            {"session_id": p.session_id, "turn_index": p.turn_index} for p in provenance
        ],
    }


def edge_record(edge: Edge) -> dict[str, Any]:
    return {
        "kind": "edge",
        "id": edge.id,
        "source_id": edge.src_id,
        "target_id": edge.dst_id,
        "relation": str(edge.relation),
        "weight": edge.weight,
        "created_at": edge.created_at,
    }


def episode_record(episode: Episode) -> dict[str, Any]:
    return {
        "kind": "episode",
        "id": episode.id,
        "scope": episode.scope,
        "session_id": episode.session_id,
        "turn_index": episode.turn_index,
        "chunk_index": episode.chunk_index,
        "role": episode.role,
        "content": episode.content,
        "created_at": episode.created_at,
    }


def host_memory_folder(hermes_home: Path) -> Path:
    """The host's own MEMORY.md/USER.md folder: an export never lands there by accident."""
    return hermes_home / "memories"


def inside(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies under it (symlinks and `..` resolved)."""
    try:
        target, base = path.expanduser().resolve(), folder.expanduser().resolve()
    except (OSError, RuntimeError):
        return False
    return target == base or base in target.parents


def check_markdown_target(
    folder: Path, files: Sequence[str], *, hermes_home: Path, shared: bool, force: bool
) -> None:
    """Refuse the host's memory folder (always for a user's private scope; without --force for the shared
    profile) and refuse to overwrite existing MEMORY.md/USER.md without --force."""
    if inside(folder, host_memory_folder(hermes_home)):
        if not shared:
            raise InvalidInputError(
                f"{folder} is the host's shared memory folder; a user's private memories are "
                "never exported there (choose another folder)"
            )
        if not force:
            raise InvalidInputError(
                f"{folder} is the host's own memory folder; exporting there would overwrite "
                "MEMORY.md/USER.md (pass --force if that is what you want)"
            )
    existing = [name for name in files if (folder / name).exists()]
    if existing and not force:
        raise InvalidInputError(
            f"{folder} already holds {', '.join(existing)}; pass --force to overwrite"
        )


def check_file_target(path: Path, *, hermes_home: Path, force: bool) -> None:
    """Refuse the host's memory folder and an existing file (without --force)."""
    if inside(path, host_memory_folder(hermes_home)):
        raise InvalidInputError(
            f"{path} is inside the host's memory folder; write the export somewhere else"
        )
    if path.is_dir():
        raise InvalidInputError(f"{path} is a folder; give a file name")
    if path.exists() and not force:
        raise InvalidInputError(f"{path} already exists; pass --force to overwrite it")
