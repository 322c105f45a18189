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
from .config import Config, load_config
from .curation.injected import message_text
from .curation.noise import is_trivial_prompt
from .curation.summary import durable_points
from .engine import Bowerbird, clean_text
from .errors import BowerbirdError
from .explain import describe
from .retrieval import PREFETCH_MIN_RELEVANCE
from .sanitize import storable, storable_or_empty
from .store import content_hash
from .tools import TOOL_SCHEMAS, ToolContext, handle_tool_call
from .types import Bulletin, MemoryType, Source

if TYPE_CHECKING:
    from agent.memory_provider import MemoryProvider as _Base
else:
    try:  # the host's base class when running inside Hermes; a plain object otherwise (tests, CLI, MCP)
        from agent.memory_provider import MemoryProvider as _Base
    except ImportError:
        _Base = object

log = logging.getLogger(__name__)

T = TypeVar("T")
PREFETCH_HEADER = "Relevant long-term memories (bowerbird):"
PRE_COMPRESS_LIMIT = 1500
_WRITE_CONTEXTS = frozenset({"primary", ""})
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
                log.warning("bowerbird %s failed (%s); the turn goes on without it", method.__name__, describe(exc))
                log.debug("bowerbird %s failure details", method.__name__, exc_info=True)
                return default
            except Exception:
                log.exception("bowerbird %s failed; the turn goes on without it", method.__name__)
                return default
        return run
    return wrap


class BowerbirdProvider(_Base):
    """One instance per Hermes agent; instances in a process share one engine per database file."""

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
        self._injected: set[tuple[str, int]] = set()
        self._injected_texts: set[str] = set()  # an episode and the memory taken from it say the same thing
        self._bulletin_seen: Bulletin | None = None
        self._lock = threading.Lock()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._unavailable: str | None = None

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
    def writable(self) -> bool:
        engine = self.engine
        return self.agent_context in _WRITE_CONTEXTS and not (engine is not None and engine.store.readonly)

    # -- lifecycle ------------------------------------------------------------------------------------------
    @_guarded(None)
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        hermes_home = Path(str(kwargs.get("hermes_home") or "")).expanduser() if kwargs.get("hermes_home") \
            else None
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
            self.engine = Bowerbird.open_shared(config, primary=self.writable,
                                                profile_scope=scopes.profile_scope(identity))
        except (BowerbirdError, sqlite3.Error, OSError) as exc:
            self._unavailable = f"bowerbird memory is off for this session: {describe(exc)}"
            _report_once(f"{self._unavailable} (database {config.db_path})")
            log.debug("opening the memory store failed", exc_info=True)
            return
        if self.engine.store.readonly:
            log.warning("memory store %s is read-only: recall works, new turns are not stored", config.db_path)
        if self.writable:
            self.engine.start(primary=True)
        self._turn = self.engine.store.next_turn_index(self.session_id) if self.session_id else 0
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="bowerbird-prefetch")
        if self.writable and config.import_markdown:
            self._import_host_files(config.hermes_home, identity)
        log.info("bowerbird ready for session %s (%s, %s)", self.session_id, self.platform, self.agent_context)

    def _import_host_files(self, hermes_home: Path, identity: str | None) -> None:
        assert self.engine is not None
        try:
            markdown.import_host_memories(self.engine, hermes_home, scope=scopes.profile_scope(identity))
        except Exception:
            log.exception("importing MEMORY.md/USER.md failed; nothing was lost")

    @_guarded(None)
    def shutdown(self) -> None:
        engine, self.engine = self.engine, None
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        if engine is not None:
            engine.release()

    # -- system prompt --------------------------------------------------------------------------------------
    @_guarded("")
    def system_prompt_block(self) -> str:
        engine = self._require()
        count = sum(engine.store.count_memories(self.visible).values())
        lines = [
            "## Long-term memory (bowerbird)",
            f"Bowerbird keeps {count} memories about this user and their work across sessions. Relevant ones "
            "arrive in <memory-context> with the user's message; trust them unless the user corrects them.",
            "Tools: bowerbird_recall to search past sessions; bowerbird_remember for a durable fact, preference, "
            "decision or todo; bowerbird_update to correct one by id; bowerbird_forget to drop one; "
            "bowerbird_relate to link two.",
        ]
        # never waits for a model on the session-start path; the maintenance job writes the briefing later
        bulletin = engine.bulletin(self.write_scope, visible=self.visible, synthesise=False)
        self._bulletin_seen = bulletin
        if bulletin is not None and bulletin.text.strip():
            lines += ["", "### Bulletin: who the user is and what is going on", bulletin.text.strip()]
        return "\n".join(lines)

    # -- read path ------------------------------------------------------------------------------------------
    @_guarded("")
    def prefetch(self, query: str, *, session_id: str = "") -> str:
        engine = self._require()
        if not isinstance(query, str) or not query.strip() or is_trivial_prompt(query):
            return ""
        pool = self._pool
        if pool is None:
            return ""
        future = pool.submit(self._recall_block, query)
        try:
            return future.result(timeout=engine.config.prefetch_timeout_seconds)
        except concurrent.futures.TimeoutError:
            log.warning("prefetch took longer than %.1fs; skipped this turn", engine.config.prefetch_timeout_seconds)
            return ""

    def _recall_block(self, query: str) -> str:
        engine = self._require()
        budget = engine.config.prefetch_budget_tokens
        note = self._bulletin_note()
        with self._lock:
            exclude = set(self._injected)
            given = [*self._injected_texts, *(_normalised(line[2:]) for line in note.splitlines()[1:])]
        hits = [h for h in engine.recall(query, scopes=self.visible, budget_tokens=budget, exclude=exclude,
                                         min_relevance=PREFETCH_MIN_RELEVANCE)
                if not _already_given(h.content, given)]
        parts = [note] if note else []
        if hits:
            parts += [PREFETCH_HEADER, engine.format_hits(hits, budget)]
            with self._lock:
                self._injected.update((str(h.kind), h.id) for h in hits)
                self._injected_texts.update(_normalised(h.content) for h in hits)
        return "\n".join(parts)

    def _bulletin_note(self) -> str:
        """A one-time short note when a newer bulletin appeared after the system prompt was frozen."""
        engine = self._require()
        latest = engine.store.latest_bulletin(self.write_scope)
        seen = self._bulletin_seen
        if latest is None or seen is None or latest.id == seen.id:
            return ""
        self._bulletin_seen = latest
        return engine.bulletins.changes_since(seen, latest)

    # -- write path -----------------------------------------------------------------------------------------
    @_guarded(None)
    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: Sequence[Mapping[str, Any]] | None = None) -> None:
        if not self.writable:
            return
        engine = self._require()
        session = storable_or_empty(session_id) or self.session_id
        with self._lock:
            if session != self.session_id:
                self.session_id, self._turn = session, engine.store.next_turn_index(session)
            turn, self._turn = self._turn, self._turn + 1
        engine.capture_turn(message_text(user_content), message_text(assistant_content), scope=self.write_scope,
                            session_id=session, platform=self.platform, turn_index=turn)

    @_guarded(None)
    def on_session_end(self, messages: Sequence[Mapping[str, Any]]) -> None:
        if not self.writable:
            return
        self._capture_missing(_messages(messages), Source.TURN)
        engine = self._require()
        engine.end_session(self.write_scope, self.session_id)
        engine.flush(timeout=engine.config.shutdown_drain_seconds)

    @_guarded("")
    def on_pre_compress(self, messages: Sequence[Mapping[str, Any]], **kwargs: Any) -> str:
        messages = _messages(messages)
        if self.writable:
            self._capture_missing(messages, Source.COMPACTION)
            self._require().end_session(self.write_scope, self.session_id)
        return durable_points(messages, limit_chars=PRE_COMPRESS_LIMIT)

    def _capture_missing(self, messages: Sequence[Mapping[str, Any]], source: Source) -> int:
        """Journal user/assistant pairs from `messages` that sync_turn never saw (e.g. interrupted turns)."""
        engine = self._require()
        seen = engine.store.journal_texts(self.session_id)
        captured = 0
        for user, assistant in _pairs(messages):
            if _known(user, seen) and _known(assistant, seen):
                continue
            with self._lock:
                turn, self._turn = self._turn, self._turn + 1
            engine.capture_turn(user, assistant, scope=self.write_scope, session_id=self.session_id,
                                platform=self.platform, turn_index=turn, source=source)
            captured += 1
        return captured

    @_guarded(None)
    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          **kwargs: Any) -> None:
        """New session id (reset, resume, branch or compression): the injected-set and turn counter start over."""
        engine = self._require()
        with self._lock:
            self.session_id = storable_or_empty(new_session_id) or self.session_id
            self._turn = engine.store.next_turn_index(self.session_id)
            self._injected.clear()
            self._injected_texts.clear()

    @_guarded(None)
    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Mapping[str, Any] | None = None) -> None:
        """Mirror the host's built-in memory tool: add, replace (supersede) and remove (forget)."""
        if not self.writable:
            return
        engine = self._require()
        action, target, content = (storable_or_empty(v) for v in (action, target, content))
        old_text = storable_or_empty((metadata if isinstance(metadata, Mapping) else {}).get("old_text"))
        scope = self.write_scope
        if action == "add" and content.strip():
            engine.remember(content, scope=scope, type=self._mirror_type(content, target), source=Source.MIRROR,
                            session_id=self.session_id, actor="mirror")
        elif action == "replace" and content.strip():
            old = engine.store.find_containing(scope, old_text, limit=1) if old_text else []
            if old:
                engine.update(old[0].id, content, scopes=(scope,), actor="mirror", source=Source.MIRROR)
            else:
                engine.remember(content, scope=scope, type=self._mirror_type(content, target),
                                source=Source.MIRROR, session_id=self.session_id, actor="mirror")
        elif action == "remove" and old_text:
            for memory in engine.store.find_containing(scope, old_text, limit=5):
                engine.forget(memory.id, scopes=(scope,), reason="removed from built-in memory", actor="mirror")

    def _mirror_type(self, content: str, target: str) -> MemoryType:
        return markdown.type_for_entry(self._require(), content, "user" if target == "user" else "memory")

    # -- tools ----------------------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(schema) for schema in TOOL_SCHEMAS]

    def handle_tool_call(self, tool_name: str, args: Mapping[str, Any], **kwargs: Any) -> str:
        engine = self.engine
        if engine is None:
            return json.dumps({"error": self._unavailable or "bowerbird is not initialised"})
        ctx = ToolContext(engine=engine, write_scope=self.write_scope, visible=self.visible,
                          session_id=self.session_id, writable=self.writable)
        return handle_tool_call(ctx, tool_name, args)

    # -- setup ----------------------------------------------------------------------------------------------
    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "embedding_backend", "description": "Embedding model", "default": "auto",
             "choices": ["auto", "local", "gemini", "none"]},
            {"key": "llm_backend", "description": "Model for extraction and the bulletin", "default": "auto",
             "choices": ["auto", "host", "gemini", "none"]},
            {"key": "gemini_api_key", "description": "Gemini API key (optional)", "secret": True,
             "required": False, "env_var": "GEMINI_API_KEY", "url": "https://aistudio.google.com/apikey"},
            {"key": "prefetch_budget_tokens", "description": "Tokens of recalled memory per turn",
             "default": "600"},
        ]

    def save_config(self, values: Mapping[str, Any], hermes_home: str) -> None:
        from .config import save_settings

        save_settings(Path(hermes_home), {k: v for k, v in values.items() if k != "gemini_api_key"})

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
        from .embedding import resolve_local_model
        from .errors import BowerbirdError

        home = cfg.get("hermes_home") if isinstance(cfg, Mapping) else None
        settings = self._config or load_config(Path(str(home)) if home else None)
        try:
            model = resolve_local_model(settings.embedding_model)
            embedding = f"{settings.embedding_backend} ({model.label}{', offline' if model.offline else ''})"
        except BowerbirdError as exc:
            embedding = f"{settings.embedding_backend} (model problem: {exc})"
        db = settings.db_path
        return {"database": f"{db} ({db.stat().st_size // 1024} KiB)" if db.exists() else f"{db} (not created yet)",
                "embedding": embedding, "llm": settings.llm_backend,
                "settings file": str(settings.hermes_home / "bowerbird" / "config.yaml")}

    def backup_paths(self) -> list[str]:
        """Extra files to back up: the database, when configured outside HERMES_HOME."""
        config = self._config or (self.engine.config if self.engine else None)
        if config is None or config.hermes_home in config.db_path.parents:
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
    return not text.strip() or content_hash(clean_text(text)) in seen


def _normalised(text: str) -> str:
    return " ".join(text.lower().split()).rstrip("…").strip()


def _already_given(content: str, given: Sequence[str]) -> bool:
    """True when this text, or a text containing it, was injected earlier in the session."""
    text = _normalised(content)
    return bool(text) and any(text in old or old in text for old in given if old)
