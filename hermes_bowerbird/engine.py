"""Bowerbird: the one memory service that the provider, tools, CLI and MCP server all call."""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .admin import Admin
from .config import Config
from .curation.capture import Capture
from .curation.curator import Curator, CuratorWorker
from .curation.extract import extract_candidates
from .curation.follow import IndexFollower
from .curation.injected import strip_injected_context
from .curation.redact import redact
from .curation.screen import screen
from .curation.worker import CurationProcess, supported, worker_state
from .embeddings.index import IndexRegistry
from .embeddings.service import EmbeddingService
from .embeddings.tier import VectorTier
from .errors import InvalidInputError, NotFoundError
from .explain import nothing_stored
from .inspection import Inspection
from .llm.selection import select_llm
from .maintenance.bulletin import BulletinBuilder
from .maintenance.scheduler import Maintenance, Scheduler
from .options import RECALL_DEFAULTS, REMEMBER_DEFAULTS, RecallOptions, RememberOptions, TurnCapture
from .retrieval import Hit, RecallRequest, Retriever
from .retrieval.cross_encoder import CrossEncoderReranker
from .sanitize import storable
from .store import Store
from .types import (
    LLM,
    Bulletin,
    Candidate,
    Clock,
    Edge,
    Embedder,
    ItemKind,
    Memory,
    MemoryType,
    NewMemory,
    Relation,
    Source,
)

log = logging.getLogger(__name__)

# who writes a memory as the user typing it (the command line, the inspector), not the agent, a tool or a host file
_TYPED_BY_THE_USER = frozenset({"cli", "inspector"})
_MAX_TEXT_CHARS = 200_000  # one captured or remembered text; the journal is not a file store
IMPORT_THREAD_NAME = "bowerbird-import"
SHUTDOWN_SECONDS = 4.0  # the host gives a provider's shutdown 5 s
# of the shutdown bound, kept for stopping and joining threads after the drain
_STOP_RESERVE_SECONDS = 1.5
_EXIT_JOIN_SECONDS = 60.0  # at interpreter exit, how long to wait for each engine's threads
# Engines whose threads may still run: at interpreter exit they are shut down and joined, because a thread
# still inside native code (torch, tokenizers) when the interpreter tears down aborts the process.
_OPEN: weakref.WeakSet[Bowerbird] = weakref.WeakSet()
_LINGERING: list[Bowerbird] = []
_EXIT_HOOK: list[bool] = []
_EXIT_LOCK = threading.Lock()  # not the files' lock: engines start while open_shared holds that one


def _file_key(path: Path | str) -> str:
    text = str(path)
    return text if "://" in text else str(Path(text).expanduser().resolve())


class EngineFiles:
    """What the engines of one process share per database file, and when it is released.

    Hermes builds a provider per agent (gateway users, resumed sessions), so `open_shared` keeps one engine
    per file. Every engine over a file, shared or not, is counted; when the last one shuts down, the file's
    in-memory vector indexes and its reindex lock (in `indexes`, which every engine's embedding service is given)
    are dropped, so a database deleted and recreated at the same path never answers from the old one's vectors.
    """

    def __init__(self) -> None:
        self.indexes = IndexRegistry()
        self._shared: dict[str, Bowerbird] = {}
        self._shared_lock = threading.Lock()  # held while a shared engine starts
        self._open: dict[str, int] = {}
        self._open_lock = threading.Lock()

    def shared(self, key: str, build: Callable[[], Bowerbird]) -> Bowerbird:
        """The live shared engine of `key` (built when there is none), with one more reference."""
        with self._shared_lock:
            engine = self._shared.get(key)
            if engine is None or engine._closed:
                engine = build()
                self._shared[key] = engine
            engine._refs += 1
            return engine

    def unshare(self, key: str, engine: Bowerbird) -> bool:
        """Drop one reference to a shared engine; True when it was the last (the caller shuts it down)."""
        with self._shared_lock:
            engine._refs -= 1
            if engine._refs > 0:
                return False
            if self._shared.get(key) is engine:
                del self._shared[key]
            return True

    def opened(self, path: Path | str) -> None:
        key = _file_key(path)
        with self._open_lock:
            self._open[key] = self._open.get(key, 0) + 1

    def closed(self, path: Path | str) -> None:
        """One engine over `path` shut down; with the last one, the file's vector indexes go."""
        key = _file_key(path)
        with self._open_lock:
            left = self._open.get(key, 0) - 1
            if left > 0:
                self._open[key] = left
                return
            self._open.pop(key, None)
            self.indexes.drop(path)


FILES = EngineFiles()


class Bowerbird:
    """Owns the store, the vector tier, the curator and maintenance threads, and the retriever."""

    def __init__(
        self,
        config: Config,
        *,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        clock: Clock = time.time,
        background: bool = True,
        primary: bool = True,
        profile_scope: str | None = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self.store = Store.open(config.store_target, clock=clock)
        FILES.opened(self.store.location)
        # a read-only store embeds queries only, and stores nothing
        reindex = not self.store.readonly
        self.embeddings = (
            EmbeddingService.from_embedder(
                embedder, self.store, auto_reindex=reindex, indexes=FILES.indexes
            )
            if embedder is not None
            else EmbeddingService(config, self.store, auto_reindex=reindex, indexes=FILES.indexes)
        )
        self.vectors = VectorTier(self.store, self.embeddings, ann_threshold=config.ann_threshold)
        self.llm = llm if llm is not None else select_llm(config, self.store, clock)
        self.curator = Curator(self.store, self.vectors, config, clock, self.llm)
        # the optional cross-encoder, off unless configured
        self.reranker = (
            CrossEncoderReranker(
                config.reranker_model,
                candidates=config.reranker_candidates,
                # one thread unless configured: on a busy 2-core host torch's two spin (cross_encoder.py)
                threads=config.embedding_threads or 1,
            )
            if config.reranker_model
            else None
        )
        self.retriever = Retriever(self.store, self.vectors, config, clock, reranker=self.reranker)
        self.bulletins = BulletinBuilder(self.store, config, clock, self.llm)
        self.maintenance = Maintenance(
            self.store,
            self.vectors,
            config,
            clock,
            self.llm,
            profile_scope=profile_scope,
            bulletins=self.bulletins,
        )
        self.follower = IndexFollower(self.store, self.vectors)
        # curation in a worker process unless settings, platform or an injected model (tests) say otherwise
        self._process_wanted = (
            config.curation_mode == "process" and supported() and embedder is None and llm is None
        )
        self._curation: CurationProcess | None = None
        # with a worker process: capture never waits on its writes
        self._capture: Capture | None = None
        self.inspect = Inspection(self.store)  # what the edges read
        # the owner's operations
        self.admin = Admin(
            self.store, self.embeddings, self.vectors, self.maintenance, reranker=self.reranker
        )
        self._worker: CuratorWorker | None = None
        self._scheduler: Scheduler | None = None
        self._importer: threading.Thread | None = None
        self._import_stop = threading.Event()
        self._closed = False
        self._refs = 0
        if background:
            self.start(primary=primary)

    def start(self, *, primary: bool = True) -> None:
        """Start loading the model and the background threads (idempotent)."""
        _OPEN.add(self)
        _register_exit_hook()
        if not self.store.readonly:
            self._start_curation()
        self.embeddings.start()  # loads the model on its own thread, then embeds whatever has no vector yet
        if self.reranker is not None:
            self.reranker.start()
        reason = self.store.readonly_reason
        if reason is not None:
            log.warning("%s; recall works", nothing_stored(self.store.location, reason))
            return
        if self._scheduler is None and primary and self.config.maintenance_enabled:
            self._scheduler = Scheduler(self.maintenance, self.clock, primary=primary)
            self._scheduler.start()

    def _start_curation(self) -> None:
        """The memory home's worker process (started here if none runs), else the curator thread."""
        if self._curation is not None or self._worker is not None:
            return
        if self._process_wanted:
            process = CurationProcess(self.config, self.store, llm_backend=_llm_backend(self.llm))
            if process.start():
                self._curation = process
                self._capture = Capture(self.store)
                self.store.db.leave_checkpoints()  # the worker's commits checkpoint, not the agent's turns
                self.embeddings.auto_reindex = False  # the worker embeds whatever has no vector yet
                return
        self._worker = CuratorWorker(self.curator, self.store)
        self._worker.start()

    @property
    def curation_mode(self) -> str | None:
        """ "process" or "thread" while this engine has curation running, else None (the CLI, read-only)."""
        return (
            "process"
            if self._curation is not None
            else "thread"
            if self._worker is not None
            else None
        )

    # -- shared instances (Hermes makes one provider per agent in a process) --------------------------------
    @classmethod
    def open_shared(cls, config: Config, **kwargs: Any) -> Bowerbird:
        """One engine per database file per process, reference counted; pair with release()."""
        return FILES.shared(_file_key(config.db_path), lambda: cls(config, **kwargs))

    def release(self) -> None:
        if FILES.unshare(_file_key(self.config.db_path), self):
            self.shutdown()

    # -- write path -----------------------------------------------------------------------------------------
    def capture_turn(self, turn: TurnCapture) -> int | None:
        """Redact and journal one turn (one short transaction); the curator does the rest in the background.

        `turn.turn_index` is the caller's guess; the journal settles the real index atomically.
        With a worker process writing the database, a turn that would wait for its write lock is appended by
        the capture thread instead, right after it (None then: the row id is not known yet).
        """
        self.store.require_writable()
        row = replace(turn, user=clean_text(turn.user), assistant=clean_text(turn.assistant))
        if self._capture is not None:
            self._capture.append(row)
            return None
        journal_id = self.store.journal.append(row)
        if self._worker is not None:
            self._worker.notify()
        return journal_id

    def end_session(self, scope: str, session_id: str) -> None:
        """A session ended or is being compressed: curate its pending model batch now (in the background)."""
        if self._curation is not None:
            self._curation.end_session(scope, session_id)
        elif self._worker is not None:
            self._worker.end_session(scope, session_id)
        else:
            self.curator.end_session(scope, session_id)

    def wait_captured(self, timeout: float = SHUTDOWN_SECONDS) -> bool:
        """Wait until every turn captured so far is in the journal (a capture thread may still hold some)."""
        return self._capture is None or self._capture.drain(timeout)

    def curate_now(self, limit: int | None = None) -> int:
        """Curate pending journal rows on this thread (CLI imports, tests, benchmarks without threads)."""
        self.store.require_writable()
        return self.curator.run_pending(limit)

    def remember(
        self, content: str, *, scope: str, options: RememberOptions = REMEMBER_DEFAULTS
    ) -> Memory:
        """Store one memory now (dedup by content; a same-subject memory is superseded)."""
        self.store.require_writable()
        text = clean_text(content).strip()
        if not text:
            raise InvalidInputError("nothing to remember: the content is empty")
        if options.importance is not None and not 0.0 <= options.importance <= 1.0:
            raise InvalidInputError("importance must be between 0 and 1")
        guess = _classify(text)
        new = NewMemory(
            scope=scope,
            type=options.type or (guess.type if guess else MemoryType.FACT),
            content=text,
            source=options.source,
            importance=options.importance,
            subject=guess.subject if guess else None,
            session_id=options.session_id,
            tags=tuple(options.tags),
            confidence=1.0,
        )
        memory = self.curator.store_memory(new, actor=options.actor)
        self._screen(memory.id, text, source=options.source, actor=options.actor)
        return memory

    def remember_many(
        self, entries: Sequence[tuple[str, MemoryType]], *, scope: str, source: Source, actor: str
    ) -> list[int]:
        """Store typed texts (an import) in one batch: one model call, one transaction. Empty ones are skipped."""
        self.store.require_writable()
        news = []
        for content, memory_type in entries:
            text = clean_text(content).strip()
            if not text:
                continue
            guess = _classify(text)
            news.append(
                NewMemory(
                    scope=scope,
                    type=memory_type,
                    content=text,
                    source=source,
                    subject=guess.subject if guess else None,
                    confidence=1.0,
                )
            )
        ids = self.curator.store_memories(news, actor=actor)
        for memory_id, new in zip(ids, news, strict=True):
            self._screen(memory_id, new.content, source=source, actor=actor)
        return ids

    def import_in_background(self, work: Callable[[threading.Event], object]) -> None:
        """Run `work(stop)` on the engine's named import thread (one at a time); shutdown sets `stop`."""
        if self._importer is not None and self._importer.is_alive():
            log.info("an import is already running; this one is skipped")
            return
        self._importer = threading.Thread(
            target=self._run_import, args=(work,), name=IMPORT_THREAD_NAME, daemon=True
        )
        self._importer.start()

    def wait_import(self, timeout: float | None = None) -> bool:
        """Wait for a background import to finish; True when none is running."""
        importer = self._importer
        if importer is not None:
            importer.join(timeout)
            return not importer.is_alive()
        return True

    def _run_import(self, work: Callable[[threading.Event], object]) -> None:
        try:
            work(self._import_stop)
        except Exception:
            log.exception("background import failed; what was imported before the failure stays")

    def update(
        self,
        memory_id: int,
        content: str,
        *,
        scopes: Sequence[str],
        actor: str = "tool",
        source: Source = Source.TOOL,
    ) -> Memory:
        """Write a new version that supersedes the old one (both kept, linked by an `updates` edge).

        The new version goes through the curator like any stored memory (dedup, entity links, same-subject
        supersession), in one transaction with superseding the old: content another current memory already
        holds reinforces that one, which then supersedes the old; the old's own content only reinforces it."""
        self.store.require_writable()
        old = self.store.memories.require(memory_id, scopes)
        text = clean_text(content).strip()
        if not text:
            raise InvalidInputError("the new content is empty")
        new = NewMemory(
            scope=old.scope,
            type=old.type,
            content=text,
            source=source,
            importance=old.importance,
            subject=old.subject,
            tags=old.tags,
            session_id=old.session_id,
            confidence=1.0,
        )
        memory = self.curator.store_memory(new, actor=actor, supersedes=old.id)
        self._screen(memory.id, text, source=source, actor=actor)
        return memory

    def _screen(self, memory_id: int, text: str, *, source: Source, actor: str) -> None:
        """Quarantine a memory whose text could steer a model: host files get the host's strict screen, and only
        what the user typed themselves (the command line, the inspector) may give standing orders."""
        strict = source in (Source.IMPORT, Source.MIRROR)
        reasons = screen(
            text, strict=strict, said_by_user=not strict and actor in _TYPED_BY_THE_USER
        )
        if reasons:
            self.store.quarantine_item(ItemKind.MEMORY, memory_id, ", ".join(reasons))

    def release_quarantined(
        self, memory_id: int, *, scopes: Sequence[str], actor: str = "user"
    ) -> bool:
        """Let a quarantined memory be recalled again (and the episodes of its turns); False if it was not held."""
        self.store.require_writable()
        memory = self.store.memories.require(memory_id, scopes)
        released = self.store.release(ItemKind.MEMORY, memory.id, actor=actor)
        if released and memory.session_id:
            turns = {
                (p.session_id, p.turn_index)
                for p in self.store.provenance.of([memory.id])[memory.id]
            }
            for episode in self.store.episodes.find([memory.scope], session_id=memory.session_id):
                if (episode.session_id, episode.turn_index) in turns:
                    self.store.release(ItemKind.EPISODE, episode.id, actor=actor)
        return released

    def forget(
        self, memory_id: int, *, scopes: Sequence[str], reason: str = "", actor: str = "tool"
    ) -> Memory:
        self.store.require_writable()
        memory = self.store.memories.require(memory_id, scopes)
        questions = self.store.forget(
            memory.id, reason=reason or "forgotten on request", actor=actor
        )
        self.vectors.remove(ItemKind.MEMORY, [memory.id])
        self.vectors.remove(ItemKind.QUESTION, questions)
        return self.store.memories.require(memory.id)

    def forget_turn(
        self, episode_id: int, *, scopes: Sequence[str], reason: str = "", actor: str = "tool"
    ) -> tuple[list[int], list[int]]:
        """Forget the turn an episode of `scopes` belongs to: both sides of it and what was learnt from it (see
        `Database.forget_turn`); returns the episode and memory ids."""
        self.store.require_writable()
        episode = self.store.episodes.get_many([episode_id]).get(episode_id)
        if episode is None or episode.scope not in scopes:
            raise NotFoundError(f"no episode with id {episode_id}")
        episodes, memories = self.store.forget_turn(
            episode.scope,
            episode.session_id,
            episode.turn_index,
            reason=reason or "forgotten on request with its turn",
            actor=actor,
        )
        self.vectors.remove(ItemKind.EPISODE, episodes)
        self.vectors.remove(ItemKind.MEMORY, memories)
        self.vectors.remove(ItemKind.QUESTION, self.store.questions.ids_of(memories))
        return episodes, memories

    def relate(
        self, src: int, dst: int, relation: Relation, *, scopes: Sequence[str], actor: str = "tool"
    ) -> Edge:
        self.store.require_writable()
        self.store.memories.require(src, scopes)
        self.store.memories.require(dst, scopes)
        return self.store.add_edge(
            src, dst, relation, 1.0, actor=actor, reason="related on request"
        )

    # -- read path ------------------------------------------------------------------------------------------
    def recall(
        self, query: str, *, scopes: Sequence[str], options: RecallOptions = RECALL_DEFAULTS
    ) -> list[Hit]:
        """Ranked hits for `query` among the memories and episodes of `scopes`."""
        self.follower.follow()  # the indexes take in what the curation worker stored since the last search
        request = RecallRequest(
            query=storable(query),
            scopes=tuple(scopes),
            limit=options.limit or self.config.recall_limit,
            types=tuple(options.types),
            since=options.since,
            until=options.until,
            budget_tokens=options.budget_tokens,
            explain=options.explain,
            exclude_ids=frozenset(options.exclude),
            include_episodes=options.include_episodes,
            min_relevance=options.min_relevance,
            inject=options.inject,
        )
        return self.retriever.search(request, touch=options.touch)

    def bulletin(
        self,
        scope: str,
        *,
        visible: Sequence[str] | None = None,
        force: bool = False,
        synthesise: bool = True,
    ) -> Bulletin | None:
        return self.bulletins.current(
            scope, tuple(visible or (scope,)), force=force, synthesise=synthesise
        )

    def status(self) -> dict[str, object]:
        journal = self.store.journal.counts()
        return {
            "db_path": self.store.location,
            "read_only": self.store.readonly,
            "read_only_reason": self.store.readonly_reason,
            "memories": self.store.memories.count_by_type(),
            "counts": self.store.health.counts(),
            "journal_backlog": journal.get("pending", 0),
            "journal": journal,
            "journal_retrying": self.store.journal.retrying(),
            "embedding": self.embeddings.status(),
            "reranker": None if self.reranker is None else self.reranker.status(),
            "llm": self.llm.name if self.llm is not None else None,
            "threads": {
                "curator": self._worker is not None and self._worker.is_alive(),
                "maintenance": self._scheduler is not None and self._scheduler.is_alive(),
            },
            "curation_worker": {
                "mode": self.curation_mode,
                **worker_state(self.config.db_path).as_dict(),
                "backlog": journal.get("pending", 0),
            },
        }

    def restore(
        self, memory_id: int, *, scopes: Sequence[str], reason: str = "", actor: str = "tool"
    ) -> Memory:
        """Undo a forget: the memory is searchable again."""
        self.store.require_writable()
        memory = self.store.memories.require(memory_id, scopes)
        self.store.restore(memory.id, reason=reason or "restored on request", actor=actor)
        self.vectors.add(ItemKind.MEMORY, [(memory.id, memory.content)])
        return self.store.memories.require(memory.id)

    def set_importance(
        self, memory_id: int, importance: float, *, scopes: Sequence[str], actor: str = "tool"
    ) -> Memory:
        self.store.require_writable()
        if not 0.0 <= importance <= 1.0:
            raise InvalidInputError("importance must be between 0 and 1")
        memory = self.store.memories.require(memory_id, scopes)
        self.store.set_importance(
            memory.id, importance, reason="importance set on request", actor=actor
        )
        return self.store.memories.require(memory.id)

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every journal row is curated (True) or the timeout passes (False)."""
        if self._curation is not None:
            deadline = time.monotonic() + timeout
            return self.wait_captured(timeout) and self._curation.drain(_left(deadline))
        if self._worker is None:
            self.curate_now()
            return True
        return self._worker.drain(timeout)

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop within a bound (SHUTDOWN_SECONDS unless told): curate what fits, signal every thread, join
        them with the time left, close. What is not curated stays in the journal and resumes at the next
        start; a thread that outlives the bound (a model still loading) is joined at interpreter exit."""
        if self._closed:
            return
        self._closed = True
        _OPEN.discard(self)
        bound = (
            min(self.config.shutdown_drain_seconds, SHUTDOWN_SECONDS)
            if timeout is None
            else timeout
        )
        deadline = time.monotonic() + bound
        if self._scheduler is not None:
            self._scheduler.request_stop()
        self._import_stop.set()  # an import stops between batches; the next start imports the rest
        # a running reindex stops after its batch; loading cannot be cut short
        self.embeddings.stop(timeout=0)
        if self._worker is not None:
            self._worker.drain(max(0.0, _left(deadline) - _STOP_RESERVE_SECONDS))
        elif self._curation is not None:
            self.wait_captured(max(0.0, _left(deadline) - _STOP_RESERVE_SECONDS))
            self._curation.drain(max(0.0, _left(deadline) - _STOP_RESERVE_SECONDS))
        if self._stop_threads(deadline):
            self.store.close()
        else:
            log.info(
                "bowerbird threads still busy after %.1fs; they finish before the process exits",
                bound,
            )
            _linger(self)
        FILES.closed(self.store.location)

    def _stop_threads(self, deadline: float) -> bool:
        """Stop and join the engine's threads until `deadline`; True when none is left running."""
        stopped = True
        if self._capture is not None:
            stopped = self._capture.stop(timeout=_left(deadline) / 2) and stopped
        if self._curation is not None:
            stopped = self._curation.stop(timeout=min(1.0, _left(deadline))) and stopped
        if self._worker is not None:
            stopped = self._worker.stop(timeout=_left(deadline)) and stopped
        if self._importer is not None:
            self._importer.join(_left(deadline))
            stopped = not self._importer.is_alive() and stopped
        if self._scheduler is not None:
            stopped = self._scheduler.stop(timeout=_left(deadline)) and stopped
        self.retriever.close()  # a search's vector step in flight takes milliseconds
        if self.reranker is not None:
            self.reranker.close()
        return self.embeddings.wait_idle(_left(deadline)) and stopped

    def _finish_at_exit(self, seconds: float) -> None:
        if self._stop_threads(time.monotonic() + seconds):
            self.store.close()
        else:
            log.warning("bowerbird threads still running at interpreter exit after %.0fs", seconds)


def _llm_backend(llm: LLM | None) -> str:
    """The backend a worker process uses to reach the same model as this engine ("none" without one)."""
    if llm is None:
        return "none"
    return (
        "host"
        if llm.name.startswith("host")
        else "gemini"
        if llm.name.startswith("gemini")
        else "none"
    )


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _linger(engine: Bowerbird) -> None:
    with _EXIT_LOCK:
        _LINGERING.append(engine)


def _register_exit_hook() -> None:
    with _EXIT_LOCK:
        if _EXIT_HOOK:
            return
        _EXIT_HOOK.append(True)
    atexit.register(_stop_everything_at_exit)


def _stop_everything_at_exit() -> None:
    """Shut down engines nobody shut down, then wait for every engine's threads (bounded) before teardown."""
    for engine in list(_OPEN):
        engine.shutdown()
    with _EXIT_LOCK:
        lingering = list(_LINGERING)
        _LINGERING.clear()
    for engine in lingering:
        engine._finish_at_exit(_EXIT_JOIN_SECONDS)


def clean_text(text: str | None) -> str:
    """What may be stored of a text: no recalled-memory blocks, bounded in size (head kept), secrets redacted."""
    text = storable(strip_injected_context(text))
    if len(text) > _MAX_TEXT_CHARS:
        log.warning("text of %d chars clipped to %d", len(text), _MAX_TEXT_CHARS)
        text = text[:_MAX_TEXT_CHARS]
    return redact(text)


def _classify(text: str) -> Candidate | None:
    """The best typed reading of a single statement, or None."""
    candidates = extract_candidates(text, "")
    return max(candidates, key=lambda c: c.importance) if candidates else None
