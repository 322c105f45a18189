"""The journal (raw captured turns and their curation status) and the episodes (verbatim chunks of turns)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ..types import Episode, JournalEntry, JournalStatus, NewEpisode, TurnCapture
from .base import Database, TextIndex, chunks, marks
from .values import content_hash, from_rows

_JOURNAL_COLUMNS = """
    id, scope, session_id, turn_index, platform, user_content, assistant_content, created_at,
    status, source, attempts
"""
_EPISODE_COLUMNS = (
    "id, scope, session_id, turn_index, chunk_index, role, content, created_at, journal_id"
)


def _session_key(session_id: str) -> str:
    """The lock a session's appends share: only they may race for the session's next turn index."""
    return f"journal:{session_id}"


class Journal:
    """Turns as captured, in order; the curator works through the pending ones."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def append(self, turn: TurnCapture) -> int:
        """The whole of turn capture on the caller's thread: one short write transaction; returns the row id.

        The texts are stored as given (the engine redacts them first). The turn index is settled inside the
        transaction. A requested index that is free is used; one that holds this very turn (same user and
        assistant text) is a replay and returns that row; one taken by another turn, or no request, gets the
        session's next index. Concurrent writers of one session (two providers, two processes) therefore all
        keep their turns. A server that fails part way has the whole append run again (a replay of a turn that
        did land finds it by its index).
        """
        created = turn.created_at if turn.created_at is not None else self._db.clock()
        # writers of other sessions never change this session's indexes: only they need to wait for each other
        return self._db.atomic(
            lambda: self._append(turn, created), key=_session_key(turn.session_id)
        )

    def _append(self, turn: TurnCapture, created: float) -> int:
        with self._db.transaction(key=_session_key(turn.session_id)):
            index = turn.turn_index
            held = None if index is None else self._turn_at(turn.session_id, index)
            if held is not None:
                if content_hash(held["user_content"]) == content_hash(turn.user) and content_hash(
                    held["assistant_content"]
                ) == content_hash(turn.assistant):
                    return int(held["id"])
                index = None
            if index is None:
                index = self.next_turn_index(turn.session_id)
            rows = self._db.query(
                """
                INSERT INTO journal (
                    scope, session_id, turn_index, platform, source, user_content, assistant_content, created_at
                )
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                RETURNING id
            """,
                (
                    turn.scope,
                    turn.session_id,
                    index,
                    turn.platform,
                    str(turn.source),
                    turn.user,
                    turn.assistant,
                    created,
                ),
            )
            return int(rows[0]["id"])

    def try_append(self, turn: TurnCapture) -> int | None:
        """`append` without waiting: None at once when another thread or process holds the write lock."""
        with self._db.try_transaction(key=_session_key(turn.session_id)) as began:
            return self.append(turn) if began else None

    def _turn_at(self, session_id: str, turn_index: int) -> sqlite3.Row | None:
        """id, user_content and assistant_content of the session's row at this index, if any."""
        rows = self._db.query(
            """
            SELECT id, user_content, assistant_content
            FROM journal
            WHERE session_id = ? AND turn_index = ?
        """,
            (session_id, turn_index),
        )
        return rows[0] if rows else None

    def user_said(self, scope: str, session_id: str, turn_index: int) -> str:
        """What the user of `scope` said in the session's turn at this index ("" when there is none, or it was
        another scope's: a shared chat's session holds turns of several users)."""
        if turn_index < 0:
            return ""
        rows = self._db.query(
            "SELECT user_content FROM journal WHERE scope = ? AND session_id = ? AND turn_index = ?",
            (scope, session_id, turn_index),
        )
        return str(rows[0]["user_content"]) if rows else ""

    def append_many(self, turns: Sequence[TurnCapture]) -> int:
        """Journal many turns at once (an import), all or nothing in one transaction.

        Each turn keeps its turn index as given (the importer settles them); the rest of a row takes the
        table's defaults."""
        now = self._db.clock()
        self._db.executemany(
            """
            INSERT INTO journal (
                scope, session_id, turn_index, platform, source, user_content, assistant_content, created_at
            )
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """,
            [
                (
                    turn.scope,
                    turn.session_id,
                    turn.turn_index,
                    turn.platform,
                    str(turn.source),
                    turn.user,
                    turn.assistant,
                    turn.created_at if turn.created_at is not None else now,
                )
                for turn in turns
            ],
        )
        return len(turns)

    def pending(self, limit: int = 100, after_id: int = 0) -> list[JournalEntry]:
        """Rows waiting for curation, in id order; a row that failed waits until its retry time."""
        return from_rows(
            JournalEntry,
            self._db.query(
                f"""
            SELECT {_JOURNAL_COLUMNS}
            FROM journal
            WHERE status = 'pending' AND id > ? AND (retry_at IS NULL OR retry_at <= ?)
            ORDER BY id
            LIMIT ?
        """,
                (after_id, self._db.clock(), limit),
            ),
        )

    def claim(
        self, worker: str, *, limit: int, lease_seconds: float, after_id: int = 0
    ) -> list[JournalEntry]:
        """Take up to `limit` due pending rows for `worker` to curate, in id order, for `lease_seconds`.

        A row is free when nobody holds a live claim on it. A scope's rows are curated in the order they were
        captured: while another worker holds a live claim on a pending row of a scope, that scope's later rows
        are left to it. Claims only spare work: a row is curated once because its commit finds it still
        pending under the write lock, whoever claimed it and whenever a claim ran out."""
        now = self._db.clock()
        with self._db.transaction():
            rows = self._db.query(
                f"""
                UPDATE journal
                SET claimed_by = ?, claimed_until = ?
                WHERE id IN (
                    SELECT j.id
                    FROM journal j
                    WHERE j.status = 'pending' AND j.id > ? AND (j.retry_at IS NULL OR j.retry_at <= ?)
                      AND (j.claimed_until IS NULL OR j.claimed_until <= ? OR j.claimed_by = ?)
                      AND NOT EXISTS (
                          SELECT 1
                          FROM journal k
                          WHERE k.scope = j.scope AND k.status = 'pending' AND k.id < j.id
                            AND k.claimed_until > ? AND k.claimed_by <> ?
                      )
                    ORDER BY j.id
                    LIMIT ?
                    {self._db.dialect.skip_locked}
                )
                RETURNING {_JOURNAL_COLUMNS}
            """,
                (worker, now + lease_seconds, after_id, now, now, worker, now, worker, limit),
            )
        return sorted(from_rows(JournalEntry, rows), key=lambda entry: entry.id)

    def claimants(self) -> list[str]:
        """Who holds a live claim on a pending row (a worker that died leaves its claims until they run out)."""
        rows = self._db.query(
            """
            SELECT DISTINCT claimed_by
            FROM journal
            WHERE status = 'pending' AND claimed_until > ?
        """,
            (self._db.clock(),),
        )
        return [str(row["claimed_by"]) for row in rows]

    def release_claims(self, worker: str) -> int:
        """Give back every claim `worker` holds (it stopped, or it is known to have died); returns how many."""
        return self._db.execute(
            """
            UPDATE journal
            SET claimed_by = NULL, claimed_until = NULL
            WHERE claimed_by = ? AND status = 'pending'
        """,
            (worker,),
        ).rowcount

    def get(self, journal_id: int) -> JournalEntry | None:
        rows = from_rows(
            JournalEntry,
            self._db.query(
                f"""
            SELECT {_JOURNAL_COLUMNS}
            FROM journal
            WHERE id = ?
        """,
                (journal_id,),
            ),
        )
        return rows[0] if rows else None

    def mark(self, journal_id: int, status: JournalStatus, error: str | None = None) -> None:
        self._db.execute(
            """
            UPDATE journal
            SET status = ?, error = ?, processed_at = ?, attempts = attempts + 1, retry_at = NULL,
                claimed_by = NULL, claimed_until = NULL
            WHERE id = ?
        """,
            (str(status), error, self._db.clock(), journal_id),
        )

    def retry_later(
        self, journal_id: int, error: str, *, base_seconds: float, max_seconds: float
    ) -> None:
        """Count a failed attempt and keep the row pending, due again after base x 2^(attempts before) seconds
        (at most `max_seconds`). A row another writer already finished is left alone."""
        now = self._db.clock()
        least = self._db.dialect.least
        self._db.execute(
            f"""
            UPDATE journal
            SET attempts = attempts + 1, error = ?, processed_at = ?,
                retry_at = ? + {least}(?, ? * (1 << {least}(attempts, 30))),
                claimed_by = NULL, claimed_until = NULL
            WHERE id = ? AND status = 'pending'
        """,
            (error, now, now, max_seconds, base_seconds, journal_id),
        )

    def counts(self) -> dict[str, int]:
        rows = self._db.query("SELECT status, count(*) AS n FROM journal GROUP BY status")
        return {row["status"]: row["n"] for row in rows}

    def waiting_scopes(self) -> list[str]:
        """The scopes of turns not curated yet (pending, or failed): owners with no episode or memory so far."""
        rows = self._db.query(
            "SELECT DISTINCT scope FROM journal WHERE status IN ('pending', 'failed') ORDER BY scope"
        )
        return [row["scope"] for row in rows]

    def retrying(self) -> dict[str, float | int | None]:
        """Pending rows that failed at least once: how many, the most attempts, seconds until the next retry."""
        row = self._db.query("""
            SELECT count(*) AS n, max(attempts) AS most, min(retry_at) AS due
            FROM journal
            WHERE status = 'pending' AND attempts > 0
        """)[0]
        due = row["due"]
        wait = None if due is None else round(max(0.0, float(due) - self._db.clock()), 1)
        return {
            "rows": int(row["n"]),
            "max_attempts": int(row["most"] or 0),
            "next_retry_seconds": wait,
        }

    def erase_turn(self, scope: str, session_id: str, turn_index: int) -> None:
        """Blank the text of a captured turn, keeping its row (the turn stays counted as done)."""
        self._db.execute(
            """
            UPDATE journal SET user_content = '', assistant_content = ''
            WHERE scope = ? AND session_id = ? AND turn_index = ?
        """,
            (scope, session_id, turn_index),
        )

    def next_turn_index(self, session_id: str) -> int:
        """The index the session's next turn would get now (writers settle their own inside append)."""
        value = self._db.scalar(
            "SELECT max(turn_index) FROM journal WHERE session_id = ?", (session_id,)
        )
        return 0 if value is None else int(value) + 1

    def texts(self, session_id: str) -> set[str]:
        """Hashes of user and assistant texts already captured for a session (to skip re-capture)."""
        rows = self._db.query(
            """
            SELECT user_content, assistant_content
            FROM journal
            WHERE session_id = ?
        """,
            (session_id,),
        )
        texts = (row[column] for row in rows for column in ("user_content", "assistant_content"))
        return {content_hash(text) for text in texts if text}


class Episodes:
    """Verbatim chunks of captured turns: the safety net of recall when extraction missed something."""

    def __init__(self, db: Database, text: TextIndex) -> None:
        self._db = db
        self._text = text

    def insert(self, episode: NewEpisode) -> int:
        """Store one verbatim chunk; re-inserting the same (session, turn, role, chunk) returns the old id."""
        with self._db.transaction():
            added = self._db.query(
                """
                INSERT INTO episodes (
                    scope, session_id, turn_index, chunk_index, role, content, created_at, journal_id
                )
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                RETURNING id
            """,
                (
                    episode.scope,
                    episode.session_id,
                    episode.turn_index,
                    episode.chunk_index,
                    episode.role,
                    episode.content,
                    episode.created_at if episode.created_at is not None else self._db.clock(),
                    episode.journal_id,
                ),
            )
            if added:
                self._text.add("episodes", int(added[0]["id"]), (episode.content,))
                return int(added[0]["id"])
            return int(
                self._db.scalar(
                    """
                SELECT id
                FROM episodes
                WHERE scope = ? AND session_id = ? AND turn_index = ? AND role = ? AND chunk_index = ?
            """,
                    (
                        episode.scope,
                        episode.session_id,
                        episode.turn_index,
                        episode.role,
                        episode.chunk_index,
                    ),
                )
            )

    def get_many(self, ids: Iterable[int], *, released: bool = False) -> dict[int, Episode]:
        """These episodes by id; with `released`, not those held in quarantine (what recall may see, in one read)."""
        held = (
            "AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.kind = 'episode' AND q.item_id = e.id)"
            if released
            else ""
        )
        out: dict[int, Episode] = {}
        for chunk in chunks(list(dict.fromkeys(ids))):
            rows = self._db.query(
                f"""
                SELECT {_EPISODE_COLUMNS}
                FROM episodes e
                WHERE id IN ({marks(len(chunk))}) {held}
            """,
                chunk,
            )
            out.update((item.id, item) for item in from_rows(Episode, rows))
        return out

    def find(
        self,
        scopes: Sequence[str] | None = None,
        *,
        session_id: str | None = None,
        limit: int | None = None,
    ) -> list[Episode]:
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        if scopes is not None:
            where.append(f"scope IN ({marks(len(scopes))})")
            params.extend(scopes)
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        limit_sql = "" if limit is None else "LIMIT ?"
        params.extend([] if limit is None else [limit])
        return from_rows(
            Episode,
            self._db.query(
                f"""
            SELECT {_EPISODE_COLUMNS}
            FROM episodes
            WHERE {" AND ".join(where)}
            ORDER BY session_id, turn_index, role, chunk_index
            {limit_sql}
        """,
                params,
            ),
        )

    def scopes(self) -> list[str]:
        """Every scope that holds episodes."""
        rows = self._db.query("SELECT DISTINCT scope FROM episodes ORDER BY scope")
        return [row["scope"] for row in rows]

    def of_turn(self, scope: str, session_id: str, turn_index: int) -> list[int]:
        """Ids of every episode (both roles, every chunk) of one turn of a scope."""
        rows = self._db.query(
            "SELECT id FROM episodes WHERE scope = ? AND session_id = ? AND turn_index = ?",
            (scope, session_id, turn_index),
        )
        return [int(row["id"]) for row in rows]

    def delete(self, ids: Sequence[int]) -> None:
        for chunk in chunks(list(ids)):
            self._db.execute(f"DELETE FROM episodes WHERE id IN ({marks(len(chunk))})", chunk)

    def ids_before(self, cutoff: float) -> list[int]:
        rows = self._db.query("SELECT id FROM episodes WHERE created_at < ?", (cutoff,))
        return [int(row["id"]) for row in rows]

    def delete_before(self, cutoff: float) -> None:
        self._db.execute("DELETE FROM episodes WHERE created_at < ?", (cutoff,))
