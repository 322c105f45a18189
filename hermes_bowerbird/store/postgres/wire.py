"""Vectors in pgvector's binary form (what `vector_send` and a binary read give): the dimension and an unused
field, 2 bytes each, then the values as big-endian float32s."""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

HEADER = 4


def dimension(raw: bytes) -> int:
    """How many values a vector in binary form holds."""
    (dim,) = struct.unpack_from(">H", raw)
    return int(dim)


def sent(raw: bytes) -> np.ndarray:
    """One vector in binary form as float32."""
    return sent_rows([raw], dimension(raw))[0]


def sent_rows(raw: Sequence[bytes], dim: int) -> np.ndarray:
    """Vectors in binary form, all of `dim` values, as a float32 matrix (n x dim), read at once."""
    if not raw:
        return np.empty((0, dim), np.float32)
    joined = np.frombuffer(b"".join(raw), dtype=np.uint8).reshape(len(raw), HEADER + 4 * dim)
    return joined[:, HEADER:].copy().view(">f4").astype(np.float32)
