"""The few words of SQL that differ between the two backends, named once so the table modules share their SQL."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    """How one backend spells what standard SQL leaves open; the table modules write the rest once for both.

    Statements are written with `?` parameters whichever backend runs them (the PostgreSQL connection turns them
    into its own), and use only what both engines accept: `INSERT ... ON CONFLICT`, `RETURNING`, `FILTER`.
    """

    name: str
    greatest: str  # the larger of two values
    least: str  # the smaller of two values
    # a join whose loop order is fixed as written (SQLite plans CROSS JOIN left to right; PostgreSQL needs none)
    ordered_join: str
    # what a claiming SELECT appends so that two claimers never take the same row (SQLite's writer is alone)
    skip_locked: str
    position: str  # position of a substring in a text, 0 when absent: position(haystack, needle)
    # how many parameters one statement may bind (SQLite's kept under the 999 of older builds)
    parameters: int

    def contains(self, column: str) -> str:
        """A condition true when `column` holds the next parameter verbatim (case-sensitive, no wildcards)."""
        return f"{self.position}({column}, ?) > 0"


SQLITE = Dialect(
    name="sqlite",
    greatest="max",
    least="min",
    ordered_join="CROSS JOIN",
    skip_locked="",
    position="instr",
    parameters=900,
)

POSTGRESQL = Dialect(
    name="postgresql",
    greatest="GREATEST",
    least="LEAST",
    ordered_join="JOIN",
    skip_locked="FOR UPDATE SKIP LOCKED",
    position="strpos",
    parameters=65_535,
)
