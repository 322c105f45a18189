"""Advisory file locks shared by processes (POSIX flock): open a lock file, take it, release it, ask if it is held.

A lock belongs to an open file description: the kernel drops it when its holder closes the descriptor or dies,
so a crashed holder never blocks the next one. Two descriptors opened separately exclude each other even inside
one process. Where the platform has no file locks (`supported()` is False) every take succeeds at once and every
lock reads as free: callers that need real exclusion across processes check `supported()` first.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "RunnerLock",
    "held_exclusive",
    "is_free",
    "open_lock",
    "release",
    "runner_lock_path",
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


def runner_lock_path(db_path: Path, name: str = "maintenance") -> Path:
    """The lock file beside a database that names its one runner of `name` (maintenance, reindexing)."""
    return db_path.with_name(f"{db_path.name}.{name}.lock")


class RunnerLock:
    """One runner per memory home across processes and threads: an exclusive flock on a file.

    Each acquire opens its own file description, so two holders in one process exclude each other too. The
    kernel drops the lock when its holder dies, so a crashed run never blocks the next one.
    """

    def __init__(self, path: Path, poll_seconds: float = 0.1) -> None:
        self.path = path
        self.poll_seconds = poll_seconds

    @contextmanager
    def held(self, timeout: float = 0.0, stop: threading.Event | None = None) -> Iterator[bool]:
        """Yield True while holding the lock, or False if it stayed busy for `timeout` seconds (or `stop` fired)."""
        fd = open_lock(self.path)
        try:
            got = self._acquire(fd, timeout, stop)
            yield got
        finally:
            os.close(fd)  # closing the description releases the lock

    def _acquire(self, fd: int, timeout: float, stop: threading.Event | None) -> bool:
        # without file locks every take succeeds: runs are still serialised inside the process by Maintenance's
        # own lock
        deadline = time.monotonic() + timeout
        while True:
            if try_exclusive(fd):
                return True
            if time.monotonic() >= deadline or (stop is not None and stop.is_set()):
                return False
            if stop is not None:
                stop.wait(self.poll_seconds)
            else:
                time.sleep(self.poll_seconds)
