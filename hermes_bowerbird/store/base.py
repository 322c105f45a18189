"""What every backend's connection offers the table modules: statements, transactions, locks and their dialect."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from ..types import Clock, ItemKind
from .dialect import SQLITE, Dialect

# stay under SQLite's bound-parameter limit (PostgreSQL's is far higher)
SQL_VARS = SQLITE.parameters
Params = Sequence[Any] | Mapping[str, Any]
T = TypeVar("T")


def chunks(items: Sequence[T], size: int = SQL_VARS) -> Iterator[Sequence[T]]:
    """`items` in slices small enough to bind as parameters of one statement."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def marks(n: int) -> str:
    """`?, ?, ...` for an IN list of n parameters."""
    return ",".join("?" * n)


class Row(Protocol):
    """A result row read by column name or position (sqlite3.Row, and the PostgreSQL connection's rows)."""

    def __getitem__(self, key: int | str) -> Any: ...

    def keys(self) -> list[str]: ...

    def __iter__(self) -> Iterator[Any]: ...

    def __len__(self) -> int: ...


class Outcome(Protocol):
    """What `execute` returns: how many rows the statement changed."""

    @property
    def rowcount(self) -> int: ...


class TextIndex(Protocol):
    """Keeps a backend's full-text index of a row written (SQLite's FTS5 tables keep themselves by trigger)."""

    def add(self, table: str, item_id: int, columns: Sequence[str]) -> None:
        """Index the row `item_id` of `table` (memories: content, summary, tags; episodes: content)."""
        ...

    def add_many(self, table: str, rows: Sequence[tuple[int, Sequence[str]]]) -> None:
        """Index these (id, columns) rows of `table` at once (a bulk copy)."""
        ...


class FullTextSearch(Protocol):
    """Keyword search of memories and episodes, ranked by bm25 as SQLite's FTS5 ranks it, on either backend.

    Match expressions come from `fts_match_expression` (quoted terms, some as prefixes)."""

    # by_scope: rank each scope's rows side by side where the backend can (a server, on a second connection), for
    # a large set of scopes; the same answer either way
    def memories(
        self,
        match: str,
        scopes: Sequence[str],
        limit: int = 50,
        *,
        current_only: bool = False,
        by_scope: bool = False,
    ) -> list[tuple[int, float]]: ...

    def episodes(
        self, match: str, scopes: Sequence[str], limit: int = 50, *, by_scope: bool = False
    ) -> list[tuple[int, float]]: ...

    def ids_after(self, kind: ItemKind, scopes: Sequence[str], after_id: int = 0) -> list[int]: ...

    def corpus_size(self) -> int: ...

    def term_document_counts(self, words: Sequence[str], cap: int = 10_000) -> dict[str, int]: ...

    def integrity(self) -> dict[str, bool]: ...

    def rebuild(self) -> list[str]: ...

    def optimize(self) -> None: ...


class RunnerLock(Protocol):
    """One holder at a time across every process and host that uses the store (maintenance, reindexing)."""

    def held(
        self, timeout: float = 0.0, stop: Any | None = None
    ) -> AbstractContextManager[bool]: ...


class Database(Protocol):
    """One backend's connection as the table modules use it; rows come back by column name or position.

    Writes inside `transaction()` are atomic and serialised with every other writer of the store, on this host
    or another: what a transaction reads stays as it read it until it commits. `transaction(key)` serialises
    only with writers of the same key (appending a session's turns), where the backend can tell them apart.
    """

    dialect: Dialect
    clock: Clock
    # why the store was opened read-only, in words, or None when it is writable
    readonly_reason: str | None

    @property
    def readonly(self) -> bool: ...

    @property
    def location(self) -> str:
        """Where the data lives, safe to print (a path, or a server address without its password)."""
        ...

    def execute(self, sql: str, params: Params = ()) -> Outcome: ...

    def executemany(self, sql: str, rows: Sequence[Params]) -> None: ...

    def query(self, sql: str, params: Params = ()) -> list[Any]: ...

    def scalar(self, sql: str, params: Params = ()) -> Any: ...

    def transaction(self, key: str | None = None) -> AbstractContextManager[None]: ...

    def try_transaction(self, key: str | None = None) -> AbstractContextManager[bool]: ...

    def reading(self) -> AbstractContextManager[None]:
        """Meanwhile this thread's reads may share one connection (a search reads in many small statements)."""
        ...

    def atomic(self, work: Callable[[], T], key: str | None = None) -> T:
        """`work` in one transaction, run again whole when the backend failed transiently part way."""
        ...

    def data_version(self) -> int:
        """A number that changes when another connection commits (a cheap "did anything change")."""
        ...

    def checkpoint(self) -> None: ...

    def leave_checkpoints(self) -> None: ...

    def runner_lock(self, name: str) -> RunnerLock: ...

    def reset_identities(self, tables: Sequence[str]) -> None:
        """After rows were written with their own ids: the next id of each table follows the highest."""
        ...

    def close(self) -> None: ...
