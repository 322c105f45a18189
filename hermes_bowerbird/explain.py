"""One-sentence descriptions of failures for people: tool errors, CLI error lines, the provider's status."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from .errors import BowerbirdError, ReadOnlyStoreError

_SQLITE_CAUSES = {
    "SQLITE_READONLY": "the memory database is read-only (the file or its folder cannot be written)",
    "SQLITE_READONLY_DBMOVED": "the memory database file was moved or deleted while it was open",
    "SQLITE_BUSY": "the memory database is busy (another process holds a write lock); try again shortly",
    "SQLITE_LOCKED": "the memory database is locked by another connection; try again shortly",
    "SQLITE_CORRUPT": "the memory database is damaged; run `bowerbird doctor --repair`",
    "SQLITE_NOTADB": "the memory database file is not a SQLite database or its header is damaged; "
    "run `bowerbird doctor --repair`",
    "SQLITE_CANTOPEN": "the memory database cannot be opened (missing folder or no permission)",
    "SQLITE_FULL": "the disk holding the memory database is full",
    "SQLITE_IOERR": "reading or writing the memory database failed at the disk level",
    "SQLITE_PERM": "the memory database cannot be accessed: permission denied",
}
_MESSAGE_CAUSES = (
    ("readonly database", "SQLITE_READONLY"),
    ("database is locked", "SQLITE_BUSY"),
    ("malformed", "SQLITE_CORRUPT"),
    ("file is not a database", "SQLITE_NOTADB"),
    ("unable to open database", "SQLITE_CANTOPEN"),
    ("disk i/o error", "SQLITE_IOERR"),
    ("database or disk is full", "SQLITE_FULL"),
)
_OWN_LIMIT = 1000  # our own messages name files (twice, at times): room for long paths
_OS_CAUSES = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "the disk is full",
    errno.ENOENT: "no such file or folder",
    errno.EISDIR: "it is a folder, not a file",
    errno.ENOTDIR: "a part of the path is not a folder",
}


def sqlite_cause(exc: BaseException) -> str | None:
    """The SQLite result-code name behind an error (e.g. SQLITE_READONLY), read from the error or its message."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlite3.Error):
            name = getattr(current, "sqlite_errorname", None)
            if isinstance(name, str) and name:
                return _base_code(name)
            text = str(current).lower()
            for needle, code in _MESSAGE_CAUSES:
                if needle in text:
                    return code
        current = current.__cause__ or current.__context__
    return None


def _base_code(name: str) -> str:
    """SQLITE_IOERR_WRITE -> SQLITE_IOERR, but keep the extended codes we describe on their own."""
    if name in _SQLITE_CAUSES:
        return name
    parts = name.split("_")
    return "_".join(parts[:2]) if len(parts) > 2 else name


def read_only_store(path: Path | str, reason: str) -> str:
    """The one sentence for a store opened read-only: which file, and why it cannot be written."""
    return f"the memory database {path} is read-only because {reason}"


def nothing_stored(path: Path | str, reason: str) -> str:
    """What a write to a read-only store answers: nothing was stored, and why."""
    return f"nothing new is stored: {read_only_store(path, reason)}"


def is_read_only(exc: BaseException) -> bool:
    """Whether an error means the database (or its folder) cannot be written."""
    if isinstance(exc, ReadOnlyStoreError):
        return True
    if sqlite_cause(exc) in {"SQLITE_READONLY", "SQLITE_PERM"}:
        return True
    return isinstance(exc, OSError) and exc.errno in {errno.EACCES, errno.EPERM, errno.EROFS}


def describe(exc: BaseException) -> str:
    """One sentence naming the cause, for a person; never 'internal error', never a traceback."""
    if isinstance(
        exc, ReadOnlyStoreError
    ):  # it names the file and the reason; SQLite's code would not
        return _one_line(str(exc), _OWN_LIMIT)
    cause = sqlite_cause(exc)
    if cause in _SQLITE_CAUSES:
        return _SQLITE_CAUSES[cause]
    if isinstance(exc, BowerbirdError):
        return _one_line(str(exc), _OWN_LIMIT) or type(exc).__name__
    if isinstance(exc, OSError):
        return _os_sentence(exc)
    if isinstance(exc, sqlite3.Error):
        return f"the memory database reported an error: {_one_line(str(exc))}"
    if isinstance(exc, UnicodeError):
        return "the text is not valid Unicode (it holds undecodable bytes or lone surrogates)"
    if isinstance(exc, MemoryError):
        return "not enough memory to finish this request"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply"
    if isinstance(exc, (TypeError, ValueError)):
        return (
            f"an argument has the wrong type or value ({_one_line(str(exc)) or type(exc).__name__})"
        )
    return f"an unexpected {type(exc).__name__} occurred: {_one_line(str(exc)) or 'no details'}"


def _os_sentence(exc: OSError) -> str:
    reason = (
        _OS_CAUSES.get(exc.errno or 0) or _one_line(exc.strerror or str(exc)) or type(exc).__name__
    )
    where = exc.filename if exc.filename is not None else None
    return f"{where}: {reason}" if where is not None else reason


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
