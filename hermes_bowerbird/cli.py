"""The `bowerbird` command: inspect, search, edit, import, export and maintain the memory store from a shell."""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__, render, scopes
from .addresses import is_server_address, shown
from .config import Config, load_config
from .errors import (
    AmbiguousUserError,
    BowerbirdError,
    ConfigError,
    DatabaseError,
    InvalidInputError,
    NotFoundError,
    ReadOnlyStoreError,
)
from .explain import describe, nothing_stored, read_only_store
from .options import RecallOptions, RememberOptions
from .sanitize import storable
from .serialize import bulletin_dict, detail_json, hit_dict, memory_json
from .timestamps import DAY, HOUR, parse_iso
from .types import Relation, Source, VectorModel, memory_type, type_names

if TYPE_CHECKING:
    from .engine import Bowerbird

log = logging.getLogger(__name__)

MODEL_WAIT_SECONDS = 30.0
CURATE_BATCH = 25
_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": HOUR, "d": DAY, "w": 7 * DAY}


class _TypeChoice(click.Choice[str]):
    """The memory types of the TypeSpec table, read when the command line is parsed (never a stale copy)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return type_names()

    @choices.setter
    def choices(self, value: object) -> None:
        """Ignored: the choices are always the table's."""


_RELATIONS = [r.value for r in Relation]
_ID = click.IntRange(1, 2**63 - 1)  # SQLite's INTEGER range: a larger id is a mistake, not a lookup


@dataclass
class State:
    """Global options and the engine opened for this one command (closed when the command ends)."""

    db: Path | None = None
    database_url: str | None = None
    hermes_home: Path | None = None
    user: str | None = None
    profile: str | None = None
    json_mode: bool = False
    verbose: int = 0
    _config: Config | None = None
    _engine: Bowerbird | None = None
    command: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _owner: tuple[str | None, str | None] | None = None

    def config(self) -> Config:
        if self._config is None:
            overrides: dict[str, str] = {}
            if self.db:
                overrides["db_path"] = str(self.db)
            if self.database_url:
                overrides["database_url"] = self.database_url
            self._config = load_config(self.hermes_home, overrides=overrides)
        return self._config

    def stored(self) -> bool:
        """Whether the database exists: read commands answer "nothing yet" without creating it."""
        return self.config().db_path.exists()

    def note(self, text: str) -> None:
        """Something to know beside the answer: on stderr as text, in the envelope's `notes` with --json."""
        if self.json_mode:
            self.notes.append(text)
        else:
            click.echo(f"note: {text}", err=True)

    def nothing_yet(self) -> str:
        """The note of a read command on a home where nothing was captured yet."""
        return (
            f"nothing is remembered yet (no database at {self.config().db_path}; "
            "the agent's first stored turn creates it)"
        )

    @property
    def _user_platform(self) -> tuple[str | None, str | None]:
        """--user PLATFORM:ID (e.g. telegram:12345, the way a gateway user is keyed) or ID, looked up once."""
        if self._owner is None:
            self._owner = self._find_user()
        return self._owner

    def _find_user(self) -> tuple[str | None, str | None]:
        """An ID given without its platform is read on the one platform that holds it; when several do, the
        caller must say which (a usage error listing them); when none does, the ID alone, as it always was."""
        if not self.user:
            return None, None
        user, platform = scopes.split_user(storable(self.user))
        if platform is not None or not self.stored():
            return user, platform
        held = self.engine().inspect.user_platforms(user)
        try:
            platform = scopes.choose_platform(user, held)
        except AmbiguousUserError as exc:
            raise click.BadParameter(str(exc), param_hint="'--user'") from exc
        if platform:
            self.note(
                f"user {user!r} is held on {platform} only: read as --user "
                f"{scopes.written(user, platform)!r}"
            )
        elif platform is None:
            self.note(
                f"nothing is stored for user {user!r} yet, on any platform; a gateway user is "
                f"given with their platform, e.g. --user telegram:{user}"
            )
        return user, platform

    @property
    def write_scope(self) -> str:
        user, platform = self._user_platform
        return scopes.write_scope(user, self.profile, platform)

    @property
    def visible(self) -> tuple[str, ...]:
        user, platform = self._user_platform
        return scopes.visible_scopes(user, self.profile, platform)

    @property
    def own(self) -> tuple[str, ...]:
        """The scopes this caller owns: a user's (with its legacy key), or the profile's; export uses only these."""
        user, platform = self._user_platform
        return scopes.own_scopes(user, self.profile, platform)

    @property
    def user_and_platform(self) -> tuple[str | None, str | None]:
        """The --user as found (its platform looked up when not given), for the MCP server's scopes."""
        return self._user_platform

    def engine(
        self, *, create: bool = False, write: bool = False, model: bool = False
    ) -> Bowerbird:
        """Open the store without background threads; `create` makes a missing one (for a command that stores),
        `write` refuses a read-only one at once, naming why, and `model` loads the embedding model and waits."""
        if self._engine is None:
            from .engine import Bowerbird

            config = self.config()
            if not create and not config.database_url and not config.db_path.exists():
                raise DatabaseError(
                    f"no bowerbird database at {config.db_path} (nothing captured yet; "
                    "pass --db or --hermes-home to use another one)"
                )
            self._engine = Bowerbird(config, background=False)
        reason = self._engine.inspect.read_only_reason
        if (create or write) and reason is not None:
            raise ReadOnlyStoreError(nothing_stored(self._engine.inspect.location, reason))
        if model:
            _load_model(self._engine)
        return self._engine

    def close(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.admin.stop_model(timeout=5.0)
            engine.shutdown(timeout=5.0)

    @property
    def show_progress(self) -> bool:
        return not self.json_mode and sys.stderr.isatty()


def _load_model(engine: Bowerbird) -> None:
    # a one-shot command embeds what it stores; re-embedding the rest is `bowerbird reindex`'s and the worker's
    engine.admin.load_model(reindex_in_background=False)
    engine.admin.wait_reranker(MODEL_WAIT_SECONDS)  # a failure is logged by the reranker itself
    if not engine.admin.wait_model(MODEL_WAIT_SECONDS):
        info = engine.admin.model_status()
        if info.get("state") == "disabled":
            return
        reason = info.get("reason")
        log.warning("no embedding model (%s): using keyword and graph signals only", reason)


# -- output --------------------------------------------------------------------------------------------------
def emit(
    state: State, data: Mapping[str, Any], human: str | Callable[[], str] | None = None
) -> None:
    """Print the JSON envelope with --json, else the human text (a string or a function making one)."""
    if state.json_mode:
        extra = {"notes": list(state.notes)} if state.notes else {}
        envelope = {"command": state.command, "success": True, "data": {**data, **extra}}
        click.echo(json.dumps(envelope, ensure_ascii=False, default=_json_default))
        return
    text = human() if callable(human) else human
    if text:
        click.echo(text)


def _json_default(value: object) -> object:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _fail(state: State, exc: BaseException, code: int = 1) -> None:
    message = storable(describe(exc))
    if state.json_mode:
        error: dict[str, Any] = {"type": type(exc).__name__, "message": message}
        ambiguous = exc.__cause__
        if isinstance(ambiguous, AmbiguousUserError):  # the PLATFORM:ID forms to choose from
            error["choices"] = list(ambiguous.choices)
        data = {"error": error}
        click.echo(
            json.dumps(
                {"command": state.command, "success": False, "data": data}, ensure_ascii=False
            )
        )
    else:
        click.echo(f"Error: {message}", err=True)
    sys.exit(code)


class BowerbirdGroup(click.Group):
    """Translates the package's errors into one clear line (or a JSON envelope) and a non-zero exit."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Every command also takes the global options after its name (see with_global_options)."""
        super().add_command(with_global_options(cmd), name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        state = ctx.ensure_object(State)
        state.command = command.name if command is not None and command.name else name or ""
        if (
            ctx.parent is not None and ctx.info_name
        ):  # a command of a group of commands: "store copy"
            state.command = f"{ctx.info_name} {state.command}"
        options = rest[: rest.index("--")] if "--" in rest else rest
        # so a usage error after it is JSON too
        state.json_mode = state.json_mode or "--json" in options
        return name, command, rest

    def invoke(self, ctx: click.Context) -> Any:
        state = ctx.ensure_object(State)
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            if not state.json_mode:
                raise
            failure = InvalidInputError(exc.format_message())
            failure.__cause__ = exc.__cause__
            _fail(state, failure, exc.exit_code)
        except NotFoundError as exc:
            _fail(state, exc, 3)
        except (BowerbirdError, sqlite3.Error, OSError, UnicodeError) as exc:
            log.debug("%s failed", state.command, exc_info=True)
            _fail(state, exc, 1)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            # a bug or an environment failure: one line for the user, details with -vv
            log.debug("%s failed unexpectedly", state.command, exc_info=True)
            _fail(state, exc, 1)
        finally:
            _close_quietly(state)


def _close_quietly(state: State) -> None:
    """Closing must not turn a clean error line into a traceback (e.g. a read-only or damaged store)."""
    try:
        state.close()
    except (sqlite3.Error, OSError, BowerbirdError) as exc:
        log.warning("closing the store failed: %s", describe(exc))


@contextmanager
def progress_bar(state: State, label: str, total: int) -> Iterator[Callable[[int, int], None]]:
    """A click progress bar on a terminal; a no-op in pipes and with --json. Yields update(done, total)."""
    if not state.show_progress or total <= 0:
        yield lambda done, total: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        seen = [0]

        def update(done: int, new_total: int) -> None:
            if new_total > bar.length:  # type: ignore[operator]
                bar.length = new_total
            bar.update(max(0, done - seen[0]))
            seen[0] = done

        yield update


def parse_time(value: str | None, now: float) -> float | None:
    """ISO date/time, epoch seconds, or a relative age such as 7d, 12h, 2w (meaning that long ago)."""
    if value is None or not value.strip():
        return None
    text = value.strip().lower()
    match = _RELATIVE.match(text)
    if match:
        return now - float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return parse_iso(value)
    except ValueError as exc:
        raise InvalidInputError(
            f"cannot read time {value!r}: use 2026-03-01, 2026-03-01T09:00 or 7d / 12h"
        ) from exc


# -- global options: one definition, accepted before and after the command name ------------------------------
def _global_options(*, group: bool) -> list[click.Option]:
    """The options every command takes. On the group they read their environment variables; after a command
    name they default to "not given", so they only override what was given before it."""
    return [
        click.Option(
            ["--db"],
            type=click.Path(dir_okay=False, path_type=Path),
            envvar="BOWERBIRD_DB_PATH" if group else None,
            help="Database file (default: $HERMES_HOME/bowerbird/memory.db).",
        ),
        click.Option(
            ["--database-url"],
            metavar="URL",
            envvar="BOWERBIRD_DATABASE_URL" if group else None,
            help="A PostgreSQL database to use instead of the SQLite file (postgresql://...).",
        ),
        click.Option(
            ["--hermes-home"],
            type=click.Path(file_okay=False, path_type=Path),
            envvar="HERMES_HOME" if group else None,
            help="Hermes home folder (default: $HERMES_HOME or ~/.hermes).",
        ),
        click.Option(
            ["--user", "user"],
            metavar="ID",
            help="A gateway user id: read their scope plus the shared one, write to theirs.",
        ),
        click.Option(
            ["--profile"],
            metavar="NAME",
            help="Hermes profile (agent identity) whose shared scope to use.",
        ),
        click.Option(
            ["--json", "json_mode"], is_flag=True, help="Print one JSON envelope instead of text."
        ),
        click.Option(
            ["-v", "--verbose"], count=True, help="Log more (-v info, -vv debug) to stderr."
        ),
    ]


GLOBAL_NAMES = tuple(str(option.name) for option in _global_options(group=True))


def _apply_global_options(state: State, values: Mapping[str, Any]) -> None:
    """Merge one side's values into the state: a value given after the command name wins."""
    for attr, name in (
        ("db", "db"),
        ("database_url", "database_url"),
        ("hermes_home", "hermes_home"),
        ("user", "user"),
        ("profile", "profile"),
    ):
        if values.get(name) not in (None, ""):
            setattr(state, attr, values[name])
    state.json_mode = state.json_mode or bool(values.get("json_mode"))
    state.verbose = max(state.verbose, int(values.get("verbose") or 0))
    _configure_logging(state.verbose)


def with_global_options(command: click.Command) -> click.Command:
    """Give a command the global options (idempotent); its callback never sees them, only the merged State."""
    if getattr(command, "_bowerbird_global_options", False) or command.callback is None:
        return command
    taken = {param.name for param in command.params}
    command.params.extend(
        option for option in _global_options(group=False) if option.name not in taken
    )
    callback = command.callback

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in GLOBAL_NAMES if name in kwargs}
        _apply_global_options(click.get_current_context().ensure_object(State), values)
        return callback(*args, **kwargs)

    command.callback = run
    command._bowerbird_global_options = True  # type: ignore[attr-defined]
    return command


# -- the command group ---------------------------------------------------------------------------------------
@click.group(
    cls=BowerbirdGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    params=_global_options(group=True),
)
@click.version_option(__version__, prog_name="bowerbird")
@click.pass_context
def cli(ctx: click.Context, **values: Any) -> None:
    """Local-first long-term memory for Hermes Agent.

    The global options (--db, --hermes-home, --user, --profile, --json, -v) go before or after the command
    name: `bowerbird --json recall tea` and `bowerbird recall tea --json` are the same."""
    # model loading bars would garble output
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    _apply_global_options(ctx.ensure_object(State), values)


def _configure_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    root = logging.getLogger("hermes_bowerbird")
    root.setLevel(level)
    if not any(getattr(h, "_bowerbird", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("bowerbird: %(levelname)s: %(message)s"))
        handler._bowerbird = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        root.propagate = False


pass_state = click.make_pass_decorator(State, ensure=True)


@cli.command()
@pass_state
def status(state: State) -> None:
    """Counts by type, journal backlog, embedding state, database path, bulletin age and whether the Hermes home
    has bowerbird switched on. Where nothing was captured yet it says so (and creates nothing)."""
    if not state.stored():
        data = _empty_status(state)
        emit(state, data, lambda: _empty_status_text(data))
        return
    engine = state.engine()
    info = engine.status()
    by_type = engine.inspect.counts(state.visible)
    bulletin = engine.inspect.latest_bulletin(state.write_scope)
    vector_models = {
        f"{kind}/{model}/{dim}": n
        for (kind, model, dim), n in engine.inspect.vector_counts().items()
    }
    embedding = dict(info.get("embedding") or {})  # type: ignore[call-overload]
    if not embedding.get("runtime"):
        from .embeddings.service import planned_model, planned_runtime

        embedding["planned"] = planned_runtime(engine.config)
        embedding["planned_model"] = model = planned_model(engine.config)
        embedding["other_models"] = _other_models(engine.inspect.vector_counts(), model)
    data = {
        **info,
        "embedding": embedding,
        "scopes": list(state.visible),
        "visible_memories": by_type,
        "vector_models": vector_models,
        "reranker_model": engine.config.reranker_model or None,
        "bulletin_age_seconds": None
        if bulletin is None
        else round(engine.clock() - bulletin.created_at, 1),
        "exists": True,
        "provider": _provider_json(state),
    }
    emit(state, data, lambda: _status_text(data, by_type))


def _empty_status(state: State) -> dict[str, Any]:
    """`status` where no database exists yet: the same keys where they have a meaning, all empty."""
    return {
        "db_path": str(state.config().db_path),
        "exists": False,
        "read_only": False,
        "read_only_reason": None,
        "scopes": list(state.visible),
        "memories": {},
        "visible_memories": {},
        "journal_backlog": 0,
        "bulletin_age_seconds": None,
        "provider": _provider_json(state),
    }


def _empty_status_text(data: Mapping[str, Any]) -> str:
    summary = {
        "database": f"{data['db_path']} (not created yet: the agent's first stored turn creates it)",
        "scopes": ", ".join(data.get("scopes") or []),
        "provider": _provider_text(data["provider"]),
    }
    return "No memory yet: nothing has been captured.\n\n" + render.key_values(summary)


def _provider_json(state: State) -> dict[str, Any]:
    from . import hermes_setup

    found = hermes_setup.provider_state(state.config().hermes_home)
    return {
        "active": found.active,
        "provider": found.provider,
        "config": str(found.config_path),
        "plugin_dir": str(found.plugin_dir),
        "plugin_present": found.plugin_present,
        "problem": found.problem,
        "install_command": None if found.active else _install_command(state),
    }


def _install_command(state: State) -> str:
    home = state.hermes_home
    return "bowerbird hermes-install" + (f" --hermes-home {home}" if home else "")


def _provider_text(provider: Mapping[str, Any]) -> str:
    """Whether Hermes runs bowerbird, and the command that switches it on when it does not."""
    if provider.get("active"):
        return f"bowerbird (memory.provider in {provider['config']})"
    if provider.get("problem"):
        where = f"cannot read {provider['config']} ({provider['problem']})"
    elif provider.get("provider") == "bowerbird":
        where = f"memory.provider is bowerbird but {provider['plugin_dir']} is missing"
    elif provider.get("provider"):
        where = f"memory.provider is {provider['provider']!r} in {provider['config']}"
    else:
        where = f"no memory.provider in {provider['config']}"
    return f"off ({where}): run `{provider['install_command']}` to switch bowerbird on"


def _other_models(counts: Mapping[tuple[str, str, int], int], model: str | None) -> dict[str, int]:
    """Stored vectors by model name, of models other than `model` (the one a local model would store under)."""
    others: dict[str, int] = {}
    for (_kind, name, dim), n in counts.items():
        if model is not None and name != model:
            key = str(VectorModel(name, dim))
            others[key] = others.get(key, 0) + n
    return others


def _vector_models(data: Mapping[str, Any]) -> str:
    models = data.get("vector_models") or {}
    return ", ".join(f"{k} {v}" for k, v in dict(models).items()) or "none"


def _retrying_text(retrying: Mapping[str, Any]) -> str:
    if not retrying.get("rows"):
        return "none"
    return (
        f"{retrying['rows']} rows (up to {retrying['max_attempts']} attempts; "
        f"next in {retrying.get('next_retry_seconds')} s)"
    )


def _worker_text(worker: Mapping[str, Any]) -> str:
    alive = f"pid {worker.get('pid')}, alive" if worker.get("alive") else "not running"
    return f"{alive}, backlog {worker.get('backlog', 0)}"


def _runtime_note(embedding: Mapping[str, Any]) -> str:
    """Which runtime embeds right now (e.g. "onnx-int8" or "torch"), or the state while there is none."""
    runtime = embedding.get("runtime") or embedding.get("planned")
    return f", runtime {runtime}" if runtime else ""


def _database_text(data: Mapping[str, Any]) -> str:
    reason = data.get("read_only_reason")
    return f"{data.get('db_path')}" + (f" (read-only: {reason})" if reason else "")


def _reranker_text(reranker: Mapping[str, Any] | None, configured: str | None) -> str:
    if not configured:
        return "none"
    if not reranker or reranker.get("state") == "not started":
        return f"{configured} (not loaded by this command)"
    timing = reranker.get("ms_per_candidate")
    cost = f", {timing} ms per candidate" if timing is not None else ""
    return f"{configured} ({reranker.get('state')}{cost}): {reranker.get('reason')}"


def _model_text(embedding: Mapping[str, Any]) -> str:
    """The embedding model and its state; says so when the store holds another model's vectors."""
    if embedding.get("model"):
        text = f"{embedding['model']} ({embedding.get('state', '-')})"
    else:
        text = f"{embedding.get('planned_model') or '-'} (not loaded by this command)"
    others = embedding.get("other_models") or {}
    if others:
        text += (
            f": the store holds vectors of other models ({_counts_text(others)}); recall uses keywords "
            "and the graph until `bowerbird reindex`"
        )
    return text


def _status_text(data: Mapping[str, Any], by_type: Mapping[str, int]) -> str:
    counts = data.get("counts") or {}
    embedding = data.get("embedding") or {}
    age = data.get("bulletin_age_seconds")
    summary = {
        "database": _database_text(data),
        "provider": _provider_text(data["provider"]),
        "scopes": ", ".join(data.get("scopes") or []),
        "memories": sum(by_type.values()),
        "episodes": counts.get("episodes", 0),
        "entities": counts.get("entities", 0),
        "edges": counts.get("edges", 0),
        "journal backlog": data.get("journal_backlog", 0),
        "journal retrying": _retrying_text(data.get("journal_retrying") or {}),
        "curation worker": _worker_text(data.get("curation_worker") or {}),
        "embeddings": f"{counts.get('embeddings', 0)} stored ({_vector_models(data)}) · "
        f"backend {embedding.get('configured', '-')}{_runtime_note(embedding)}",
        "embedding model": _model_text(embedding),
        "reranker": _reranker_text(data.get("reranker"), data.get("reranker_model")),
        "llm": data.get("llm") or "none (heuristics)",
        "bulletin": "none yet" if age is None else f"{age / 3600:.1f} h old",
    }
    rows = sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0]))
    return render.key_values(summary) + (
        "\n\n" + render.table(("type", "count"), rows) if rows else ""
    )


@cli.command()
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 100), default=None, help="Max results (default 8).")
@click.option(
    "--type", "types", type=_TypeChoice(), multiple=True, help="Only this type (repeatable)."
)
@click.option("--since", help="Only items from then on: 2026-03-01, 7d, 12h.")
@click.option("--until", help="Only items before then.")
@click.option(
    "--explain", is_flag=True, help="Show which signals found each result and how it was rescored."
)
@click.option("--no-episodes", is_flag=True, help="Only typed memories, not verbatim past turns.")
@pass_state
def recall(
    state: State,
    query: str,
    limit: int | None,
    types: Sequence[str],
    since: str | None,
    until: str | None,
    explain: bool,
    no_episodes: bool,
) -> None:
    """Search memory the way the agent does (keywords, meaning, entities, recency)."""
    query = storable(query)
    if not query.strip():
        raise InvalidInputError("the query is empty")
    if not state.stored():
        for value in (since, until):
            parse_time(value, 0.0)  # a time it cannot read is an error with or without memories
        state.note(state.nothing_yet())
        nothing = {"query": query, "count": 0, "results": [], "read_only": False}
        emit(state, {**nothing, "read_only_reason": None}, "No memories match.")
        return
    visible = state.visible  # a --user to look up is found before the model loads
    engine = state.engine(model=True)
    now = engine.clock()
    hits = engine.recall(
        query,
        scopes=visible,
        options=RecallOptions(
            limit=limit,
            types=[memory_type(t) for t in types],
            since=parse_time(since, now),
            until=parse_time(until, now),
            explain=explain,
            include_episodes=not no_episodes,
        ),
    )

    data = {
        "query": query,
        "count": len(hits),
        "results": [hit_dict(h) for h in hits],
        "read_only": engine.inspect.read_only,
        "read_only_reason": engine.inspect.read_only_reason,
    }
    reason = engine.inspect.read_only_reason
    if reason is not None and not state.json_mode:
        click.echo(
            f"note: {read_only_store(engine.inspect.location, reason)}; recall works, "
            "access counts are not updated",
            err=True,
        )
    emit(state, data, lambda: render.hit_lines(hits, explain=explain) or "No memories match.")


@cli.command()
@click.argument("text")
@click.option(
    "--type", "kind", type=_TypeChoice(), help="Memory type (default: guessed from the text)."
)
@click.option("--importance", type=click.FloatRange(0.0, 1.0), help="0..1 (default: by type).")
@click.option("--tags", help="Comma-separated tags.")
@pass_state
def remember(
    state: State, text: str, kind: str | None, importance: float | None, tags: str | None
) -> None:
    """Store one memory now (duplicates are merged; a newer fact about the same subject supersedes)."""
    text = storable(text)
    if not text.strip():
        raise InvalidInputError("nothing to remember: the text is empty")
    state.engine(create=True)
    scope = state.write_scope  # a --user to look up is found before the model loads
    engine = state.engine(model=True)
    tag_list = [t.strip() for t in storable(tags or "").split(",") if t.strip()]
    memory = engine.remember(
        text,
        scope=scope,
        options=RememberOptions(
            type=memory_type(kind) if kind else None,
            importance=importance,
            tags=tag_list,
            source=Source.TOOL,
            actor="cli",
        ),
    )
    emit(
        state,
        {"memory": memory_json(memory)},
        f"Stored #{memory.id} ({memory.type}): {memory.content}",
    )


@cli.command()
@click.argument("src", type=_ID)
@click.argument("dst", type=_ID)
@click.argument("relation", type=click.Choice(_RELATIONS))
@pass_state
def relate(state: State, src: int, dst: int, relation: str) -> None:
    """Link memory SRC to memory DST with a typed relation."""
    edge = state.engine(write=True).relate(
        src, dst, Relation(relation), scopes=state.own, actor="cli"
    )
    data = {
        "edge": {
            "id": edge.id,
            "source_id": edge.src_id,
            "target_id": edge.dst_id,
            "relation": str(edge.relation),
            "weight": edge.weight,
        }
    }
    emit(state, data, f"Linked #{edge.src_id} --{edge.relation}--> #{edge.dst_id}")


@cli.command()
@click.argument("memory_id", metavar="ID", type=_ID)
@click.argument("text")
@pass_state
def update(state: State, memory_id: int, text: str) -> None:
    """Replace memory ID with TEXT: a new version supersedes the old (which is kept as history)."""
    text = storable(text)
    if not text.strip():
        raise InvalidInputError("the new text is empty")
    own = state.own
    engine = state.engine(write=True, model=True)
    memory = engine.update(memory_id, text, scopes=own, actor="cli")
    emit(
        state,
        {"memory": memory_json(memory), "supersedes": memory_id},
        f"Stored #{memory.id}, superseding #{memory_id}: {memory.content}",
    )


@cli.command()
@click.argument("memory_id", metavar="ID", type=_ID)
@click.option("--reason", default="", help="Why (kept in the audit log).")
@pass_state
def forget(state: State, memory_id: int, reason: str) -> None:
    """Forget memory ID (soft delete: search skips it, the audit trail stays)."""
    memory = state.engine(write=True).forget(
        memory_id, scopes=state.own, reason=storable(reason) or "forgotten via CLI", actor="cli"
    )
    emit(
        state,
        {"forgotten": memory.id},
        f"Forgot #{memory.id}: {render.shorten(memory.content, 100)}",
    )


@cli.command()
@click.argument("memory_id", metavar="ID", type=_ID)
@pass_state
def show(state: State, memory_id: int) -> None:
    """A memory with its edges, provenance, entities and audit history."""
    if not state.stored():
        raise NotFoundError(f"no memory with id {memory_id}: {state.nothing_yet()}")
    engine = state.engine()
    detail = engine.inspect.show(memory_id, scopes=state.visible)
    emit(state, detail_json(detail), lambda: render.detail_text(detail, engine.clock()))


@cli.command()
@click.argument("memory_id", metavar="ID", type=int)
@pass_state
def release(state: State, memory_id: int) -> None:
    """Release memory ID from quarantine: it may be recalled and put in prompts again."""
    released = state.engine(write=True).release_quarantined(
        memory_id, scopes=(state.write_scope,), actor="cli"
    )
    emit(
        state,
        {"released": memory_id if released else None},
        f"Released #{memory_id}." if released else f"#{memory_id} was not quarantined.",
    )


@cli.command("list")
@click.option(
    "--type", "types", type=_TypeChoice(), multiple=True, help="Only this type (repeatable)."
)
@click.option("--all", "include_old", is_flag=True, help="Include superseded memories.")
@click.option(
    "--quarantined", is_flag=True, help="Only memories held back by the screen, with the reason."
)
@click.option("--limit", type=click.IntRange(1, 100_000), default=50, show_default=True)
@pass_state
def list_command(
    state: State, types: Sequence[str], include_old: bool, quarantined: bool, limit: int
) -> None:
    """The newest memories, as a table."""
    if not state.stored():
        state.note(state.nothing_yet())
        emit(
            state,
            {"count": 0, "memories": []},
            "No quarantined memories." if quarantined else "No memories.",
        )
        return
    engine = state.engine()
    if quarantined:
        held = engine.inspect.quarantined(state.visible)[:limit]
        emit(
            state,
            {
                "count": len(held),
                "memories": [{**memory_json(m), "quarantine": r} for m, r in held],
            },
            lambda: render.quarantine_table(held) or "No quarantined memories.",
        )
        return
    memories = engine.inspect.list_memories(
        state.visible,
        types=[memory_type(t) for t in types],
        current_only=not include_old,
        limit=limit,
    )
    emit(
        state,
        {"count": len(memories), "memories": [memory_json(m) for m in memories]},
        lambda: render.memories_table(memories) or "No memories.",
    )


# -- import / export -----------------------------------------------------------------------------------------
@cli.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "markdown", "jsonl", "locomo"]),
    default="auto",
    show_default=True,
    help="markdown = MEMORY.md/USER.md; jsonl = chat log; locomo = LoCoMo JSON.",
)
@click.option(
    "--target",
    type=click.Choice(["memory", "user"]),
    help="For markdown: which host file it is (default: from the file name).",
)
@click.option("--no-curate", is_flag=True, help="Only journal imported turns; curate them later.")
@pass_state
def import_command(state: State, path: Path, fmt: str, target: str | None, no_curate: bool) -> None:
    """Import MEMORY.md / USER.md, a JSONL chat log or a LoCoMo file (validated fully before writing)."""
    from . import importers

    # regular files only, bounded: /dev/zero or a FIFO must not hang us
    importers.check_import_file(path)
    kind = importers.detect_format(path) if fmt == "auto" else fmt
    if kind == "markdown":
        from . import markdown

        markdown.read_entries(path)  # validate before touching the database
        state.engine(create=True)
        scope = state.write_scope
        report = markdown.import_file(state.engine(model=True), path, scope=scope, target=target)
        data = {"format": kind, **asdict(report)}
        emit(
            state,
            data,
            f"Imported {report.imported} of {report.entries} entries from {path.name} "
            f"({report.skipped} already known).",
        )
        return
    plan = importers.parse_file(path, kind)
    state.engine(create=True)
    scope = state.write_scope
    engine = state.engine(model=not no_curate)
    with progress_bar(state, "journaling", len(plan.turns)) as update_bar:
        done = [0]

        def step(n: int) -> None:
            done[0] += n
            update_bar(done[0], len(plan.turns))

        applied = importers.apply_plan(engine, plan, scope=scope, progress=step)
    curated = 0 if no_curate else _curate(state, engine)
    data = {
        "format": kind,
        "path": str(path),
        "turns": applied.journaled,
        "skipped": applied.skipped,
        "sessions": plan.sessions,
        "curated": curated,
        "memories": sum(engine.inspect.counts(state.visible).values()),
    }
    skipped = f" ({applied.skipped} already imported)" if applied.skipped else ""
    emit(
        state,
        data,
        f"Imported {applied.journaled} turns{skipped} in {plan.sessions} sessions from "
        f"{path.name}; curated {curated} journal rows ({data['memories']} memories now).",
    )


def _curate(state: State, engine: Bowerbird) -> int:
    """Run the curator on this thread over every pending journal row, with a progress bar on a terminal."""
    total = engine.inspect.journal_backlog()
    done = 0
    with progress_bar(state, "curating", total) as update_bar:
        while True:
            n = engine.curate_now(CURATE_BATCH)
            if n <= 0:
                break
            done += n
            update_bar(done, max(total, done))
    return done


@cli.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write JSONL here (default: standard output).",
)
@click.option(
    "--markdown",
    "markdown_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write MEMORY.md and USER.md in the host's format into this folder instead.",
)
@click.option(
    "--within-limits", is_flag=True, help="With --markdown: cut files to the host's size limits."
)
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite existing files (the profile's markdown may then also go "
    "into the host's memory folder; a user's never does).",
)
@pass_state
def export(
    state: State, output: Path | None, markdown_dir: Path | None, within_limits: bool, force: bool
) -> None:
    """Export one owner's memories: the --user's own (never the shared ones with them), else the profile's."""
    from . import exporter

    own = state.own
    shared = not own[0].startswith("user:")
    home = state.config().hermes_home
    stored = state.stored()
    if not stored:
        state.note(state.nothing_yet())
    if markdown_dir is not None:
        from . import markdown

        exporter.check_markdown_target(
            markdown_dir, ("MEMORY.md", "USER.md"), hermes_home=home, shared=shared, force=force
        )
        counts = (
            markdown.export_markdown(
                state.engine(), markdown_dir, scopes=own, within_limits=within_limits
            )
            if stored
            else markdown.write_markdown(markdown_dir, [], within_limits=within_limits)
        )
        emit(
            state,
            {"folder": str(markdown_dir), "scopes": list(own), "entries": counts},
            "\n".join(f"Wrote {n} entries to {markdown_dir / name}" for name, n in counts.items()),
        )
        return
    if output is not None:
        exporter.check_file_target(output, hermes_home=home, force=force)
    records = list(state.engine().inspect.export_records(own)) if stored else []
    kinds: dict[str, int] = {}
    for record in records:
        kinds[str(record["kind"])] = kinds.get(str(record["kind"]), 0) + 1
    if output is not None:
        _write_jsonl(output, records)
        emit(
            state,
            {"path": str(output), "scopes": list(own), "counts": kinds},
            f"Wrote {len(records)} records "
            f"to {output} ({', '.join(f'{n} {k}s' for k, n in kinds.items()) or 'nothing'}).",
        )
    elif state.json_mode:
        emit(state, {"scopes": list(own), "counts": kinds, "records": records})
    else:
        for record in records:
            click.echo(json.dumps(record, ensure_ascii=False, default=_json_default))


def _write_jsonl(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, default=_json_default) + "\n")
    os.replace(tmp, path)


# -- maintenance ---------------------------------------------------------------------------------------------
@cli.command()
@click.argument("job", required=False)
@click.option("--dry-run", is_flag=True, help="Report what would change without changing it.")
@pass_state
def maintain(state: State, job: str | None, dry_run: bool) -> None:
    """Run maintenance now: every job, or one (decay, prune, associate, consolidate, bulletin...)."""
    engine = state.engine(model=True)
    with progress_bar(state, f"maintain {job or 'all'}", 1) as update_bar:
        report = engine.admin.maintain(job, dry_run=dry_run, progress=update_bar)
    emit(
        state,
        {"job": job or "all", "dry_run": dry_run, "report": report},
        lambda: ("(dry run) " if dry_run else "") + _report_text(report),
    )


def _report_text(report: Mapping[str, Any]) -> str:
    lines = []
    for key, value in report.items():
        if isinstance(value, Mapping):
            inner = ", ".join(f"{k} {v}" for k, v in value.items()) or "nothing to do"
            lines.append(f"{key}: {inner}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines) or "nothing to do"


@cli.command()
@click.option("--force", is_flag=True, help="Regenerate even if memory has not changed.")
@pass_state
def bulletin(state: State, force: bool) -> None:
    """The short briefing the agent gets at session start: who the user is and what is going on."""
    if not state.stored():
        state.note(state.nothing_yet())
        emit(state, {"bulletin": None}, "No bulletin yet: nothing is remembered in this scope.")
        return
    engine = state.engine()
    result = engine.bulletin(state.write_scope, visible=state.visible, force=force)
    if result is None:
        emit(state, {"bulletin": None}, "No bulletin yet: nothing is remembered in this scope.")
        return
    data = {"bulletin": bulletin_dict(result)}
    emit(state, data, result.text)


@cli.command()
@pass_state
def reindex(state: State) -> None:
    """Embed every memory and episode that lacks a vector from the configured model, replacing the vectors of
    another model (recall leaves vectors out until none is left). Stopped midway, a rerun resumes."""
    engine = state.engine()
    engine.admin.load_model(reindex_in_background=False)
    with progress_bar(state, "embedding", 1) as update_bar:
        count = engine.admin.reindex(progress=update_bar)
    info = engine.admin.model_status()
    model, left = info.get("model"), dict(info.get("other_models") or {})  # type: ignore[call-overload]
    text = f"Embedded {count} items with {model}."
    if left:
        text += f" Vectors of other models remain ({_counts_text(left)}): run it again."
    emit(state, {"embedded": count, "model": model, "other_models": left}, text)


def _counts_text(counts: Mapping[str, Any]) -> str:
    return ", ".join(f"{n} by {name}" for name, n in counts.items())


@cli.command()
@click.option(
    "--repair",
    is_flag=True,
    help="Fix what can be fixed: salvage a damaged file into a new one (the "
    "old one is kept, renamed with the time), rebuild the full-text index, drop orphans, embed what is "
    "missing. Stop Hermes first.",
)
@pass_state
def doctor(state: State, repair: bool) -> None:
    """Check the database: SQLite integrity, full-text and vector index consistency, orphan rows."""
    from . import recovery

    config = state.config()
    if config.database_url:  # a server keeps its own files: only the store's checks apply
        data: dict[str, Any] = {"path": shown(config.database_url)}
        _doctor_engine(state, data, repair)
        _finish_doctor(state, data)
        return
    path = config.db_path
    check = recovery.check_file(path)
    if not check.exists:
        emit(
            state,
            {"path": str(path), "exists": False, "healthy": True, "problems": []},
            f"Nothing to check: {state.nothing_yet()}.",
        )
        return
    data = {"path": str(path), "file": _file_json(check)}
    if not check.healthy:
        data["problems"] = [_file_problem(check)]
        if not repair:
            data["healthy"] = False
            _finish_doctor(state, data)
            return
        salvage = recovery.recover(path)
        data["salvage"] = _salvage_json(salvage)
        if not salvage.repaired:
            data["healthy"] = False
            _finish_doctor(state, data)
            return
    _doctor_engine(state, data, repair)
    _finish_doctor(state, data)


def _doctor_engine(state: State, data: dict[str, Any], repair: bool) -> None:
    """The checks that need the store open (full-text, orphans, vectors); with `repair`, fix and check again."""
    engine = state.engine()
    if repair:
        engine.admin.load_model()
    report = engine.admin.doctor(repair=repair)
    problems = _doctor_problems(report)
    if repair:
        after = _doctor_problems(engine.admin.doctor(repair=False))
        data["problems_before"] = [*data.get("problems", []), *problems]
        problems = after
        data["repaired"] = not after
    data.update({"report": report, "problems": problems, "healthy": not problems})


def _finish_doctor(state: State, data: Mapping[str, Any]) -> None:
    emit(state, data, lambda: _doctor_text(data))
    if not data.get("healthy"):
        sys.exit(1)


def _file_json(check: Any) -> dict[str, Any]:
    return {
        "header_ok": check.header_ok,
        "integrity": list(check.integrity),
        "problem": check.problem,
    }


def _file_problem(check: Any) -> str:
    if check.problem:
        return str(check.problem)
    return "integrity: " + "; ".join(check.integrity)


def _salvage_json(report: Any) -> dict[str, Any]:
    return {
        "repaired": report.repaired,
        "header_rebuilt": report.header_rebuilt,
        "kept_as": str(report.kept_as) if report.kept_as else None,
        "recovered": dict(report.recovered),
        "lost": {k: v for k, v in report.lost.items() if v},
        "integrity": list(report.integrity),
        "note": report.note,
    }


def _doctor_problems(report: Mapping[str, Any]) -> list[str]:
    problems = []
    integrity = report.get("integrity") or []
    if list(integrity) != ["ok"]:
        problems.append("integrity: " + "; ".join(str(x) for x in integrity))
    fts = report.get("fts") or {}
    problems += [
        f"full-text index {name} is out of step" for name, ok in dict(fts).items() if not ok
    ]
    orphans = report.get("orphans") or {}
    problems += [f"{n} orphan {name}" for name, n in dict(orphans).items() if n]
    return problems


def _doctor_text(data: Mapping[str, Any]) -> str:
    salvage = data.get("salvage")
    problems = [f"  - {p}" for p in data.get("problems") or []]
    if "repaired" in data:  # --repair ran on a store that opens
        before = [f"  - {p}" for p in data.get("problems_before") or []]
        lines = ["Problems found:", *before] if before else []
        lines += [_salvage_text(salvage)] if salvage else []
        lines += (
            ["All checks passed."]
            if not before
            else ["Repaired: every check passes now."]
            if data["repaired"]
            else ["Still damaged after repair:", *problems]
        )
    else:
        lines = ["Problems found:", *problems] if problems else ["All checks passed."]
        if salvage:
            lines.append(_salvage_text(salvage))
        elif problems:
            lines.append("Run `bowerbird doctor --repair` to fix what can be fixed.")
    vectors = dict((data.get("report") or {}).get("vectors") or {})
    if vectors:
        lines.append("vectors: " + ", ".join(f"{k} {v}" for k, v in vectors.items()))
    return "\n".join(lines)


def _salvage_text(salvage: Mapping[str, Any]) -> str:
    recovered = dict(salvage.get("recovered") or {})
    lost = dict(salvage.get("lost") or {})
    if not salvage.get("repaired"):
        return f"Salvage failed: {salvage.get('note') or 'the new file does not pass integrity_check'}."
    text = (
        f"Salvaged the damaged file into a new one: {recovered.get('memories', 0)} memories, "
        f"{recovered.get('episodes', 0)} episodes, {recovered.get('journal', 0)} journal rows kept"
    )
    if lost:
        text += "; skipped unreadable parts: " + ", ".join(f"{k} {n}" for k, n in lost.items())
    if salvage.get("header_rebuilt"):
        text += "; the file header was rebuilt"
    return text + f". The damaged original is kept as {salvage.get('kept_as')}."


@cli.command()
@click.argument("dest", type=click.Path(dir_okay=False, path_type=Path))
@pass_state
def backup(state: State, dest: Path) -> None:
    """Copy the database to DEST with SQLite's online backup (safe while an agent is running)."""
    if dest.exists():
        raise InvalidInputError(f"{dest} already exists; choose a new file name")
    if not state.stored():
        raise DatabaseError(f"nothing to back up: {state.nothing_yet()}")
    state.engine().admin.backup(dest)
    emit(state, {"path": str(dest), "bytes": dest.stat().st_size}, f"Backed up to {dest}.")


# -- host integration, demo, MCP -----------------------------------------------------------------------------
@cli.command("hermes-install")
@pass_state
def hermes_install(state: State) -> None:
    """Make bowerbird the memory provider of the Hermes home (--hermes-home, $HERMES_HOME or ~/.hermes)."""
    from . import hermes_setup

    report = hermes_setup.install(state.config().hermes_home)
    data = {
        "plugin_dir": str(report.plugin_dir),
        "config": str(report.config_path),
        "backup": str(report.backup_path) if report.backup_path else None,
        "previous_provider": report.previous_provider,
    }
    emit(
        state,
        data,
        f"Installed: {report.plugin_dir}\nmemory.provider set to bowerbird in {report.config_path}"
        + (f" (backup: {report.backup_path})" if report.backup_path else ""),
    )


@cli.command("hermes-uninstall")
@pass_state
def hermes_uninstall(state: State) -> None:
    """Switch bowerbird off again and restore the previous provider (memories stay on disk)."""
    from . import hermes_setup

    report = hermes_setup.uninstall(state.config().hermes_home)
    data = {
        "plugin_dir": str(report.plugin_dir),
        "config": str(report.config_path),
        "restored_provider": report.previous_provider,
    }
    emit(
        state,
        data,
        f"Removed {report.plugin_dir}; memory provider is now "
        f"{report.previous_provider or 'the built-in memory only'}. Memories are kept.",
    )


@cli.command()
@click.option(
    "--fixture",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Conversation to replay (default: the shipped demo conversation).",
)
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    help="Use this folder as HERMES_HOME and keep it afterwards.",
)
@click.option(
    "--postgres",
    is_flag=True,
    help="Keep the memory in a private PostgreSQL (with pgvector) started for the demo and removed after it; "
    "--database-url URL uses an empty database of yours instead.",
)
@pass_state
def demo(state: State, fixture: Path | None, keep: Path | None, postgres: bool) -> None:
    """Replay a multi-session conversation through the provider offline and show what bowerbird made of it."""
    from .demo import run_demo

    echo = None if state.json_mode else click.echo
    if postgres and not state.database_url:
        from .local_server import local_server

        with local_server() as address:
            result = run_demo(fixture=fixture, home=keep, echo=echo, database_url=address)
    else:
        result = run_demo(
            fixture=fixture, home=keep, echo=echo, database_url=state.database_url or ""
        )
    if state.json_mode:
        emit(state, result)


@cli.command()
@pass_state
def mcp(state: State) -> None:
    """Serve memory over MCP on stdin/stdout (memory_search, memory_store, ...)."""
    from .mcp_server import serve

    user, platform = state.user_and_platform
    for note in state.notes:  # stdout carries the protocol
        click.echo(f"note: {note}", err=True)
    state.close()  # the server opens the store itself, for as long as it runs
    serve(state.config(), user=user, platform=platform, profile=state.profile)


@cli.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Port on 127.0.0.1 (default 8767, or a free one when that is taken; 0 = any free port).",
)
@click.option("--no-open", is_flag=True, help="Only print the link; do not open a browser.")
@pass_state
def serve(state: State, port: int | None, no_open: bool) -> None:
    """Browse, search and fix memory in the browser (127.0.0.1 only; the printed link carries a fresh token).

    Shows every scope in the file, or only what --user / --profile would see when given."""
    try:
        from .web import serve as serve_inspector
    except ImportError as exc:
        raise ConfigError(
            f"the inspector needs its extra: pip install 'hermes-bowerbird[web]' ({exc})"
        ) from exc
    if not state.stored():
        raise DatabaseError(f"nothing to inspect: {state.nothing_yet()}")
    fixed = state.visible if state.user or state.profile else None
    engine = state.engine(model=True)
    serve_inspector(
        engine,
        scopes=fixed,
        profile_scope=scopes.profile_scope(state.profile),
        port=port,
        open_browser=not no_open,
        announce=lambda url: emit(
            state,
            {"url": url},
            f"Memory inspector: {url}\n(open this link; it carries a fresh "
            "access token. Ctrl+C stops.)",
        ),
    )


# -- the store itself: its schema, and moving it between backends ---------------------------------------------
@cli.command()
@click.option(
    "--list",
    "only_list",
    is_flag=True,
    help="Show the steps and which are applied; change nothing.",
)
@pass_state
def migrate(state: State, only_list: bool) -> None:
    """Show the store's schema steps and apply those pending (they are also applied whenever a host opens it,
    under a lock, so this is for looking first or upgrading ahead of the hosts)."""
    from . import admin

    target = state.config().store_target
    applied = [] if only_list else admin.migrate(target)
    steps = admin.schema_steps(target)
    data = {
        "store": shown(target),
        "applied_now": applied,
        "steps": [{"name": name, "applied": done} for name, done in steps],
    }

    def text() -> str:
        lines = [f"Schema of {shown(target)}:"]
        lines += [f"  {'applied' if done else 'pending'}  {name}" for name, done in steps]
        waiting = sum(1 for _, done in steps if not done)
        if only_list:
            lines.append(
                f"{waiting} pending; `bowerbird migrate` applies them."
                if waiting
                else "Up to date."
            )
        else:
            lines.append(f"Applied now: {', '.join(applied)}." if applied else "Nothing to apply.")
        return "\n".join(lines)

    emit(state, data, text)


@cli.group(cls=BowerbirdGroup)
def store() -> None:
    """Move the whole store between backends (a SQLite file and a PostgreSQL server)."""


@store.command("copy")
@click.option(
    "--to",
    "target",
    required=True,
    metavar="TARGET",
    help="A new SQLite file (FILE.db) or an empty PostgreSQL database (postgresql://...).",
)
@pass_state
def copy(state: State, target: str) -> None:
    """Copy everything in this store (every table, vectors, audit) into TARGET, and check the counts."""
    if not is_server_address(target):
        path = Path(target).expanduser()
        if path.exists() and path.stat().st_size > 0:
            raise InvalidInputError(f"{path} already exists; choose a new file")
        target = str(path)
    engine = state.engine()
    with progress_bar(
        state, "copying", 1
    ) as update:  # the copy reports its total with the first rows
        copied = engine.admin.copy_store(target, progress=update)
    emit(
        state,
        {"from": engine.inspect.location, "to": shown(target), "rows": copied},
        lambda: (
            f"Copied {sum(copied.values()):,} rows to {shown(target)}; every table's count matches:\n"
            + "\n".join(f"  {name:18} {n:>10,}" for name, n in copied.items())
        ),
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="bowerbird")


if __name__ == "__main__":
    main()
