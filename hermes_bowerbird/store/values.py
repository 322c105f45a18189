"""How values cross into and out of SQLite: the one row mapper (by column name), content hashes, vector blobs."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from ..types import (
    MEMORY_TYPES,
    AuditAction,
    JournalStatus,
    MemoryType,
    QuestionOrigin,
    Relation,
    Source,
)

T = TypeVar("T")

_SOURCE_OF = {str(s): s for s in Source}


def _stored_type(name: str) -> MemoryType:
    """A stored memory type, looked up in the type table as it is now (a registered type included); a type
    this version does not know (a newer version wrote it) reads as a fact rather than making the row unreadable.
    """
    spec = MEMORY_TYPES.get(name)
    return spec.name if spec is not None else MemoryType.FACT


# How a column's stored value becomes the dataclass field of the same name; every other column is taken as is.
_DECODE: dict[str, Callable[[Any], Any]] = {
    "type": _stored_type,
    "source": _SOURCE_OF.__getitem__,
    "forgotten": bool,
    "tags": lambda text: tuple(json.loads(text)),
    "metadata": json.loads,
    "details": json.loads,
    "relation": Relation,
    "status": JournalStatus,
    "action": AuditAction,
    "origin": QuestionOrigin,
}


def from_rows(cls: type[T], rows: Sequence[sqlite3.Row]) -> list[T]:
    """Rows as dataclasses: each selected column fills the field of the same name (decoded by _DECODE)."""
    if not rows:
        return []
    read = _reader(cast(type, cls), tuple(rows[0].keys()))
    return [cast(T, read(row)) for row in rows]


@functools.cache
def _reader(cls: type, names: tuple[str, ...]) -> Callable[[sqlite3.Row], object]:
    """A function building `cls` from a row with these columns, written once per (class, columns) the way
    dataclasses writes __init__: a keyword per column, so mapping by name costs what hand-written code does."""
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = [name for name in names if name not in fields]
    if unknown:
        raise TypeError(f"columns {unknown} are not fields of {cls.__name__}")
    arguments = ", ".join(
        f"{name}=decode[{name!r}](_{index})" if name in _DECODE else f"{name}=_{index}"
        for index, name in enumerate(names)
    )
    # unpacked, not indexed: a server row's index by position is Python code, its iteration is not
    unpacked = "".join(f"_{index}, " for index in range(len(names)))
    namespace: dict[str, Any] = {"cls": cls, "decode": _DECODE}
    # names are checked dataclass field names
    exec(f"def read(row):\n    {unpacked}= row\n    return cls({arguments})", namespace)
    return cast(Callable[[sqlite3.Row], object], namespace["read"])


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
