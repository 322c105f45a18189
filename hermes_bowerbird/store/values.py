"""How values cross into and out of SQLite: the one row mapper (by column name), content hashes, vector blobs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..types import AuditAction, JournalStatus, MemoryType, Relation, Source

T = TypeVar("T")

_TYPE_OF = {str(t): t for t in MemoryType}
_SOURCE_OF = {str(s): s for s in Source}


def _same(value: Any) -> Any:
    return value


# How a column's stored value becomes the dataclass field of the same name; every other column is taken as is.
_DECODE: dict[str, Callable[[Any], Any]] = {
    "type": _TYPE_OF.__getitem__,
    "source": _SOURCE_OF.__getitem__,
    "forgotten": bool,
    "tags": lambda text: tuple(json.loads(text)),
    "metadata": json.loads,
    "details": json.loads,
    "relation": Relation,
    "status": JournalStatus,
    "action": AuditAction,
}


def from_rows(cls: type[T], rows: Sequence[sqlite3.Row]) -> list[T]:
    """Rows as dataclasses: each selected column fills the field of the same name (decoded by _DECODE)."""
    if not rows:
        return []
    names = rows[0].keys()
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = [n for n in names if n not in fields]
    if unknown:
        raise TypeError(f"columns {unknown} are not fields of {cls.__name__}")
    decoders = [(name, _DECODE.get(name, _same)) for name in names]
    return [cls(**{name: decode(row[name]) for name, decode in decoders}) for row in rows]


def from_row(cls: type[T], row: sqlite3.Row) -> T:
    """One row as a dataclass (see from_rows)."""
    return from_rows(cls, [row])[0]


def content_hash(text: str) -> str:
    """Hash of normalised text (case and whitespace folded): the identity used for exact dedup."""
    return hashlib.sha256(" ".join(text.lower().split()).encode("utf-8")).hexdigest()


def vector_blob(vector: np.ndarray) -> bytes:
    """A vector as the little-endian float32 bytes the embeddings table stores."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def blob_vector(blob: bytes) -> np.ndarray:
    """The float32 vector stored as `blob`."""
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def as_json(value: object) -> str:
    """A column value stored as JSON text."""
    return json.dumps(value)
