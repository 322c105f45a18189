"""Advisory file locks shared by processes (POSIX flock): open a lock file, take it, release it, ask if it is held.

A lock belongs to an open file description: the kernel drops it when its holder closes the descriptor or dies,
so a crashed holder never blocks the next one. Two descriptors opened separately exclude each other even inside
one process. Where the platform has no file locks (`supported()` is False) every take succeeds at once and every
lock reads as free: callers that need real exclusion across processes check `supported()` first.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "held_exclusive",
    "is_free",
    "open_lock",
    "release",
    "supported",
    "try_exclusive",
    "try_shared",
    "wait_exclusive",
    "wait_shared",
]


def supported() -> bool:
    """Whether this platform has file locks that exclude other processes."""
    return fcntl is not None


def open_lock(path: Path) -> int:
    """Open (creating it and its folder when missing) the lock file at `path`; a descriptor no child inherits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # O_CLOEXEC by default since Python 3.4


def try_exclusive(fd: int) -> bool:
    """Take `fd`'s lock exclusively without waiting; False when anyone else holds it in any mode."""
    return _try(fd, exclusive=True)


def try_shared(fd: int) -> bool:
    """Take `fd`'s lock shared without waiting; False when someone holds it exclusively."""
    return _try(fd, exclusive=False)


def wait_exclusive(fd: int) -> None:
    """Take `fd`'s lock exclusively, waiting as long as anyone else holds it."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def wait_shared(fd: int) -> None:
    """Take `fd`'s lock shared, waiting as long as someone holds it exclusively."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_SH)


def release(fd: int) -> None:
    """Release `fd`'s lock and keep the descriptor open (closing the descriptor releases it too)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def is_free(path: Path) -> bool:
    """True when nobody holds the lock at `path` in any mode (asked with a fresh description, released at once)."""
    fd = open_lock(path)
    try:
        return try_exclusive(fd)
    finally:
        os.close(fd)


@contextmanager
def held_exclusive(path: Path) -> Iterator[None]:
    """Hold the lock at `path` exclusively for the block, waiting for it first as long as it takes."""
    fd = open_lock(path)
    try:
        wait_exclusive(fd)
        try:
            yield
        finally:
            release(fd)
    finally:
        os.close(fd)


def _try(fd: int, *, exclusive: bool) -> bool:
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
