"""File locks shared by processes: two descriptors or two processes contending for real lock files."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hermes_bowerbird import filelock

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not filelock.supported(), reason="no POSIX file locks here")

# A process that takes the lock at argv[1] ("exclusive" or "shared" per argv[2]) without waiting, prints whether
# it got it, then holds it until its stdin closes.
CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from hermes_bowerbird import filelock
    fd = filelock.open_lock(Path(sys.argv[1]))
    take = filelock.try_exclusive if sys.argv[2] == "exclusive" else filelock.try_shared
    print(take(fd), flush=True)
    sys.stdin.read()
""")


@pytest.fixture
def lock(tmp_path: Path) -> Path:
    return tmp_path / "home" / "m.db.test.lock"


@pytest.fixture
def fds(lock: Path) -> Iterator[tuple[int, int]]:
    first, second = filelock.open_lock(lock), filelock.open_lock(lock)
    yield first, second
    os.close(first)
    os.close(second)


def _child(lock: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(lock), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _answer(child: subprocess.Popen[str]) -> str:
    assert child.stdout is not None
    return child.stdout.readline().strip()


def _end(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    child.stdin.close()
    child.wait(30)


def test_opening_creates_the_lock_file_and_its_folder(lock: Path) -> None:
    os.close(filelock.open_lock(lock))
    assert lock.is_file()


def test_the_lock_file_is_readable_by_its_owner_only(lock: Path) -> None:
    os.close(filelock.open_lock(lock))
    assert stat.S_IMODE(lock.stat().st_mode) & 0o077 == 0


def test_the_platform_has_file_locks() -> None:
    assert filelock.supported()


def test_an_exclusive_holder_refuses_a_second_exclusive(fds: tuple[int, int]) -> None:
    first, second = fds
    assert (filelock.try_exclusive(first), filelock.try_exclusive(second)) == (True, False)


def test_an_exclusive_holder_refuses_a_shared_one(fds: tuple[int, int]) -> None:
    first, second = fds
    assert (filelock.try_exclusive(first), filelock.try_shared(second)) == (True, False)


def test_shared_holders_admit_each_other(fds: tuple[int, int]) -> None:
    first, second = fds
    assert (filelock.try_shared(first), filelock.try_shared(second)) == (True, True)


def test_a_shared_holder_refuses_an_exclusive_one(fds: tuple[int, int]) -> None:
    first, second = fds
    assert (filelock.try_shared(first), filelock.try_exclusive(second)) == (True, False)


def test_a_lock_nobody_holds_is_free(lock: Path) -> None:
    assert filelock.is_free(lock)


@pytest.mark.parametrize("take", [filelock.try_exclusive, filelock.try_shared])
def test_a_held_lock_is_not_free(lock: Path, take: Callable[[int], bool]) -> None:
    fd = filelock.open_lock(lock)
    try:
        take(fd)
        assert not filelock.is_free(lock)
    finally:
        os.close(fd)


def test_asking_whether_a_lock_is_free_does_not_take_it(lock: Path) -> None:
    filelock.is_free(lock)
    fd = filelock.open_lock(lock)
    try:
        assert filelock.try_exclusive(fd)
    finally:
        os.close(fd)


def test_a_released_lock_is_free_again(fds: tuple[int, int]) -> None:
    first, second = fds
    filelock.try_exclusive(first)
    filelock.release(first)
    assert filelock.try_exclusive(second)


def test_closing_the_descriptor_releases_the_lock(lock: Path) -> None:
    fd = filelock.open_lock(lock)
    filelock.try_exclusive(fd)
    os.close(fd)
    assert filelock.is_free(lock)


def test_waiting_for_an_exclusive_lock_returns_once_the_holder_releases(
    fds: tuple[int, int],
) -> None:
    first, second = fds
    filelock.try_exclusive(first)
    threading.Timer(0.3, filelock.release, args=(first,)).start()
    started = time.monotonic()
    filelock.wait_exclusive(second)
    assert time.monotonic() - started >= 0.2


def test_waiting_for_a_shared_lock_returns_once_the_exclusive_holder_releases(
    fds: tuple[int, int],
) -> None:
    first, second = fds
    filelock.try_exclusive(first)
    threading.Timer(0.3, filelock.release, args=(first,)).start()
    started = time.monotonic()
    filelock.wait_shared(second)
    assert time.monotonic() - started >= 0.2


def test_a_block_holding_the_lock_excludes_other_holders(lock: Path) -> None:
    with filelock.held_exclusive(lock):
        assert not filelock.is_free(lock)


def test_the_lock_is_free_after_the_block(lock: Path) -> None:
    with filelock.held_exclusive(lock):
        pass
    assert filelock.is_free(lock)


def test_another_process_cannot_take_a_lock_this_one_holds(lock: Path) -> None:
    with filelock.held_exclusive(lock):
        child = _child(lock, "exclusive")
        try:
            assert _answer(child) == "False"
        finally:
            _end(child)


def test_another_process_shares_a_shared_lock(lock: Path) -> None:
    fd = filelock.open_lock(lock)
    filelock.try_shared(fd)
    child = _child(lock, "shared")
    try:
        assert _answer(child) == "True"
    finally:
        _end(child)
        os.close(fd)


def test_a_lock_another_process_holds_is_not_free_here(lock: Path) -> None:
    child = _child(lock, "exclusive")
    try:
        _answer(child)
        assert not filelock.is_free(lock)
    finally:
        _end(child)


def test_a_lock_held_by_a_killed_process_is_free(lock: Path) -> None:
    child = _child(lock, "exclusive")
    _answer(child)
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    assert filelock.is_free(lock)


def test_without_file_locks_the_platform_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filelock, "fcntl", None)
    assert not filelock.supported()


def test_without_file_locks_every_take_succeeds(
    fds: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = fds
    filelock.try_exclusive(first)
    monkeypatch.setattr(filelock, "fcntl", None)
    assert filelock.try_exclusive(second)


def test_without_file_locks_every_lock_reads_as_free(
    lock: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fd = filelock.open_lock(lock)
    try:
        filelock.try_exclusive(fd)
        monkeypatch.setattr(filelock, "fcntl", None)
        assert filelock.is_free(lock)
    finally:
        os.close(fd)


def test_without_file_locks_a_held_block_still_runs(
    lock: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filelock, "fcntl", None)
    ran = []
    with filelock.held_exclusive(lock):
        ran.append(True)
    assert ran == [True]
