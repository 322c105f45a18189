"""Ways to make a memory folder read-only that bind this process too, even when the tests run as root (root
ignores permission bits): an immutable flag (chattr +i) on the file or the folder, or a read-only bind mount of
the folder (a read-only file system). Each says why it cannot be used here, so a test skips with that reason."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

Undo = Callable[[], None]

# the reason the store gives for each way, as `bowerbird status` and every refused write name it
FILE_REASON_AS_ROOT = "the file may not be changed (operation not permitted: an immutable file?)"
FILE_REASON = "the file is not writable (permission denied)"
FILE_SYSTEM_REASON = "the file system holding it is read-only"


def folder_reason(folder: Path) -> str:
    return f"its folder {folder} is not writable, and SQLite must create the database's -wal and -shm files there"


class CannotLock(Exception):
    """This machine offers no way to make a path read-only for this process (the message says why)."""


def lock(path: Path) -> Undo:
    """Make a file or folder unwritable for this process: its mode, and as root an immutable flag."""
    mode = stat.S_IMODE(path.stat().st_mode)
    path.chmod(0o555 if path.is_dir() else 0o444)
    immutable = os.geteuid() == 0
    if immutable:
        if shutil.which("chattr") is None:
            path.chmod(mode)
            raise CannotLock("running as root, and chattr (to make the path immutable) is missing")
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            path.chmod(mode)
            raise CannotLock(f"chattr +i failed here: {done.stderr.strip()}")

    def undo() -> None:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True, capture_output=True)
        path.chmod(mode)

    return _checked(path, undo)


def mount_read_only(folder: Path) -> Undo:
    """Bind-mount `folder` onto itself read-only: the file system under it refuses writes (EROFS), to root too."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        raise CannotLock("a read-only bind mount needs root and the mount command")
    steps = (
        ["mount", "--bind", str(folder), str(folder)],
        ["mount", "-o", "remount,bind,ro", str(folder)],
    )
    for number, step in enumerate(steps):
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            if number:
                _unmount(folder)
            raise CannotLock(f"{' '.join(step[:3])} failed here: {done.stderr.strip()}")
    return _checked(folder, lambda: _unmount(folder))


def file_reason() -> str:
    """What `lock` makes the store say of a locked file: immutable as root, else not writable."""
    return FILE_REASON_AS_ROOT if os.geteuid() == 0 else FILE_REASON


def _unmount(folder: Path) -> None:
    if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(folder)], check=True, capture_output=True)


def _checked(path: Path, undo: Undo) -> Undo:
    """The undo of a lock that really holds; a lock that does not is undone and reported."""
    probe = path / ".probe" if path.is_dir() else path
    try:
        with open(probe, "a"):
            pass
    except OSError:
        return undo
    if path.is_dir():
        probe.unlink()
    undo()
    raise CannotLock(f"{path} stayed writable for this process")
