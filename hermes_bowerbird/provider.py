"""BowerbirdProvider: the Hermes MemoryProvider; it maps host hooks onto the engine and does nothing else."""

from __future__ import annotations

import concurrent.futures
import functools
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from . import markdown, scopes
from .addresses import shown
from .config import EMBEDDING_BACKENDS, LLM_BACKENDS, Config, load_config
from .curation.injected import message_text
from .curation.noise import is_trivial_prompt
from .curation.screen import inert
from .curation.summary import durable_points
from .engine import Bowerbird, clean_text
from .errors import BowerbirdError
from .explain import describe, read_only_store
from .inspection import capture_digest
from .options import RememberOptions, TurnCapture
from .retrieval import Hit
from .sanitize import storable, storable_or_empty
from .session_recall import DATA_NOTE, PREFETCH_HEADER, Block, SessionRecall
from .tools import ToolContext, handle_tool_call, tool_schemas
from .types import MemoryType, Source

if TYPE_CHECKING:
    from agent.memory_provider import MemoryProvider as _Base
else:
    try:  # the host's base class when running inside Hermes; a plain object otherwise (tests, CLI, MCP)
        from agent.memory_provider import MemoryProvider as _Base
    except ImportError:
        _Base = object

__all__ = ["PREFETCH_HEADER", "BowerbirdProvider"]

log = logging.getLogger(__name__)

T = TypeVar("T")
PRE_COMPRESS_LIMIT = 1500
# a whole-conversation checkpoint; the host caps provider context at 6,000 chars
CHECKPOINT_LIMIT = 4000
# journal rows of a subagent's task and result say so, with the child session
DELEGATION_PLATFORM = "delegation"
_WRITE_CONTEXTS = frozenset({"primary", ""})
_LINEAGE_MAX = 20
_REPORTED: set[str] = set()
_REPORTED_LOCK = threading.Lock()


def _guarded(default: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Hooks never raise into the host: log with the traceback and return a harmless default."""

    def wrap(method: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(method)
        def run(self: BowerbirdProvider, *args: Any, **kwargs: Any) -> T:
            if self._unavailable is not None and method.__name__ != "initialize":
                return default  # said once when the store could not open; silence after that
            try:
                return method(self, *args, **kwargs)
            except (BowerbirdError, sqlite3.Error, OSError) as exc:
                log.warning(
                    "bowerbird %s failed (%s); the turn goes on without it",
                    method.__name__,
                    describe(exc),
                )
                log.debug("bowerbird %s failure details", method.__name__, exc_info=True)
                return default
            except Exception:
                log.exception("bowerbird %s failed; the turn goes on without it", method.__name__)
                return default

        return run

    return wrap


class BowerbirdProvider(_Base):
    """One instance per Hermes agent; instances in a process share one engine per database file."""

    # newer hosts then call on_pre_compress(messages, require_checkpoint=True) and keep the whole answer
    pre_compress_checkpoint_api_version = 2

    def __init__(self, config: Config | None = None) -> None:
        self._config = config
        self.engine: Bowerbird | None = None
        self.session_id = ""
        self.platform = ""
        self.agent_context = "primary"
        self.user_id: str | None = None
        self.write_scope = scopes.profile_scope()
        self.visible: tuple[str, ...] = (self.write_scope,)
        self._turn = 0
        self.recall = SessionRecall()  # what this session was given and holds in its context
        self._lock = threading.Lock()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._unavailable: str | None = None
        self._queue_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.turn_number = 0  # the host's count of user turns (on_turn_start)
        self.lineage: list[
            str
        ] = []  # this conversation's session ids, oldest first (compression makes new ones)

    # -- identity -------------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "bowerbird"

    def is_available(self) -> bool:
        """Local-first: needs no key or network, only our own package (always importable here)."""
        return True

    def unavailable_reason(self) -> str | None:
        """Why memory cannot run in this agent (one sentence), or None when it can."""
        return self._unavailable

    @property
    def writes_allowed(self) -> bool:
        """This agent may write memory (the primary agent; not a subagent, cron or flush agent)."""
        return self.agent_context in _WRITE_CONTEXTS

    @property
    def writable(self) -> bool:
        """This agent may write and the store can be written (it opens read-only when it cannot)."""
        engine = self.engine
        return self.writes_allowed and not (engine is not None and engine.inspect.read_only)

    # -- lifecycle ------------------------------------------------------------------------------------------
    @_guarded(None)
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        hermes_home = (
            Path(str(kwargs.get("hermes_home") or "")).expanduser()
            if kwargs.get("hermes_home")
            else None
        )
        config = self._config or load_config(hermes_home)
        self.session_id = storable_or_empty(session_id)
        self.platform = storable(str(kwargs.get("platform") or ""))
        self.agent_context = str(kwargs.get("agent_context") or "primary")
        user_id = kwargs.get("user_id")
        self.user_id = str(user_id) if user_id not in (None, "") else None
        identity = kwargs.get("agent_identity")
        identity = str(identity) if identity else None
        self.write_scope = scopes.write_scope(self.user_id, identity, self.platform)
        self.visible = scopes.visible_scopes(self.user_id, identity, self.platform)
        self._unavailable = None
        try:
            self.engine = Bowerbird.open_shared(
                config, primary=self.writable, profile_scope=scopes.profile_scope(identity)
            )
        except (BowerbirdError, sqlite3.Error, OSError) as exc:
            self._unavailable = f"bowerbird memory is off for this session: {describe(exc)}"
            _report_once(f"{self._unavailable} (database {shown(config.store_target)})")
            log.debug("opening the memory store failed", exc_info=True)
            return
        reason = self.engine.inspect.read_only_reason
        if reason is not None:
            log.warning(
                "%s: recall works, this session's turns are not stored",
                read_only_store(shown(config.store_target), reason),
            )
        if self.writable:
            self.engine.start(primary=True)
        self._turn = self.engine.inspect.next_turn_index(self.session_id) if self.session_id else 0
        # a resumed session's history is loaded into the context
        self.recall.hold({self.session_id: 0})
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="bowerbird-prefetch"
        )
        self._queue_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="bowerbird-queued-prefetch"
        )
        parent = str(kwargs.get("parent_session_id") or "")
        self.lineage = [s for s in (parent, self.session_id) if s]
        # on the engine's import thread: initialize never waits
        if self.writable and config.import_markdown:
            engine, scope = self.engine, scopes.profile_scope(identity)
            engine.import_in_background(
                lambda stop: markdown.import_host_memories(
                    engine, config.hermes_home, scope=scope, stop=stop
                )
            )
        log.info(
            "bowerbird ready for session %s (%s, %s)",
            self.session_id,
            self.platform,
            self.agent_context,
        )

    @_guarded(None)
    def shutdown(self) -> None:
        engine, self.engine = self.engine, None
        for pool in (self._pool, self._queue_pool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._queue_pool = None
        self.recall.drop_queued()
        if engine is not None:
            engine.release()

    # -- system prompt --------------------------------------------------------------------------------------
    @_guarded("")
    def system_prompt_block(self) -> str:
        engine = self._require()
        count = sum(engine.inspect.counts(self.visible).values())
        lines = [
            "## Long-term memory (bowerbird)",
            f"Bowerbird keeps {count} memories about this user and their work across sessions. Relevant ones "
            "arrive in <memory-context> with the user's message; trust them unless the user corrects them.",
            DATA_NOTE,
            "Tools: bowerbird_recall to search past sessions; bowerbird_remember for a durable fact, preference, "
            "decision or todo; bowerbird_update to correct one by id; bowerbird_forget to drop one; "
            "bowerbird_relate to link two.",
        ]
        reason = engine.inspect.read_only_reason
        if reason is not None:
            lines.append(
                f"Memory is read-only in this session ({read_only_store(engine.inspect.location, reason)}): "
                "recall works; remember, update, forget and relate store nothing."
            )
        # never waits for a model on the session-start path; the maintenance job writes the briefing later
        bulletin = engine.bulletin(self.write_scope, visible=self.visible, synthesise=False)
        self.recall.bulletin_seen = bulletin
        if bulletin is not None and bulletin.text.strip():
            lines += [
                "",
                "### Bulletin: who the user is and what is going on",
                inert(bulletin.text.strip()),
            ]
        return "\n".join(lines)

    # -- read path ------------------------------------------------------------------------------------------
    @_guarded("")
    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Collect the recall queue_prefetch started for this query, else compute it (both within the timeout)."""
        engine = self._require()
        if not isinstance(query, str) or not query.strip() or is_trivial_prompt(query):
            return ""
        pool = self._pool
        if pool is None:
            return ""
        queued = self.recall.take_queued(query, self.session_id)
        future = pool.submit(self._answer, query, queued)
        try:
            block = future.result(timeout=engine.config.prefetch_timeout_seconds)
        except concurrent.futures.TimeoutError:
            log.warning(
                "prefetch took longer than %.1fs; skipped this turn",
                engine.config.prefetch_timeout_seconds,
            )
            return ""
        self.recall.mark_given(block)
        return block.text

    @_guarded(None)
    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start the next turn's recall now (query embedding included) on a background thread."""
        pool = self._queue_pool
        if pool is None or not query or not query.strip() or is_trivial_prompt(query):
            return
        engine = self._require()
        self.recall.queue(
            query, self.session_id, pool.submit(self.recall.search, engine, query, self.visible)
        )

    def _answer(self, query: str, queued: concurrent.futures.Future[list[Hit]] | None) -> Block:
        """This turn's block from the queued search when there is one, else from a search now."""
        engine = self._require()
        found = (
            queued.result()
            if queued is not None
            else self.recall.search(engine, query, self.visible)
        )
        return self.recall.block(engine, found, self.visible, self.write_scope)

    # -- write path -----------------------------------------------------------------------------------------
    @_guarded(None)
    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """The host's user-turn count (it only grows within a session; recall_status reports it)."""
        self.turn_number = int(turn_number)

    @_guarded(None)
    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: Sequence[Mapping[str, Any]] | None = None,
        turn_author: Any = None,
        **kwargs: Any,
    ) -> None:
        """Journal one turn. On a shared gateway chat a newer host says who wrote it: it goes to their scope.

        `messages` (the conversation with its tool calls and results) is not read: a tool's output is stored only
        as far as the assistant's answer quotes it, redacted and screened like the rest of that answer."""
        if not self.writable:
            return
        engine = self._require()
        author = _author_id(turn_author)
        scope = scopes.user_scope(author, self.platform) if author else self.write_scope
        session = storable_or_empty(session_id) or self.session_id
        turn = self._next_turn(session)
        engine.capture_turn(
            TurnCapture(
                message_text(user_content),
                message_text(assistant_content),
                scope=scope,
                session_id=session,
                platform=self.platform,
                turn_index=turn,
            )
        )

    def _next_turn(self, session: str) -> int:
        engine = self._require()
        with self._lock:
            if session != self.session_id:
                self.session_id, self._turn = session, engine.inspect.next_turn_index(session)
                self.lineage = [session]
                self.recall.hold({session: 0}, add=True)
            turn, self._turn = self._turn, self._turn + 1
        return turn

    @_guarded(None)
    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent finished: its task and result become an episode of this (the parent) session.

        The journal row's platform records the provenance: `delegation` and the child's session id."""
        if not self.writable or not ((task or "").strip() or (result or "").strip()):
            return
        engine = self._require()
        turn = self._next_turn(self.session_id)
        child = storable_or_empty(str(child_session_id or "")).strip()
        platform = f"{DELEGATION_PLATFORM}:{child}" if child else DELEGATION_PLATFORM
        engine.capture_turn(
            TurnCapture(
                f"Task delegated to a subagent: {message_text(task)}".strip(),
                f"The subagent's result: {message_text(result)}".strip(),
                scope=self.write_scope,
                session_id=self.session_id,
                platform=platform[:200],
                turn_index=turn,
            )
        )

    @_guarded(None)
    def on_session_end(self, messages: Sequence[Mapping[str, Any]]) -> None:
        if not self.writable:
            return
        self._capture_missing(_messages(messages), Source.TURN)
        engine = self._require()
        engine.end_session(self.write_scope, self.session_id)
        engine.flush(timeout=engine.config.shutdown_drain_seconds)

    @_guarded("")
    def on_pre_compress(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        require_checkpoint: bool = False,
        **kwargs: Any,
    ) -> str:
        """Durable points for the summariser; with require_checkpoint (api v2) those of the whole conversation:
        the turns compressed away earlier in this lineage of sessions as well as the current messages."""
        messages = _messages(messages)
        if self.writable:
            self._capture_missing(messages, Source.COMPACTION)
            self._require().end_session(self.write_scope, self.session_id)
        with self._lock:
            # what the host holds now is being summarised away
            self.recall.hold({self.session_id: self._turn})
        if not require_checkpoint:
            return durable_points(messages, limit_chars=PRE_COMPRESS_LIMIT)
        earlier = [s for s in self.lineage if s != self.session_id]
        return durable_points(
            [*_stored_messages(self._require(), earlier, self.visible), *messages],
            limit_chars=CHECKPOINT_LIMIT,
        )

    def _capture_missing(self, messages: Sequence[Mapping[str, Any]], source: Source) -> int:
        """Journal user/assistant pairs from `messages` that sync_turn never saw (e.g. interrupted turns)."""
        engine = self._require()
        engine.wait_captured()  # turns still on their way to the journal count as seen
        seen = engine.inspect.captured_texts(self.session_id)
        captured = 0
        for user, assistant in _pairs(messages):
            if _known(user, seen) and _known(assistant, seen):
                continue
            with self._lock:
                turn, self._turn = self._turn, self._turn + 1
            engine.capture_turn(
                TurnCapture(
                    user,
                    assistant,
                    scope=self.write_scope,
                    session_id=self.session_id,
                    platform=self.platform,
                    turn_index=turn,
                    source=source,
                )
            )
            captured += 1
        return captured

    @_guarded(None)
    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        **kwargs: Any,
    ) -> None:
        """New session id (reset, resume, branch or compression): the injected-set and turn counter start over.

        After compression only turns captured later are in the host's context. A reset starts empty; a resumed or
        branched session brings its own (and its parent's) history back into the context."""
        engine = self._require()
        with self._lock:
            previous = self.session_id
            self.session_id = storable_or_empty(new_session_id) or self.session_id
            self._turn = engine.inspect.next_turn_index(self.session_id)
            if reset:
                self.lineage = [self.session_id]
            else:
                known = [s for s in (*self.lineage, parent_session_id or previous) if s]
                self.lineage = [*dict.fromkeys(known), self.session_id][-_LINEAGE_MAX:]
            if kwargs.get("reason") == "compression":
                self.recall.restart(
                    {self.session_id: self._turn if self.session_id == previous else 0}
                )
            elif reset:
                self.recall.restart({self.session_id: 0})
            else:
                self.recall.restart(
                    {self.session_id: 0, **({parent_session_id: 0} if parent_session_id else {})}
                )

    @_guarded(None)
    def on_memory_write(
        self, action: str, target: str, content: str, metadata: Mapping[str, Any] | None = None
    ) -> None:
        """Mirror the host's built-in memory tool: add, replace (supersede) and remove (forget)."""
        if not self.writable:
            return
        engine = self._require()
        action, target, content = (storable_or_empty(v) for v in (action, target, content))
        old_text = storable_or_empty(
            (metadata if isinstance(metadata, Mapping) else {}).get("old_text")
        )
        scope = self.write_scope
        if action in ("add", "replace") and content.strip():
            # a replace whose old text is not stored adds the new content, as an add does
            replaced = action == "replace" and bool(old_text)
            old = engine.inspect.containing(scope, old_text, limit=1) if replaced else []
            if old:
                engine.update(
                    old[0].id, content, scopes=(scope,), actor="mirror", source=Source.MIRROR
                )
            else:
                engine.remember(
                    content,
                    scope=scope,
                    options=RememberOptions(
                        type=_mirror_type(engine, content, target),
                        source=Source.MIRROR,
                        session_id=self.session_id,
                        actor="mirror",
                    ),
                )
        elif action == "remove" and old_text:
            for memory in engine.inspect.containing(scope, old_text, limit=5):
                engine.forget(
                    memory.id,
                    scopes=(scope,),
                    reason="removed from built-in memory",
                    actor="mirror",
                )

    # -- status ---------------------------------------------------------------------------------------------
    @_guarded({"label": "bowerbird: not available", "memories": 0})
    def recall_status(self) -> dict[str, Any]:
        """A short count and label for a newer host's status line."""
        engine = self.engine
        if engine is None:
            return {"label": "bowerbird: not initialised", "memories": 0}
        count = sum(engine.inspect.counts(self.visible).values())
        backlog = engine.inspect.journal_backlog()
        label = f"bowerbird: {count} memories" + (f", {backlog} turns to curate" if backlog else "")
        return {
            "label": label,
            "memories": count,
            "pending_turns": backlog,
            "turn": self.turn_number,
            "session_id": self.session_id,
        }

    # -- tools ----------------------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return tool_schemas()

    def handle_tool_call(self, tool_name: str, args: Mapping[str, Any], **kwargs: Any) -> str:
        engine = self.engine
        if engine is None:
            return json.dumps({"error": self._unavailable or "bowerbird is not initialised"})
        ctx = ToolContext(
            engine=engine,
            write_scope=self.write_scope,
            visible=self.visible,
            session_id=self.session_id,
            writable=self.writes_allowed,
        )
        return handle_tool_call(ctx, tool_name, args)

    # -- setup ----------------------------------------------------------------------------------------------
    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {
                "key": "embedding_backend",
                "description": "Embedding model",
                "default": "auto",
                "choices": list(EMBEDDING_BACKENDS),
            },
            {
                "key": "llm_backend",
                "description": "Model for extraction and the bulletin",
                "default": "auto",
                "choices": list(LLM_BACKENDS),
            },
            {
                "key": "gemini_api_key",
                "description": "Gemini API key (optional)",
                "secret": True,
                "required": False,
                "env_var": "GEMINI_API_KEY",
                "url": "https://aistudio.google.com/apikey",
            },
            {
                "key": "prefetch_budget_tokens",
                "description": "Tokens of recalled memory per turn",
                "default": "600",
            },
            {
                "key": "database_url",
                "description": "PostgreSQL (with pgvector) to share memory across hosts (optional; "
                "empty keeps the local SQLite file)",
                "secret": True,
                "required": False,
                "env_var": "BOWERBIRD_DATABASE_URL",
            },
        ]

    def save_config(self, values: Mapping[str, Any], hermes_home: str) -> None:
        """Write the settings file; the secrets (the Gemini key, a server address with its password) stay in the
        host's own store of secrets, read from the environment."""
        from .config import save_settings

        secret = {"gemini_api_key", "database_url"}
        save_settings(Path(hermes_home), {k: v for k, v in values.items() if k not in secret})

    def post_setup(self, hermes_home: str, config: Mapping[str, Any]) -> None:
        """`hermes memory setup bowerbird`: activate and say what will be used (this is an interactive wizard)."""
        from . import hermes_setup

        home = Path(hermes_home).expanduser()
        report = hermes_setup.install(home)
        print(f"\n  Memory provider: bowerbird (plugin at {report.plugin_dir})")
        for key, value in self.get_status_config({"hermes_home": str(home)}).items():
            print(f"  {key}: {value}")
        print("  Start a new session to activate.\n")

    def get_status_config(self, cfg: Mapping[str, Any]) -> dict[str, Any]:
        """What `hermes memory status` shows: cheap facts from the settings, without opening the database."""
        from .embeddings.local import resolve_local_model
        from .errors import BowerbirdError

        home = cfg.get("hermes_home") if isinstance(cfg, Mapping) else None
        settings = self._config or load_config(Path(str(home)) if home else None)
        try:
            model = resolve_local_model(settings.embedding_model)
            embedding = f"{settings.embedding_backend} ({model.label}{', offline' if model.offline else ''})"
        except BowerbirdError as exc:
            embedding = f"{settings.embedding_backend} (model problem: {exc})"
        db = settings.db_path
        return {
            "database": shown(settings.database_url)
            if settings.database_url
            else f"{db} ({db.stat().st_size // 1024} KiB)"
            if db.exists()
            else f"{db} (not created yet)",
            "embedding": embedding,
            "llm": settings.llm_backend,
            "settings file": str(settings.hermes_home / "bowerbird" / "config.yaml"),
        }

    def backup_paths(self) -> list[str]:
        """Extra files to back up: the database, when configured outside HERMES_HOME (none for a server)."""
        config = self._config or (self.engine.config if self.engine else None)
        if config is None or config.database_url or config.hermes_home in config.db_path.parents:
            return []
        return [str(config.db_path)]

    def _require(self) -> Bowerbird:
        if self.engine is None:
            raise RuntimeError("bowerbird provider used before initialize()")
        return self.engine


def _report_once(message: str) -> None:
    """One error line per process and cause: a gateway makes a provider per user, each would say it again."""
    with _REPORTED_LOCK:
        first = message not in _REPORTED
        _REPORTED.add(message)
    if first:
        log.error("%s", message)
    else:
        log.debug("%s", message)


def _mirror_type(engine: Bowerbird, content: str, target: str) -> MemoryType:
    return markdown.type_for_entry(engine, content, "user" if target == "user" else "memory")


def _stored_messages(
    engine: Bowerbird, sessions: Sequence[str], visible: Sequence[str]
) -> list[dict[str, str]]:
    """The stored turns of these sessions (those this conversation went through before the current one)."""
    out: list[dict[str, str]] = []
    for session in sessions:
        episodes = engine.inspect.session_episodes(visible, session)
        for episode in sorted(
            episodes, key=lambda e: (e.turn_index, e.role != "user", e.chunk_index)
        ):
            out.append(
                {
                    "role": "user" if episode.role == "user" else "assistant",
                    "content": episode.content,
                }
            )
    return out


def _messages(messages: Any) -> list[Mapping[str, Any]]:
    """The host's message list, keeping only well-formed messages (a malformed entry is skipped, not fatal)."""
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        return []
    return [m for m in messages if isinstance(m, Mapping)]


def _pairs(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(user, assistant) text pairs from OpenAI-style messages; tool and system messages are skipped."""
    pairs: list[tuple[str, str]] = []
    user: str | None = None
    for message in messages or ():
        role, text = message.get("role"), message_text(message.get("content"))
        if role == "user":
            if user is not None:
                pairs.append((user, ""))
            user = text
        elif role == "assistant" and text:
            pairs.append((user or "", text))
            user = None
    if user:
        pairs.append((user, ""))
    return [(u, a) for u, a in pairs if u.strip() or a.strip()]


def _known(text: str, seen: set[str]) -> bool:
    """Whether this text was journaled already (the journal holds it cleaned and redacted)."""
    return not text.strip() or capture_digest(clean_text(text)) in seen


def _author_id(author: Any) -> str:
    """Who wrote a turn on a shared chat: a user id as text, or a mapping holding one (user_id / id)."""
    if isinstance(author, Mapping):
        author = author.get("user_id") or author.get("id") or author.get("author_id") or ""
    return str(author).strip() if author not in (None, "") else ""
