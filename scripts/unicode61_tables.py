"""Write hermes_bowerbird/store/unicode61.py: FTS5's unicode61 character tables, read from SQLite itself.

FTS5's `unicode61 remove_diacritics 2` tokenizer decides per code point whether it starts a token, whether it
may continue one (letters, digits and private use start tokens; combining diacritics only continue them), and
what it folds to (lower case, diacritics removed, possibly nothing). Its tables are frozen at Unicode 6.1, so
Python's newer unicodedata cannot stand in for them. This script asks the SQLite it runs on, one code point at
a time, and writes the answers as ranges. Run it with `python scripts/unicode61_tables.py`; the tests compare
the tokenizer built on these tables with SQLite over every dev-set text and random text.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "hermes_bowerbird" / "store" / "unicode61.py"
SURROGATES = range(0xD800, 0xE000)


def probe() -> tuple[list[int], list[int], dict[int, int]]:
    """(code points >= 128 that start a token, those that only continue one, fold map where it changes a code
    point; 0 = dropped), from two probes per code point: `aXb` (continues a token? folds to?) and `a X` (starts
    one? a token that folds to nothing still counts)."""
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5 (mid, alone, tokenize = 'unicode61 remove_diacritics 2')"
    )
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")
    rows = (
        (cp, f"a{chr(cp)}b", f"a {chr(cp)}")
        for cp in range(128, 0x110000)
        if cp not in SURROGATES
    )
    db.executemany("INSERT INTO t (rowid, mid, alone) VALUES (?, ?, ?)", rows)
    tokens: dict[tuple[int, str], list[str]] = {}
    for term, doc, col, _offset in db.execute("SELECT term, doc, col, offset FROM v ORDER BY doc, col, offset"):
        tokens.setdefault((doc, col), []).append(term)
    starts: list[int] = []
    continues: list[int] = []
    fold: dict[int, int] = {}
    for cp in range(128, 0x110000):
        if cp in SURROGATES:
            continue
        alone = tokens.get((cp, "alone"), [])
        mid = tokens.get((cp, "mid"), [])
        if len(alone) == 2:
            starts.append(cp)
        elif len(mid) == 1:
            continues.append(cp)
        if len(mid) == 1:
            folded = mid[0][1:-1]
            if len(folded) > 1:
                raise SystemExit(f"U+{cp:04X} folds to more than one character: {folded!r}")
            value = ord(folded) if folded else 0
            if value != cp:
                fold[cp] = value
    return starts, continues, fold


def ranges(points: list[int]) -> list[tuple[int, int]]:
    """Sorted code points as inclusive (first, last) runs."""
    out: list[tuple[int, int]] = []
    for cp in points:
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def fold_runs(fold: dict[int, int]) -> list[tuple[int, int, int, int]]:
    """The fold map as (first, last, target of first, step) runs over consecutive code points whose targets move
    by the same step (0: all fold to one character, or all are dropped; 1: a shifted block)."""
    out: list[tuple[int, int, int, int]] = []
    for cp in sorted(fold):
        target = fold[cp]
        if out and out[-1][1] == cp - 1 and (out[-1][2] == 0) == (target == 0):
            first, last, start, step = out[-1]
            if first == last and target - start in (0, 1):
                out[-1] = (first, cp, start, target - start)
                continue
            if first != last and target == start + step * (cp - first):
                out[-1] = (first, cp, start, step)
                continue
        out.append((cp, cp, target, 0))
    return out


def render(starts: list[int], continues: list[int], fold: dict[int, int]) -> str:
    def table(rows: list[tuple[int, ...]]) -> str:
        cells = [f"({', '.join(f'0x{v:X}' if v >= 0 else str(v) for v in row)})," for row in rows]
        lines: list[str] = []
        line = "   "
        for cell in cells:
            if len(line) + len(cell) + 1 > 110:
                lines.append(line)
                line = "   "
            line += " " + cell
        lines.append(line)
        return "\n".join(lines)

    version = sqlite3.sqlite_version
    return f'''"""FTS5 unicode61 character tables (remove_diacritics 2), as SQLite {version} answers them: data only.

Written by scripts/unicode61_tables.py; do not edit by hand. Code points below 128 are not listed: ASCII letters
and digits are token characters, every other ASCII character separates tokens, A-Z fold to a-z.
"""

# fmt: off
# (first, last): code points that start (and continue) a token
TOKEN_RANGES: tuple[tuple[int, int], ...] = (
{table([tuple(r) for r in ranges(starts)])}
)

# (first, last): code points that continue a token but never start one (combining diacritics)
CONTINUE_RANGES: tuple[tuple[int, int], ...] = (
{table([tuple(r) for r in ranges(continues)])}
)

# (first, last, target, step): code point cp in [first, last] folds to target + step * (cp - first); 0 = dropped
FOLD_RUNS: tuple[tuple[int, int, int, int], ...] = (
{table([tuple(r) for r in fold_runs(fold)])}
)
# fmt: on
'''


def main() -> None:
    starts, continues, fold = probe()
    OUT.write_text(render(starts, continues, fold), encoding="utf-8")
    print(
        f"{OUT}: {len(starts)} token code points, {len(continues)} continuing, {len(fold)} folded",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
