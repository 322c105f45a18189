"""Check a database file without trusting it, and salvage a damaged one into a new file, keeping the old one.

This is the store's emergency exit: it talks to SQLite directly (a damaged file cannot go through `Store.open`).
Salvage works without the sqlite3 command-line tool: a rebuilt header when the first 100 bytes are gone, then
every table copied row by row in rowid order, skipping past unreadable pages, into a freshly migrated file.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import db
from .errors import DatabaseError
from .explain import describe, is_read_only, sqlite_cause

log = logging.getLogger(__name__)

MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100
_PAGE_TYPES = frozenset({0x02, 0x05, 0x0A, 0x0D})
_MAX_ROWID = 2**63 - 1
_BATCH = 500
_SIDE_FILES = ("-wal", "-shm")


@dataclass(frozen=True)
class FileCheck:
    """What SQLite says about a file, read without writing to it."""

    path: Path
    exists: bool
    header_ok: bool
    integrity: tuple[str, ...]
    problem: str | None  # one sentence when the file cannot be read at all

    @property
    def healthy(self) -> bool:
        return self.exists and self.header_ok and self.problem is None and self.integrity == ("ok",)


@dataclass
class RecoveryReport:
    """The outcome of one salvage: rows kept and lost per table, and where the files are now."""

    source: Path
    kept_as: Path | None = None  # the damaged original, renamed with a timestamp
    header_rebuilt: bool = False
    recovered: dict[str, int] = field(default_factory=dict)
    lost: dict[str, int] = field(default_factory=dict)
    integrity: tuple[str, ...] = ()
    # only when integrity_check passed on the new file and it took the old one's place
    repaired: bool = False
    note: str = ""


def check_file(path: Path) -> FileCheck:
    """Header, readability and PRAGMA integrity_check of the file at `path`, without writing to it."""
    if not path.is_file():
        return FileCheck(path, False, False, (), f"no database file at {path}")
    # SQLite reads an empty file as an empty database; opening it migrates it
    if path.stat().st_size == 0:
        return FileCheck(path, True, True, ("ok",), None)
    with path.open("rb") as handle:
        header_ok = handle.read(len(MAGIC)) == MAGIC
    if not header_ok:
        return FileCheck(
            path, True, False, (), "the file header is damaged (not recognisable as SQLite)"
        )
    try:
        conn = _open_for_check(path)
    except (DatabaseError, sqlite3.Error) as exc:
        return FileCheck(path, True, True, (), describe(exc))
    try:
        rows = conn.execute("PRAGMA integrity_check(50)").fetchall()
        return FileCheck(path, True, True, tuple(str(message) for (message,) in rows), None)
    except sqlite3.Error as exc:
        return FileCheck(path, True, True, (), describe(exc))
    finally:
        conn.close()


def _open_for_check(path: Path) -> sqlite3.Connection:
    """A normal connection when the file and folder are writable (it tidies its WAL files on close), else a
    read-only one."""
    if db.file_writable(path):
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.Error as exc:
            conn.close()
            if not (is_read_only(exc) or sqlite_cause(exc) == "SQLITE_CANTOPEN"):
                raise
    return db.connect_read_only(path)


def recover(path: Path, *, stamp: str | None = None) -> RecoveryReport:
    """Salvage `path` into a new file; when that file passes integrity_check it takes the old one's name and
    the damaged original is kept beside it as `<name>.damaged-<UTC time>` (with its WAL, if any)."""
    stamp = stamp or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    report = RecoveryReport(source=path)
    copy = path.with_name(f"{path.name}.salvage-{stamp}")
    fresh = path.with_name(f"{path.name}.recovered-{stamp}")
    try:
        report.header_rebuilt = _readable_copy(path, copy)
        _salvage(copy, fresh, report)
    except OSError as exc:
        if is_read_only(exc):
            raise DatabaseError(
                f"cannot repair {path}: {describe(exc)} (the repair writes its new file beside it)"
            ) from exc
        raise
    except sqlite3.Error as exc:
        fresh.unlink(missing_ok=True)
        report.note = f"salvage stopped ({describe(exc)}); the damaged file is left untouched"
        return report
    finally:
        for leftover in (copy, *(copy.with_name(copy.name + s) for s in _SIDE_FILES)):
            leftover.unlink(missing_ok=True)
    report.integrity = check_file(fresh).integrity
    if not any(report.recovered.values()):
        fresh.unlink(missing_ok=True)
        report.note = "nothing could be read from the damaged file; it is left untouched"
        return report
    if report.integrity != ("ok",):
        report.note = f"the salvaged copy still fails integrity_check; it is left at {fresh}, the original untouched"
        return report
    report.kept_as = _swap_in(path, fresh, stamp)
    report.repaired = True
    return report


# -- a copy SQLite can read ----------------------------------------------------------------------------------
def _readable_copy(path: Path, copy: Path) -> bool:
    """Copy the file (and its WAL) to `copy`; rebuild the header there if it is damaged. True if rebuilt."""
    shutil.copyfile(path, copy)
    wal = path.with_name(path.name + "-wal")
    has_wal = wal.is_file() and wal.stat().st_size > 0
    if has_wal:
        shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
    with copy.open("r+b") as handle:
        data = handle.read()
        if data[: len(MAGIC)] == MAGIC:
            return False
        header = rebuild_header(data, wal=has_wal)
        handle.seek(0)
        handle.write(header)
    log.warning("the header of %s was damaged; rebuilt it in the salvage copy", path)
    return True


def rebuild_header(data: bytes, *, wal: bool = False) -> bytes:
    """A valid 100-byte header for a file whose own header is gone (page size inferred from the pages)."""
    page_size = guess_page_size(data)
    pages = max(1, len(data) // page_size)
    version = 2 if wal else 1
    header = bytearray(HEADER_SIZE)
    header[0:16] = MAGIC
    header[16:18] = (1 if page_size == 65536 else page_size).to_bytes(2, "big")
    header[18], header[19] = version, version
    # reserved bytes, payload fractions
    header[20], header[21], header[22], header[23] = 0, 64, 32, 32
    header[24:28] = (1).to_bytes(4, "big")  # change counter
    header[28:32] = pages.to_bytes(4, "big")
    header[40:44] = (1).to_bytes(4, "big")  # schema cookie
    header[44:48] = (4).to_bytes(4, "big")  # schema format
    header[56:60] = (1).to_bytes(4, "big")  # UTF-8
    # version-valid-for = change counter: the page count is trusted
    header[92:96] = (1).to_bytes(4, "big")
    major, minor, patch = sqlite3.sqlite_version_info
    header[96:100] = (major * 1_000_000 + minor * 1000 + patch).to_bytes(4, "big")
    return bytes(header)


def guess_page_size(data: bytes) -> int:
    """The page size that fits the file: page 1's cell pointers lie inside it and later pages start like pages."""
    smallest = _page_one_span(data)
    best, best_score = 4096, -1.0
    for size in (512 << k for k in range(8)):
        if size < smallest or len(data) % size:
            continue
        starts = [data[offset] for offset in range(size, min(len(data), size * 65), size)]
        score = (
            sum(1 for b in starts if b in _PAGE_TYPES or b == 0) / len(starts) if starts else 1.0
        )
        if score > best_score:
            best, best_score = size, score
    return best


def _page_one_span(data: bytes) -> int:
    """The smallest page size page 1's b-tree header allows (its cell pointers must point inside the page)."""
    if len(data) < HEADER_SIZE + 8 or data[HEADER_SIZE] not in _PAGE_TYPES:
        return 512
    cells = int.from_bytes(data[HEADER_SIZE + 3 : HEADER_SIZE + 5], "big")
    start = HEADER_SIZE + (12 if data[HEADER_SIZE] in (0x02, 0x05) else 8)
    pointers = [
        int.from_bytes(data[start + 2 * i : start + 2 * i + 2], "big")
        for i in range(min(cells, 2000))
    ]
    return max([512, *(p + 1 for p in pointers)])


# -- salvage ---------------------------------------------------------------------------------------------------
def _salvage(copy: Path, fresh: Path, report: RecoveryReport) -> None:
    fresh.unlink(missing_ok=True)
    src = sqlite3.connect(f"file:{copy}?mode=ro", uri=True, isolation_level=None)
    dst = db.connect(fresh)
    try:
        applied = _applied_names(src)
        db.migrate(dst, only=applied or None)
        dst.execute("PRAGMA foreign_keys = OFF")
        dst.execute("BEGIN")
        for table in _plain_tables(dst):
            kept, lost = _copy_table(src, dst, table)
            report.recovered[table], report.lost[table] = kept, lost
        dst.execute("COMMIT")
        db.migrate(dst)  # a store from an older version continues from its own schema
        report.lost["foreign_key_orphans"] = _drop_orphans(dst)
        _rebuild_fts(dst)
        dst.execute("PRAGMA foreign_keys = ON")
    finally:
        src.close()
        dst.close()


def _applied_names(src: sqlite3.Connection) -> set[str]:
    try:
        return {m.name for m in db.migration_set().applied(db.wrap(src))}
    except sqlite3.Error as exc:
        log.warning(
            "the damaged file's migration list is unreadable (%s); assuming the current schema", exc
        )
        return set()


def _plain_tables(conn: sqlite3.Connection) -> list[str]:
    """Ordinary tables of the new schema: not SQLite's, not virtual tables or their shadow tables."""
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY rootpage"
    ).fetchall()
    virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
    return [
        name
        for name, _ in rows
        if not name.startswith("sqlite_")
        and name != "schema_migrations"
        and name not in virtual
        and not any(name.startswith(v + "_") for v in virtual)
    ]


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple[str, int]]:
    """(name, primary-key position) of each column; empty when the table is missing or unreadable."""
    try:
        info = conn.execute(f'PRAGMA table_info("{table}")')
        return [(str(name), int(pk)) for _cid, name, _type, _notnull, _default, pk in info]
    except sqlite3.Error:
        return []


def _has_rowid(conn: sqlite3.Connection, table: str) -> bool:
    try:
        conn.execute(f'SELECT rowid FROM "{table}" LIMIT 0')
        return True
    except sqlite3.OperationalError:  # "no such column: rowid": a WITHOUT ROWID table
        return False
    except sqlite3.DatabaseError:  # damage: the rowid scan copes with it
        return True


def _copy_table(src: sqlite3.Connection, dst: sqlite3.Connection, table: str) -> tuple[int, int]:
    """Copy every readable row of `table`; returns (rows kept, rows or unreadable regions lost)."""
    wanted = _columns(dst, table)
    present = {name for name, _ in _columns(src, table)}
    columns = [name for name, _ in wanted if name in present]
    if not columns:
        log.warning("table %s is unreadable in the damaged file; nothing recovered from it", table)
        return 0, 1
    names = ", ".join(f'"{c}"' for c in columns)
    insert = f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({", ".join("?" * len(columns))})'
    rows = (
        _rows_by_rowid(src, table, names)
        if _has_rowid(src, table)
        else _rows_by_key(
            src, table, names, [n for n, pk in sorted(wanted, key=lambda c: c[1]) if pk]
        )
    )
    kept = lost = 0
    for row in rows:
        if row is None:
            lost += 1
            continue
        try:
            inserted = dst.execute(insert, row).rowcount
        except sqlite3.Error as exc:
            log.debug("row of %s not copied: %s", table, exc)
            inserted = 0
        kept, lost = (kept + 1, lost) if inserted == 1 else (kept, lost + 1)
    return kept, lost


def _rows_by_rowid(
    src: sqlite3.Connection, table: str, names: str
) -> Iterator[tuple[Any, ...] | None]:
    """Rows in rowid order, in batches; near damage row by row, and past an unreadable page (yielding None)."""
    batch_sql = (
        f'SELECT rowid, {names} FROM "{table}" WHERE rowid > ? ORDER BY rowid LIMIT {_BATCH}'
    )
    after = -_MAX_ROWID - 1
    while True:
        try:
            batch = src.execute(batch_sql, (after,)).fetchall()
        except sqlite3.DatabaseError:
            step = _step_near_damage(src, table, names, after)
            if step is None:
                return
            rows, reached = step
            yield from rows
            if reached <= after:
                return
            after = reached
            continue
        if not batch:
            return
        for rowid, *values in batch:
            yield tuple(values)
            after = int(rowid)


def _step_near_damage(
    src: sqlite3.Connection, table: str, names: str, after: int
) -> tuple[list[tuple[Any, ...] | None], int] | None:
    """The next row after `after` and its rowid; past an unreadable page a None (the gap), the first row after
    it and its rowid; None at the end of the table."""
    try:
        found = src.execute(
            f'SELECT rowid FROM "{table}" WHERE rowid > ? ORDER BY rowid LIMIT 1', (after,)
        ).fetchone()
    except sqlite3.DatabaseError:
        resume = _next_readable(src, table, after)
        if resume is None:
            return [None], _MAX_ROWID
        return [None, _row_at(src, table, names, resume)], resume
    if found is None:
        return None
    (found_id,) = found
    rowid = int(found_id)
    return [_row_at(src, table, names, rowid)], rowid


def _row_at(src: sqlite3.Connection, table: str, names: str, rowid: int) -> tuple[Any, ...] | None:
    try:
        row = src.execute(f'SELECT {names} FROM "{table}" WHERE rowid = ?', (rowid,)).fetchone()
    except sqlite3.DatabaseError:
        return None
    return tuple(row) if row is not None else None


def _next_readable(src: sqlite3.Connection, table: str, after: int) -> int | None:
    """The smallest rowid past `after` from which a seek works again (doubling steps, then a binary search)."""

    def readable_from(start: int) -> int | bool | None:
        try:
            row = src.execute(
                f'SELECT rowid FROM "{table}" WHERE rowid >= ? ORDER BY rowid LIMIT 1', (start,)
            ).fetchone()
        except sqlite3.DatabaseError:
            return False
        if row is None:
            return None
        (rowid,) = row
        return int(rowid)

    step, failed = 1, after
    while after + step <= _MAX_ROWID:
        probe = after + step
        result = readable_from(probe)
        if result is not False:
            low, high = failed, probe  # failed < boundary <= probe
            while high - low > 1:
                middle = (low + high) // 2
                if readable_from(middle) is False:
                    low = middle
                else:
                    high = middle
            first = readable_from(high)
            return None if first is None or first is False else int(first)
        failed, step = probe, step * 2
    return None


def _rows_by_key(
    src: sqlite3.Connection, table: str, names: str, key: Sequence[str]
) -> Iterator[tuple[Any, ...] | None]:
    """A WITHOUT ROWID table: read forwards until damage, then backwards from the end until damage."""
    order = ", ".join(f'"{k}"' for k in key) or names
    seen: set[tuple[Any, ...]] = set()
    damaged = False
    for direction in ("ASC", "DESC"):
        descending = ", ".join(f"{part} {direction}" for part in order.split(", "))
        try:
            for row in src.execute(f'SELECT {names} FROM "{table}" ORDER BY {descending}'):
                if row in seen:
                    return
                seen.add(row)
                yield tuple(row)
            return
        except sqlite3.DatabaseError:
            damaged = True
    if damaged:
        yield None


def _drop_orphans(conn: sqlite3.Connection) -> int:
    """Delete rows whose parent row was lost, repeatedly (a lost memory takes its edges and links with it)."""
    dropped = 0
    for _ in range(10):
        orphans = conn.execute("PRAGMA foreign_key_check").fetchall()
        if not orphans:
            break
        for table, rowid, _parent, _fk in orphans:
            if rowid is not None:
                conn.execute(f'DELETE FROM "{table}" WHERE rowid = ?', (rowid,))
                dropped += 1
    return dropped


def _rebuild_fts(conn: sqlite3.Connection) -> None:
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND upper(sql) LIKE 'CREATE VIRTUAL TABLE%USING FTS5%'"
    ).fetchall():
        conn.execute(f'INSERT INTO "{name}" ("{name}") VALUES (\'rebuild\')')


# -- putting the new file in place ---------------------------------------------------------------------------
def _swap_in(path: Path, fresh: Path, stamp: str) -> Path:
    """Rename the damaged file (and its WAL/SHM) aside with the timestamp, then the new file into its place."""
    kept = path.with_name(f"{path.name}.damaged-{stamp}")
    os.replace(path, kept)
    for suffix in _SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, kept.with_name(kept.name + suffix))
    for suffix in _SIDE_FILES:
        fresh.with_name(fresh.name + suffix).unlink(missing_ok=True)
    os.replace(fresh, path)
    log.warning("recovered %s; the damaged original is kept as %s", path, kept)
    return kept
