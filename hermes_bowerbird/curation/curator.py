"""The curator: turns journal rows into episodes and merged, typed memories, and the worker thread that runs it."""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from ..errors import LLMError
from ..store import fts_match_expression
from ..text import normalise_entity
from ..types import (
    LLM,
    Candidate,
    Clock,
    Embedder,
    ItemKind,
    JournalEntry,
    JournalStatus,
    Memory,
    NewEpisode,
    NewMemory,
    Provenance,
    QuestionOrigin,
    Source,
)
from . import pasted
from .chunking import chunk_text
from .claims import release_dead, worker_name
from .entities import find_entities
from .extract import extract_candidates, said_of_before
from .llm_batch import ASK, BatchTurn, Decision, build_prompt, parse_decisions, system_prompt
from .merge import MergeOutcome, Merger, Neighbour
from .noise import is_noise, people_named
from .provenance import EXPLICIT, ORIGIN_KEY, TOOL, USER, column_origin, model_origin, weigh
from .questions import MAX_QUESTIONS, Known, questions_for
from .roles import ONE_HOLDER, ROLE_ALIASES, find_roles
from .screen import screen

if TYPE_CHECKING:
    from ..config import Config
    from ..embeddings.tier import VectorTier
    from ..store import Store

log = logging.getLogger(__name__)

ACTOR = "curator"
BATCH_META_KEY = "curator.llm_batches"
# A row that fails stays pending and is tried again after 5 s, 10 s, 20 s ... at most an hour apart: never dropped.
RETRY_BASE_SECONDS = 5.0
RETRY_MAX_SECONDS = 3_600.0
ROWS_PER_BATCH = 16  # rows whose texts are embedded together
# how often a pass from the first row looks for claims of processes on this host that no longer run
DEAD_CLAIMS_EVERY_SECONDS = 5.0
# texts whose entities are kept: a batch's messages, read once for its people and once as episode chunks
ENTITY_CACHE = 64
_EXISTING_FOR_PROMPT = 20
_LLM_MAX_TOKENS = 2048


@dataclass
class CurationResult:
    """What curating one or more journal rows (or one model batch) did."""

    journal_ids: list[int] = field(default_factory=list)
    episode_ids: list[int] = field(default_factory=list)
    created: list[int] = field(default_factory=list)
    merged: list[int] = field(default_factory=list)
    superseded: list[tuple[int, int]] = field(default_factory=list)  # (old id, new id)
    related: int = 0
    noise: bool = False
    skipped: bool = False  # the row was already curated (or is not pending)
    # "" (no model step), "applied", or "fallback" (the model failed; heuristics stand)
    llm: str = ""

    def extend(self, other: CurationResult) -> None:
        self.journal_ids += other.journal_ids
        self.episode_ids += other.episode_ids
        self.created += other.created
        self.merged += other.merged
        self.superseded += other.superseded
        self.related += other.related
        self.llm = other.llm or self.llm

    def record(self, outcome: MergeOutcome) -> None:
        if outcome.action == "dropped":
            return
        if outcome.action == "merged":
            self.merged.append(outcome.memory_id)
            return
        self.created.append(outcome.memory_id)
        self.superseded += [(old, outcome.memory_id) for old in outcome.superseded]
        self.related += len(outcome.related)


@dataclass(frozen=True)
class _Chunk:
    role: str
    index: int
    text: str
    mentions: Mapping[str, str]  # entity name -> kind
    # entity name -> the aliases its role gives it ("husband", "spouse")
    roles: Mapping[str, tuple[str, ...]]


@dataclass
class _Prepared:
    """Everything computed before the write transaction (so the transaction holds no model work)."""

    chunks: list[_Chunk]
    candidates: list[tuple[Candidate, tuple[Provenance, ...]]]
    noise: bool = False
    candidate_mentions: list[Mapping[str, str]] = field(default_factory=list)
    embedder: Embedder | None = None
    chunk_vectors: list[np.ndarray | None] = field(default_factory=list)
    candidate_vectors: list[np.ndarray | None] = field(default_factory=list)
    flags: dict[str, str] = field(default_factory=dict)  # role -> why its text is quarantined
    # the questions each candidate answers (curation/questions.py), and their vectors by text
    candidate_questions: list[tuple[str, ...]] = field(default_factory=list)
    question_vectors: dict[str, np.ndarray | None] = field(default_factory=dict)

    def texts(self) -> list[str]:
        return [c.text for c in self.chunks] + [c.content for c, _ in self.candidates]

    def questions(self) -> list[str]:
        return list(dict.fromkeys(q for qs in self.candidate_questions for q in qs))


@dataclass
class _IndexUpdates:
    """Vectors to append to the in-memory indexes once the transaction has committed."""

    items: dict[ItemKind, list[tuple[int, np.ndarray]]] = field(
        default_factory=lambda: {kind: [] for kind in ItemKind}
    )
    removed: dict[ItemKind, list[int]] = field(default_factory=dict)


@dataclass
class _MergeContext:
    """What the candidates merged in one transaction share."""

    scope: str
    embedder: Embedder | None
    updates: _IndexUpdates  # vectors to add to the in-memory indexes after the commit
    actor: str = ACTOR
    # live memory ids of the scope a vector search may return (None: not read yet)
    allowed: set[int] | None = None
    # created so far: a batch dedups itself
    fresh: list[tuple[Memory, np.ndarray]] = field(default_factory=list)
    # normalised entity name -> id, resolved so far
    entities: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _MergeRequest:
    """One candidate to merge: the memory it would become, its vector and the entities it names."""

    candidate: Candidate
    new: NewMemory
    vector: np.ndarray | None
    mentions: Mapping[str, str] | None = None  # None: found in the candidate's own text
    # the questions it answers and their vectors (None: not embedded yet, left for VectorTier.catch_up)
    questions: Mapping[str, np.ndarray | None] = field(default_factory=dict)


class Curator:
    """Curates journal rows: episodes, noise filter, extraction, optional model batches, merge, entities, audit."""

    def __init__(
        self,
        store: Store,
        vectors: VectorTier | None,
        config: Config,
        clock: Clock = time.time,
        llm: LLM | None = None,
        *,
        llm_timeout: float = 60.0,
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.config = config
        self.clock = clock
        self.llm = llm
        self.llm_timeout = llm_timeout
        self.merger = Merger(store, vectors, config, actor=ACTOR)
        self._lock = threading.RLock()
        self._running: set[str] = set()  # batch keys whose model call is in flight
        # when claims of stopped processes were last looked for
        self._dead_checked = -DEAD_CLAIMS_EVERY_SECONDS

    # -- journal rows -----------------------------------------------------------------------------------------
    # Entry points: `process` curates one row and raises; `process_rows` is the batch entry point (a failing row is
    # recorded on the row and retried later, never raised); `run_pending` drains the journal on the calling thread.
    def process(self, entry: JournalEntry) -> CurationResult:
        """Curate one journal row; the row is marked done in the same transaction as what it produced."""
        prepared = self._prepare_rows([entry])[0]
        return self._commit_row(entry, prepared)

    def process_rows(
        self, entries: Sequence[JournalEntry], retry_base: float = RETRY_BASE_SECONDS
    ) -> list[CurationResult | None]:
        """Curate rows in order, embedding all their texts in one model call; each row commits on its own.

        A row that fails gets None and is kept pending, due again after a growing pause; others go on.
        """
        try:
            prepared = self._prepare_rows(entries)
        except Exception:
            # one bad row must not sink its neighbours: fall back to one row at a time
            log.warning(
                "preparing %d rows together failed; curating them one by one",
                len(entries),
                exc_info=True,
            )
            return [self._process_recorded(entry, retry_base) for entry in entries]
        out: list[CurationResult | None] = []
        for entry, prep in zip(entries, prepared, strict=True):
            try:
                out.append(self._commit_row(entry, prep))
            except Exception as exc:  # any bug or data problem is logged and recorded on the row
                out.append(self._record_failure(entry, exc, retry_base))
        return out

    def _process_recorded(self, entry: JournalEntry, retry_base: float) -> CurationResult | None:
        """`process`, but a failure is recorded on the row (retried later) instead of raised."""
        try:
            return self.process(entry)
        except Exception as exc:
            # any bug or data problem must not stop the queue; it is logged and recorded
            return self._record_failure(entry, exc, retry_base)

    def _record_failure(
        self, entry: JournalEntry, exc: Exception, retry_base: float
    ) -> CurationResult | None:
        log.error(
            "curating journal row %d failed (attempt %d); it stays pending and is retried later",
            entry.id,
            entry.attempts + 1,
            exc_info=exc,
        )
        self.store.journal.retry_later(
            entry.id,
            f"{type(exc).__name__}: {exc}"[:500],
            base_seconds=retry_base,
            max_seconds=RETRY_MAX_SECONDS,
        )
        return None

    def _commit_row(self, entry: JournalEntry, prepared: _Prepared) -> CurationResult:
        with self._lock:
            updates = _IndexUpdates()
            with self.store.transaction():
                current = self.store.journal.get(entry.id)
                if current is None or current.status is not JournalStatus.PENDING:
                    return CurationResult(journal_ids=[entry.id], skipped=True)
                result = self._write(entry, prepared, updates)
                self.store.journal.mark(entry.id, JournalStatus.DONE)
                batch_size = self._enqueue_batch(entry) if self.llm is not None else 0
            self._index(updates)
        if batch_size >= max(1, self.config.llm_batch_turns):
            result.extend(self.end_session(entry.scope, entry.session_id))
        return result

    def run_pending(self, limit: int | None = None, *, page: int = ROWS_PER_BATCH) -> int:
        """Curate pending rows on the calling thread, in order; returns how many were curated."""
        done, after = 0, 0
        while limit is None or done < limit:
            rows = self.claim(min(page, limit - done) if limit else page, after)
            if not rows:
                break
            done += sum(1 for r in self.process_rows(rows) if r is not None)
            after = rows[-1].id
        return done

    def claim(self, limit: int, after: int) -> list[JournalEntry]:
        """The next due rows this process may curate, claimed for it (other workers on the store leave them).

        A pass starting from the first row first gives back the claims of processes on this host that no longer
        run (every DEAD_CLAIMS_EVERY_SECONDS at most): a killed process's claims hold its rows, and every later row
        of their scopes, until their lease runs out."""
        if not after and not self.store.readonly:
            now = time.monotonic()
            if now - self._dead_checked >= DEAD_CLAIMS_EVERY_SECONDS:
                self._dead_checked = now
                release_dead(self.store)
        return self.store.journal.claim(
            worker_name(),
            limit=limit,
            lease_seconds=self.config.curation_lease_seconds,
            after_id=after,
        )

    def store_memory(self, new: NewMemory, *, actor: str, supersedes: int | None = None) -> Memory:
        """Store one explicit memory through dedup/merge/supersede; returns the stored or reinforced memory.

        `supersedes` names a memory the new one replaces (an update): it is superseded in the same transaction
        by whatever the merge keeps, unless that is the memory itself (an update to the same content)."""
        candidate = _explicit(new, supersedes=supersedes)
        new = _with_origin(new, candidate.origin)
        with self._lock:
            embedder = self._embedder()
            asked = _questions(
                candidate, _mentions(candidate.content), called_by_role(self.store, new.scope)
            )
            vectors = _embed(embedder, [new.content])
            ctx = _MergeContext(new.scope, embedder, _IndexUpdates(), actor)
            questions = _embed_questions(embedder, asked)
            with self.store.transaction():
                outcome = self._merge_one(
                    ctx, _MergeRequest(candidate, new, vectors[0], questions=questions)
                )
                if supersedes is not None and supersedes not in (
                    outcome.memory_id,
                    *outcome.superseded,
                ):
                    self.store.supersede(
                        supersedes, outcome.memory_id, reason="updated", actor=actor
                    )
            self._index(ctx.updates)
        return self.store.memories.require(outcome.memory_id)

    def store_memories(self, news: Sequence[NewMemory], *, actor: str) -> list[int]:
        """Store several explicit memories of one scope in one model call and one transaction (an import's
        batch); each goes through dedup/merge/supersede against the store and the batch. Returns memory ids."""
        if not news:
            return []
        with self._lock:
            embedder = self._embedder()
            candidates = [_explicit(new) for new in news]
            called = called_by_role(self.store, news[0].scope)
            asked = [_questions(c, _mentions(c.content), called) for c in candidates]
            vectors = _embed(embedder, [n.content for n in news])
            by_question = _embed_questions(embedder, [q for qs in asked for q in qs])
            ctx = _MergeContext(news[0].scope, embedder, _IndexUpdates(), actor)
            ids = []
            with self.store.transaction():
                ctx.allowed = (
                    self.store.memories.live_ids([ctx.scope]) if embedder is not None else None
                )
                for new, candidate, vector, qs in zip(
                    news, candidates, vectors, asked, strict=True
                ):
                    outcome = self._merge_one(
                        ctx,
                        _MergeRequest(
                            candidate,
                            _with_origin(new, candidate.origin),
                            vector,
                            questions={q: by_question[q] for q in qs},
                        ),
                    )
                    ids.append(outcome.memory_id)
            self._index(ctx.updates)
        return ids

    # -- preparation (no writes) -------------------------------------------------------------------------------
    def _embedder(self) -> Embedder | None:
        if self.vectors is None:
            return None
        return self.vectors.embeddings.current()

    def _prepare_rows(self, entries: Sequence[JournalEntry]) -> list[_Prepared]:
        """Chunks, noise and candidates per row, then every text of every row embedded in one model call."""
        people: dict[str, set[str]] = {}  # per scope, grown row by row
        called: dict[str, dict[str, str]] = {}  # per scope: name -> the role the user calls them by
        prepared = [self._prepare(entry, people, called) for entry in entries]
        embedder = self._embedder()
        texts = [t for p in prepared for t in p.texts()]
        vectors = iter(_embed(embedder, texts))
        for prep in prepared:
            prep.embedder = embedder
            prep.chunk_vectors = [next(vectors) for _ in prep.chunks]
            prep.candidate_vectors = [next(vectors) for _ in prep.candidates]
        by_question = _embed_questions(embedder, [q for p in prepared for q in p.questions()])
        for prep in prepared:
            prep.question_vectors = {q: by_question[q] for q in prep.questions()}
        return prepared

    def _people(
        self, entry: JournalEntry, known: dict[str, set[str]], called: dict[str, dict[str, str]]
    ) -> set[str]:
        """Whom the user called by a role in the row's scope: in the store, in earlier rows of the batch (not yet
        written) and in this row ("My sister Meera ... Meera moved to Vancouver."); `called` learns their roles."""
        people = known.get(entry.scope)
        if people is None:
            people = known[entry.scope] = set(self.store.graph.people(entry.scope))
        roles = called.get(entry.scope)
        if roles is None:
            roles = called[entry.scope] = called_by_role(self.store, entry.scope)
        own = pasted.own_words(entry.user_content)
        found = find_roles(own, _mentions(own))
        people.update(found)
        roles.update({name: aliases[0] for name, aliases in found.items() if aliases})
        return people

    def _prepare(
        self, entry: JournalEntry, known: dict[str, set[str]], called: dict[str, dict[str, str]]
    ) -> _Prepared:
        people = self._people(entry, known, called)
        bodies = (("user", entry.user_content), ("assistant", entry.assistant_content))
        # what the user tells of someone they named in the turn before ("he collects vinyl") is told of them by name
        told = said_of_before(
            entry.user_content,
            lambda: self.store.journal.user_said(
                entry.scope, entry.session_id, entry.turn_index - 1
            ),
        )
        noisy = {
            role
            for role, body in (("user", told), bodies[1])
            if not body.strip() or is_noise(body, role, people)
        }
        chunks = [
            _chunk(role, i, text, people)
            for role, body in bodies
            for i, text in enumerate(_episode_texts(body, role in noisy))
        ]
        provenance: tuple[Provenance, ...] = (Provenance(entry.session_id, entry.turn_index),)
        found = extract_candidates(
            told, entry.assistant_content, now=entry.created_at, people=people
        )
        candidates = [
            (weigh(c, column_origin(c.role, entry.platform)), provenance)
            for c in found
            # a turn that only says something is done ("Flights are booked!") may still close an open item, and
            # one that says something moved or changed ("The standup moved to 10am") replace a memory's value; a
            # short one that fills a profile slot ("Use pnpm, not npm.") is no filler
            if c.role not in noisy or c.closing_only or (c.role == "user" and c.subject)
        ]
        mentions: list[Mapping[str, str]] = [
            _mentions(c.content, (*c.entities, *people_named(c.content, people)))
            for c, _ in candidates
        ]
        return _Prepared(
            chunks,
            candidates,
            noise=noisy >= {"user", "assistant"},
            candidate_mentions=mentions,
            flags={
                role: ", ".join(why)
                for role, body in bodies
                if (why := screen(body, said_by_user=column_origin(role, entry.platform) == USER))
            },
            candidate_questions=[
                _questions(c, found, called[entry.scope])
                for (c, _), found in zip(candidates, mentions, strict=True)
            ],
        )

    # -- writing (inside the caller's transaction) ---------------------------------------------------------------
    def _write(
        self, entry: JournalEntry, prepared: _Prepared, updates: _IndexUpdates
    ) -> CurationResult:
        result = CurationResult(journal_ids=[entry.id], noise=prepared.noise)
        ctx = _MergeContext(entry.scope, prepared.embedder, updates)
        for chunk, vector in zip(prepared.chunks, prepared.chunk_vectors, strict=True):
            episode_id = self.store.episodes.insert(
                NewEpisode(
                    scope=entry.scope,
                    session_id=entry.session_id,
                    turn_index=entry.turn_index,
                    chunk_index=chunk.index,
                    role=chunk.role,
                    content=chunk.text,
                    created_at=entry.created_at,
                    journal_id=entry.id,
                )
            )
            result.episode_ids.append(episode_id)
            entity_ids = self._entity_ids(entry.scope, chunk.mentions, ctx.entities)
            self.store.graph.link_episode_entities(episode_id, entity_ids)
            self._add_roles(chunk.roles, ctx.entities)
            self._stage_vector(ItemKind.EPISODE, episode_id, vector, prepared.embedder, updates)
            if chunk.role in prepared.flags:
                self.store.quarantine_item(ItemKind.EPISODE, episode_id, prepared.flags[chunk.role])
        self._merge_all(
            ctx,
            _requests(
                entry.scope,
                entry,
                prepared.candidates,
                prepared.candidate_vectors,
                prepared.candidate_mentions,
                [
                    {q: prepared.question_vectors.get(q) for q in asked}
                    for asked in prepared.candidate_questions
                ],
            ),
            result,
        )
        for memory in self.store.memories.get_many(
            result.created
        ).values():  # taken from a quarantined text
            role = str(memory.metadata.get("role", ""))
            if role in prepared.flags:
                self.store.quarantine_item(ItemKind.MEMORY, memory.id, prepared.flags[role])
        return result

    def _merge_all(
        self, ctx: _MergeContext, requests: Sequence[_MergeRequest], result: CurationResult
    ) -> None:
        if ctx.embedder is not None and requests:
            ctx.allowed = self.store.memories.live_ids([ctx.scope])
        for request in requests:
            result.record(self._merge_one(ctx, request))

    def _merge_one(self, ctx: _MergeContext, request: _MergeRequest) -> MergeOutcome:
        candidate, new, vector = request.candidate, request.new, request.vector
        if ctx.allowed is None and vector is not None:
            ctx.allowed = self.store.memories.live_ids([ctx.scope])
        neighbours: list[Neighbour] = self.merger.neighbours(
            ctx.scope, vector, ctx.allowed, ctx.fresh
        )
        plan = self.merger.plan(ctx.scope, candidate, neighbours)
        outcome = self.merger.apply(plan, new, candidate, actor=ctx.actor)
        if outcome.action == "dropped":
            return outcome
        # an explicit write is screened by the engine, which knows who wrote it
        mine = candidate.origin in (USER, EXPLICIT)
        if outcome.action == "created" and (reasons := screen(new.content, said_by_user=mine)):
            self.store.quarantine_item(ItemKind.MEMORY, outcome.memory_id, ", ".join(reasons))
        found = (
            request.mentions
            if request.mentions is not None
            else _mentions(candidate.content, candidate.entities)
        )
        self.store.graph.link_memory_entities(
            outcome.memory_id, self._entity_ids(ctx.scope, found, ctx.entities)
        )
        if candidate.origin == EXPLICIT:  # a captured turn's roles come with its episode
            self._add_roles(find_roles(candidate.content, found), ctx.entities)
        if outcome.action == "created":
            if vector is not None:
                memory = self.store.memories.require(outcome.memory_id)
                ctx.fresh.append((memory, vector))
                if ctx.allowed is not None:
                    ctx.allowed.add(memory.id)
            self._stage_vector(
                ItemKind.MEMORY, outcome.memory_id, vector, ctx.embedder, ctx.updates
            )
        _add_questions(self.store, ctx, outcome.memory_id, request)
        return outcome

    def _entity_ids(
        self, scope: str, mentions: Mapping[str, str], cache: dict[str, int]
    ) -> list[int]:
        ids = []
        for name, kind in mentions.items():
            norm = normalise_entity(name)
            if not norm:
                continue
            if norm not in cache:
                cache[norm] = self.store.graph.upsert_entity(scope, name, norm, kind)
            ids.append(cache[norm])
        return ids

    def _add_roles(self, roles: Mapping[str, tuple[str, ...]], entities: dict[str, int]) -> None:
        """The role words the user calls people by, as aliases of their entities (`entities`: norm -> id); a name
        a note gave by its form alone ("Lachlan (husband)") is an entity only where the user's people are known. A
        role one person holds at a time (`roles.ONE_HOLDER`) leaves whoever held it before."""
        for name, aliases in roles.items():
            entity_id = entities.get(normalise_entity(name))
            if entity_id is not None:
                # a role one person holds at a time moves to whoever the user names in it now
                self.store.graph.take_aliases(
                    entity_id, [normalise_entity(a) for a in aliases if a in ONE_HOLDER]
                )
                self.store.graph.add_aliases(entity_id, ((a, normalise_entity(a)) for a in aliases))

    def _stage_vector(
        self,
        kind: ItemKind,
        item_id: int,
        vector: np.ndarray | None,
        embedder: Embedder | None,
        updates: _IndexUpdates,
    ) -> None:
        if vector is None or embedder is None:
            return  # left for VectorTier.catch_up
        self.store.vectors.put(kind, embedder.model_name, [(item_id, vector)])
        updates.items[kind].append((item_id, vector))

    def _index(self, updates: _IndexUpdates) -> None:
        """Append committed vectors to the in-memory indexes (they are already stored; a reload finds them)."""
        if self.vectors is None:
            return
        for kind, ids in updates.removed.items():
            index = self.vectors.index(kind) if ids else None
            if index is not None:
                index.remove(np.asarray(ids, dtype=np.int64))
        for kind, items in updates.items.items():
            try:
                index = self.vectors.index(kind) if items else None
                if index is not None:
                    index.add(
                        np.asarray([i for i, _ in items], dtype=np.int64),
                        np.stack([v for _, v in items]),
                    )
            except Exception:
                # the rows are committed; a stale in-memory index must not re-curate them
                log.exception(
                    "could not add %d %s vectors to the in-memory index", len(items), kind
                )

    # -- model batches ------------------------------------------------------------------------------------------
    def _batches(self) -> dict[str, list[int]]:
        raw = self.store.meta.get(BATCH_META_KEY)
        try:
            data = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            log.warning("discarding an unreadable model batch record")
            return {}
        return (
            {str(k): [int(i) for i in v] for k, v in data.items()} if isinstance(data, dict) else {}
        )

    def _save_batches(self, batches: dict[str, list[int]]) -> None:
        self.store.meta.set(BATCH_META_KEY, json.dumps({k: v for k, v in batches.items() if v}))

    def _enqueue_batch(self, entry: JournalEntry) -> int:
        batches = self._batches()
        key = _batch_key(entry.scope, entry.session_id)
        batches.setdefault(key, []).append(entry.id)
        self._save_batches(batches)
        return len(batches[key])

    def pending_batches(self) -> list[tuple[str, str]]:
        """(scope, session id) of every model batch waiting for more turns or its session's end."""
        return [_split_batch_key(k) for k in self._batches()]

    def end_session(self, scope: str, session_id: str) -> CurationResult:
        """Run the session's pending model batch now; on any model failure the heuristic memories stand.

        The model call runs without the curator's lock, so explicit writes are never held up by it.
        """
        key = _batch_key(scope, session_id)
        with self._lock:
            ids = self._batches().get(key, [])
            if self.llm is None or not ids or key in self._running:
                return CurationResult()
            self._running.add(key)
        try:
            entries = [e for e in (self.store.journal.get(i) for i in ids) if e is not None]
            return self._apply_batch(key, scope, entries, self.llm, ids)
        except LLMError as exc:
            log.warning(
                "model extraction for a batch of %d turns failed (%s); heuristic memories stand",
                len(ids),
                exc,
            )
        except Exception:
            # a bug in the batch path must not lose the heuristic results or block the queue
            log.exception("model batch failed; heuristic memories stand")
        finally:
            with self._lock:
                self._running.discard(key)
        with self._lock, self.store.transaction():
            self._drop_from_batch(key, ids)
        return CurationResult(llm="fallback")

    def _drop_from_batch(self, key: str, ids: Sequence[int]) -> None:
        """Forget these rows from the batch (rows added while the model was busy stay for the next one)."""
        batches = self._batches()
        done = set(ids)
        batches[key] = [i for i in batches.get(key, []) if i not in done]
        self._save_batches(batches)

    def _apply_batch(
        self, key: str, scope: str, entries: Sequence[JournalEntry], llm: LLM, ids: Sequence[int]
    ) -> CurationResult:
        turns = [
            BatchTurn(n, e.user_content, e.assistant_content)
            for n, e in enumerate(entries, start=1)
        ]
        existing = self._existing_for(scope, entries)
        reply = llm.complete(
            build_prompt(turns, existing),
            system=system_prompt(),
            max_tokens=_LLM_MAX_TOKENS,
            json_mode=True,
            timeout=self.llm_timeout,
        )
        decisions = [
            d
            for d in parse_decisions(reply, known_ids={m.id for m in existing}, turns=len(turns))
            if d.action != "ignore"
        ]
        with self._lock:
            return self._apply_decisions(key, scope, entries, decisions, ids)

    def _apply_decisions(
        self,
        key: str,
        scope: str,
        entries: Sequence[JournalEntry],
        decisions: Sequence[Decision],
        ids: Sequence[int],
    ) -> CurationResult:
        every = tuple(Provenance(e.session_id, e.turn_index) for e in entries)
        asks = [d.candidate for d in decisions if d.action == ASK]
        candidates = [
            (
                _weigh_decision(d, entries),
                (Provenance(entries[d.turn - 1].session_id, entries[d.turn - 1].turn_index),)
                if d.turn
                else every,
            )
            for d in decisions
            if d.action != ASK
        ]
        embedder = self._embedder()
        called = called_by_role(self.store, scope)
        asked = [_questions(c, _mentions(c.content, c.entities), called) for c, _ in candidates]
        vectors = _embed(embedder, [c.content for c, _ in candidates])
        by_question = _embed_questions(
            embedder, [q for qs in (*asked, *(c.questions for c in asks)) for q in qs]
        )
        result = CurationResult(llm="applied")
        ctx = _MergeContext(scope, embedder, _IndexUpdates())
        with self.store.transaction():
            for candidate in asks:  # questions for a memory the batch repeats
                target = self.store.memories.get(candidate.supersedes or 0)
                if target is not None and target.scope == scope and not target.forgotten:
                    request = _MergeRequest(
                        candidate,
                        _new_memory(scope, candidate, None, ()),
                        None,
                        questions={q: by_question[q] for q in candidate.questions},
                    )
                    _add_questions(self.store, ctx, target.id, request)
            self._merge_all(
                ctx,
                _requests(
                    scope,
                    entries[-1] if entries else None,
                    candidates,
                    vectors,
                    questions=[{q: by_question[q] for q in qs} for qs in asked],
                ),
                result,
            )
            self._drop_from_batch(key, ids)
        self._index(ctx.updates)
        log.info(
            "model batch of %d turns: %d created, %d merged, %d superseded",
            len(entries),
            len(result.created),
            len(result.merged),
            len(result.superseded),
        )
        return result

    def _existing_for(self, scope: str, entries: Sequence[JournalEntry]) -> list[Memory]:
        """The current memories nearest to the batch's turns (vectors when ready, else keywords)."""
        text = "\n".join(f"{e.user_content}\n{e.assistant_content}" for e in entries)
        hits: dict[int, float] = {}
        embedder = self._embedder()
        if embedder is not None and self.vectors is not None:
            allowed = self.store.memories.live_ids([scope])
            queries = _embed(embedder, [e.user_content or e.assistant_content for e in entries])
            for vector in queries:
                if vector is not None and allowed:
                    for memory_id, score in self.vectors.search(
                        ItemKind.MEMORY, vector, 8, allowed, [scope]
                    ):
                        hits[memory_id] = max(score, hits.get(memory_id, 0.0))
        match = fts_match_expression(text)
        if match:
            for rank, (memory_id, _score) in enumerate(
                self.store.search.memories(match, [scope], 10, current_only=True)
            ):
                hits.setdefault(memory_id, 0.5 - rank * 0.01)
        memories = self.store.memories.get_many(hits)
        now = self.clock()
        ranked = sorted(
            (m for m in memories.values() if m.is_current(now)), key=lambda m: -hits[m.id]
        )
        return ranked[:_EXISTING_FOR_PROMPT]


def _embed(embedder: Embedder | None, texts: Sequence[str]) -> list[np.ndarray | None]:
    """Vectors for all texts (each distinct text embedded once); Nones when there is no model."""
    if embedder is None or not texts:
        return [None] * len(texts)
    unique = list(dict.fromkeys(texts))
    try:
        matrix = np.asarray(embedder.embed_batch(unique), dtype=np.float32)
    except Exception:
        # a failing model must not lose the turn: curate without vectors, catch up later
        log.warning("embedding failed; curating without vectors", exc_info=True)
        return [None] * len(texts)
    by_text = dict(zip(unique, matrix, strict=True))
    return [by_text[t] for t in texts]


def _embed_questions(
    embedder: Embedder | None, questions: Sequence[str]
) -> dict[str, np.ndarray | None]:
    """Vectors of questions by text, in a model call of their own: the int8 model quantises each call's
    activations together, so texts embedded beside them would come out a little different."""
    unique = list(dict.fromkeys(questions))
    return dict(zip(unique, _embed(embedder, unique), strict=True))


def _add_questions(
    store: Store, ctx: _MergeContext, memory_id: int, request: _MergeRequest
) -> None:
    """Store the questions the memory answers with their vectors. A model's questions replace those the rules
    wrote; a merged duplicate adds what the memory lacks, up to MAX_QUESTIONS."""
    if not request.questions:
        return
    origin = QuestionOrigin.MODEL if request.candidate.questions else QuestionOrigin.RULES
    if origin is QuestionOrigin.MODEL:
        dropped = store.questions.drop_rules(memory_id)
        store.vectors.delete(ItemKind.QUESTION, dropped)
        ctx.updates.removed.setdefault(ItemKind.QUESTION, []).extend(dropped)
    held = len(store.questions.ids_of([memory_id]))
    texts = list(request.questions)[: max(0, MAX_QUESTIONS - held)]
    for question_id, text in store.questions.add(memory_id, texts, origin):
        vector = request.questions.get(text)
        if vector is not None and ctx.embedder is not None:  # else left for VectorTier.catch_up
            store.vectors.put(ItemKind.QUESTION, ctx.embedder.model_name, [(question_id, vector)])
            ctx.updates.items[ItemKind.QUESTION].append((question_id, vector))


def ask_missing(
    store: Store, batch: int = 200, progress: Callable[[int], None] | None = None
) -> int:
    """Give every live memory without a question the rules' questions (a store from before they existed, or one
    curated with no model and no rules that fit then); their vectors are left for `VectorTier.catch_up`. Each batch
    commits on its own, so an interrupted run resumes where it stopped. Returns how many memories got questions."""
    done, after = 0, 0
    roles = functools.cache(lambda scope: called_by_role(store, scope))
    while ids := store.questions.without_questions(batch, after):
        memories = store.memories.get_many(ids)
        linked = store.graph.entities_of_memories(ids)
        entities = store.graph.get_entities(sorted({e for es in linked.values() for e in es}))
        with store.transaction():
            for memory in memories.values():
                names = {
                    entities[e].name: entities[e].kind
                    for e in linked.get(memory.id, [])
                    if e in entities
                }
                known = Known(
                    memory.type,
                    memory.content,
                    memory.subject,
                    tuple(names),
                    find_roles(memory.content, names),
                    {n: r for n, r in roles(memory.scope).items() if n in names},
                )
                done += bool(
                    store.questions.add(memory.id, questions_for(known), QuestionOrigin.RULES)
                )
        after = ids[-1]
        if progress is not None:
            progress(done)
    return done


def called_by_role(store: Store, scope: str) -> dict[str, str]:
    """Each person of the scope the user calls by a role, by name as written: the role ("Tomasz" -> "husband", the
    first of his aliases that is a role of its own in curation/roles.py's table)."""
    order = {role: n for n, role in enumerate(ROLE_ALIASES)}
    called: dict[str, str] = {}
    for alias, name in sorted(
        store.graph.names_and_roles([scope])[1].items(), key=lambda kv: order.get(kv[0], len(order))
    ):
        called.setdefault(name, alias)
    return called


def _questions(
    candidate: Candidate, mentions: Mapping[str, str], called: Mapping[str, str]
) -> tuple[str, ...]:
    """The questions a candidate answers: the model's, else those curation/questions.py writes from what is known
    of it (its type, subject slot, the tools it names, the roles its text gives people and those the user gave the
    people it names before)."""
    if candidate.questions:
        return candidate.questions[:MAX_QUESTIONS]
    known = Known(
        candidate.type,
        candidate.content,
        candidate.subject,
        tuple(mentions),
        find_roles(candidate.content, mentions),
        {name: role for name, role in called.items() if name in mentions},
    )
    return questions_for(known)


def _chunk(role: str, index: int, text: str, people: Collection[str] = ()) -> _Chunk:
    """An episode chunk with the entities it names; in the user's own words, also who they are to the user."""
    mentions = _mentions(text, people_named(text, people))
    roles = find_roles(text, mentions) if role == "user" else {}
    return _Chunk(role, index, text, mentions, roles)


@functools.lru_cache(maxsize=ENTITY_CACHE)
def _entities_of(text: str) -> tuple[tuple[str, str], ...]:
    """`find_entities`, once per text: a short turn's whole message is also its one episode chunk."""
    return tuple(find_entities(text))


def _mentions(text: str, names: Iterable[str] = ()) -> dict[str, str]:
    """Entities named in a text (plus names given by extraction or the model), as name -> kind."""
    found = dict(_entities_of(text))
    for name in names:
        found.setdefault(name, "thing")
    return found


def _episode_texts(body: str, noisy: bool) -> list[str]:
    """Chunks of a message; a whole message too short to chunk is still kept unless it is noise ("I'm 41.")."""
    chunks = chunk_text(body)
    if not chunks and body.strip() and not noisy:
        return [body.strip()]
    return chunks


def _batch_key(scope: str, session_id: str) -> str:
    return f"{scope}\t{session_id}"


def _split_batch_key(key: str) -> tuple[str, str]:
    scope, _, session = key.partition("\t")
    return scope, session


def _requests(
    scope: str,
    entry: JournalEntry | None,
    candidates: Sequence[tuple[Candidate, tuple[Provenance, ...]]],
    vectors: Sequence[np.ndarray | None],
    mentions: Sequence[Mapping[str, str]] = (),
    questions: Sequence[Mapping[str, np.ndarray | None]] = (),
) -> list[_MergeRequest]:
    """Merge requests for extracted candidates (with their provenance), their vectors and, when known, mentions
    and the questions each answers with their vectors."""
    return [
        _MergeRequest(
            candidate,
            _new_memory(scope, candidate, entry, provenance),
            vector,
            mentions[i] if mentions else None,
            questions[i] if questions else {},
        )
        for i, ((candidate, provenance), vector) in enumerate(zip(candidates, vectors, strict=True))
    ]


def _new_memory(
    scope: str, candidate: Candidate, entry: JournalEntry | None, provenance: tuple[Provenance, ...]
) -> NewMemory:
    return NewMemory(
        scope=scope,
        type=candidate.type,
        content=candidate.content,
        source=entry.source if entry is not None else Source.TURN,
        importance=candidate.importance,
        confidence=candidate.confidence,
        subject=candidate.subject,
        session_id=entry.session_id if entry is not None else None,
        valid_from=entry.created_at if entry is not None else None,
        created_at=entry.created_at if entry is not None else None,
        metadata={
            "role": candidate.role,
            ORIGIN_KEY: candidate.origin or column_origin(candidate.role),
        },
        provenance=provenance,
    )


def _explicit(new: NewMemory, *, supersedes: int | None = None) -> Candidate:
    """An explicit write (remember, update, import, the host's memory mirror) as a candidate of its own origin;
    `supersedes` names the memory an update replaces."""
    origin = str(new.metadata.get(ORIGIN_KEY) or EXPLICIT)
    return Candidate(
        type=new.type,
        content=new.content,
        importance=new.effective_importance,
        confidence=new.confidence,
        subject=new.subject,
        role="tool",
        origin=origin,
        supersedes=supersedes,
    )


def _with_origin(new: NewMemory, origin: str) -> NewMemory:
    return replace(new, metadata={**new.metadata, ORIGIN_KEY: origin})


def _weigh_decision(decision: Decision, entries: Sequence[JournalEntry]) -> Candidate:
    """A model's memory weighed by whose words it holds: those of the turn it names, else of the whole batch."""
    named = [entries[decision.turn - 1]] if decision.turn else []
    origin = (
        _origin_in(decision.candidate.content, named)
        or _origin_in(decision.candidate.content, entries)
        or USER
    )
    if (
        origin != USER
        and entries
        and all(column_origin("assistant", e.platform) == TOOL for e in entries)
    ):
        origin = TOOL  # a subagent's task and result: nothing of it is the user's own words
    return weigh(decision.candidate, origin)


def _origin_in(content: str, entries: Sequence[JournalEntry]) -> str:
    user = "\n".join(e.user_content for e in entries if column_origin("user", e.platform) == USER)
    other = "\n".join(
        [
            *(e.assistant_content for e in entries),
            *(e.user_content for e in entries if column_origin("user", e.platform) != USER),
        ]
    )
    return model_origin(content, user, other) if entries else ""


class CuratorWorker:
    """The named background thread that curates the journal in order; capture never waits for it."""

    def __init__(
        self,
        curator: Curator,
        store: Store,
        *,
        retry_base: float = RETRY_BASE_SECONDS,
        poll_seconds: float = 2.0,
        retry_delay: float = 0.5,
        name: str = "bowerbird-curator",
    ) -> None:
        self.curator = curator
        self.store = store
        self.retry_base = retry_base
        self.poll_seconds = poll_seconds
        self.retry_delay = retry_delay
        self.name = name
        self._cond = threading.Condition()
        self._wake = False
        self._stop = False
        # bumped by notify(); a pass that starts after a bump and ends idle covers it
        self._requested = 0
        self._covered = -1
        self._session_ends: list[tuple[str, str]] = []
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread; it first resumes rows left pending by a crash and model batches left waiting."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop = False
        with self._cond:
            self._session_ends.extend(
                self.curator.pending_batches() if self.curator.llm is not None else []
            )
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        self.notify()

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def notify(self) -> None:
        """A row was captured: wake the worker (cheap; safe from any thread)."""
        with self._cond:
            self._requested += 1
            self._wake = True
            self._cond.notify_all()

    def end_session(self, scope: str, session_id: str) -> None:
        """Ask the worker to run the session's model batch once the rows before it are curated."""
        with self._cond:
            self._session_ends.append((scope, session_id))
        self.notify()

    def drain(self, timeout: float) -> bool:
        """Wait until everything captured so far is curated (True) or `timeout` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        self.notify()
        with self._cond:
            target = self._requested
            while self._covered < target:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.is_alive():
                    return False
                self._cond.wait(min(remaining, 0.5))
        return True

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop after the current row; True when the thread has ended within `timeout`."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        log.debug("curator worker started")
        while True:
            with self._cond:
                if self._stop:
                    break
                self._wake = False
                generation = self._requested
            try:
                failures = self._pass()
            except Exception:
                # the database went away or similar: keep the thread, retry after a pause
                log.exception("curator pass failed")
                failures = 1
            with self._cond:
                if failures == 0:
                    self._covered = max(self._covered, generation)
                    self._cond.notify_all()
                if self._stop:
                    break
                if not self._wake:
                    self._cond.wait(self.retry_delay if failures else self.poll_seconds)
        log.debug("curator worker stopped")

    def _pass(self) -> int:
        """Curate every pending row once, in id order, then due session batches; returns rows that failed."""
        failures, after = 0, 0
        while not self._stop:
            rows = self.curator.claim(ROWS_PER_BATCH, after)
            if not rows:
                break
            failures += sum(
                1 for r in self.curator.process_rows(rows, self.retry_base) if r is None
            )
            after = rows[-1].id
        with self._cond:
            ends, self._session_ends = self._session_ends, []
        for scope, session_id in dict.fromkeys(ends):
            self.curator.end_session(scope, session_id)
        return failures
