"""The owner's operations on a memory home: doctor, backup, maintenance, reindexing, the model, bulk imports."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from .curation.curator import ask_missing
from .curation.redact import redact
from .embeddings.service import EmbeddingService
from .embeddings.tier import VectorTier
from .errors import DatabaseError, InvalidInputError
from .maintenance.scheduler import Maintenance
from .retrieval.cross_encoder import CrossEncoderReranker
from .store import Store, content_hash
from .types import Source, TurnCapture

Progress = Callable[[int, int], None]


class TurnToJournal(Protocol):
    """One imported exchange (see importers.ImportedTurn)."""

    @property
    def session_id(self) -> str: ...
    @property
    def user(self) -> str: ...
    @property
    def assistant(self) -> str: ...
    @property
    def created_at(self) -> float | None: ...


def schema_steps(target: Path | str) -> list[tuple[str, bool]]:
    """(step, applied) for every schema step this version knows, of the store at `target` (nothing is changed)."""
    from .store.schema import steps

    return [(step.name, step.applied) for step in steps(target)]


def migrate(target: Path | str) -> list[str]:
    """Apply the pending schema steps of the store at `target` (created when new); returns those applied now."""
    from .store.schema import apply

    return apply(target)


class Admin:
    """Whole-store operations the CLI, MCP server and inspector run on the owner's request."""

    def __init__(
        self,
        store: Store,
        embeddings: EmbeddingService,
        vectors: VectorTier,
        maintenance: Maintenance,
        *,
        reranker: CrossEncoderReranker | None = None,
    ) -> None:
        self._store = store
        self._reranker = reranker
        self._embeddings = embeddings
        self._vectors = vectors
        self._maintenance = maintenance

    # -- the embedding model --------------------------------------------------------------------------------
    def load_model(self, *, reindex_in_background: bool = True) -> None:
        """Start loading the embedding model on its own thread (idempotent); without `reindex_in_background`
        the loader leaves what lacks a vector to `reindex`."""
        if not reindex_in_background:
            self._embeddings.auto_reindex = False
        self._embeddings.start()
        if self._reranker is not None:
            self._reranker.start()

    def wait_model(self, seconds: float) -> bool:
        """Wait until the model is loaded (True) or `seconds` pass (False)."""
        return self._embeddings.wait_ready(seconds)

    def wait_reranker(self, seconds: float) -> bool:
        """Wait until the configured reranker loaded (True), or failed, or `seconds` pass; True without one."""
        return self._reranker is None or self._reranker.wait_ready(seconds)

    def stop_model(self, timeout: float = 5.0) -> None:
        self._embeddings.stop(timeout=timeout)

    def model_status(self) -> dict[str, object]:
        return self._embeddings.status()

    # -- maintenance and repair -----------------------------------------------------------------------------
    def last_maintenance(self) -> dict[str, dict[str, object]]:
        """When each maintenance job last ran on this file, and what it did."""
        return self._maintenance.last_runs()

    def maintain(
        self,
        job: str | None = None,
        *,
        dry_run: bool = False,
        progress: Progress | None = None,
        wait_seconds: float = 60.0,
    ) -> dict[str, object]:
        """Run maintenance now, as the memory home's one runner (waits up to `wait_seconds` for another)."""
        if not dry_run:
            self._store.require_writable()
        with self._store.runner_lock("maintenance").held(timeout=wait_seconds) as held:
            if not held:
                raise DatabaseError(
                    "another process is running maintenance on this memory; try again shortly"
                )
            return self._maintenance.run(job, dry_run=dry_run, progress=progress)

    def reindex(self, progress: Progress | None = None) -> int:
        """Give memories without questions theirs (curation/questions.py), then embed every item, question included,
        that has no vector from the active model; returns how many were embedded. Resumable: what an interrupted run
        finished stays done."""
        self._store.require_writable()
        if not self._embeddings.wait_ready(timeout=120):
            raise InvalidInputError(
                f"no embedding model is available: {self._embeddings.status().get('reason')}"
            )
        ask_missing(self._store)
        return self._vectors.catch_up(progress=progress)

    def doctor(self, *, repair: bool = False) -> dict[str, object]:
        """Integrity, FTS and vector consistency, orphans; `repair` rebuilds and cleans what it can."""
        store = self._store
        if repair:
            store.require_writable()
        report: dict[str, object] = {
            "integrity": store.health.integrity_check(),
            "fts": store.search.integrity(),
            "orphans": store.health.orphan_counts(),
            "vectors": {f"{k}/{m}/{d}": n for (k, m, d), n in store.vectors.model_counts().items()},
        }
        if repair:
            store.search.rebuild()
            removed = store.health.delete_orphans()
            embedded = self._vectors.catch_up() if self._embeddings.wait_ready(60) else 0
            report["repaired"] = {
                "fts_rebuilt": True,
                "orphans_removed": removed,
                "embedded": embedded,
            }
        return report

    def backup(self, dest: Path) -> None:
        self._store.health.backup_to(dest)

    def copy_store(self, target: Path | str, progress: Progress | None = None) -> dict[str, int]:
        """Copy the whole store into a new, empty one at `target` (a SQLite file or a postgresql:// database);
        rows copied per table, each count checked against the source."""
        copy = Store.open(target)
        try:
            return self._store.copy_to(copy, progress)
        finally:
            copy.close()

    # -- bulk import ----------------------------------------------------------------------------------------
    def journal_imported(
        self,
        turns: Sequence[TurnToJournal],
        *,
        scope: str,
        platform: str,
        clean: Callable[[str], str],
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Journal every turn not captured before for its session, in one bulk insert (all or nothing); the
        curator does the rest. Returns how many were journaled."""
        next_index: dict[str, int] = {}
        known: dict[str, set[str]] = {}
        rows: list[TurnCapture] = []
        with self._store.transaction():
            for turn in turns:
                if turn.session_id not in known:
                    known[turn.session_id] = self._store.journal.texts(turn.session_id)
                    next_index[turn.session_id] = self._store.journal.next_turn_index(
                        turn.session_id
                    )
                if progress is not None:
                    progress(1)
                if _already_captured(turn, known[turn.session_id]):
                    continue
                rows.append(
                    TurnCapture(
                        scope=scope,
                        session_id=turn.session_id,
                        turn_index=next_index[turn.session_id],
                        platform=platform,
                        source=Source.IMPORT,
                        user=clean(turn.user),
                        assistant=clean(turn.assistant),
                        created_at=turn.created_at,
                    )
                )
                next_index[turn.session_id] += 1
            self._store.journal.append_many(rows)
        return len(rows)


def _already_captured(turn: TurnToJournal, known: set[str]) -> bool:
    texts = [t for t in (turn.user, turn.assistant) if t.strip()]
    return bool(texts) and all(content_hash(redact(t)) in known for t in texts)
