"""`bowerbird demo`: replay a multi-session conversation through the real provider hooks, offline; show the result."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from . import render
from .addresses import shown
from .errors import BowerbirdError, InvalidInputError
from .options import RecallOptions
from .types import MemoryType

if TYPE_CHECKING:
    from .engine import Bowerbird
    from .provider import BowerbirdProvider

Echo = Callable[[str], None]
FIXTURE_NAME = "demo_conversation.json"
# torch: the demo runs in a throwaway home, where the int8 ONNX model would be built anew every run
DEMO_SETTINGS = {"embedding_backend": "torch", "llm_backend": "none", "maintenance_enabled": False}
_SECRET_ENV = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
)
_RULE = "─" * 72


@dataclass(frozen=True)
class DemoSession:
    session_id: str
    title: str
    turns: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class DemoScript:
    user: str
    sessions: tuple[DemoSession, ...]
    questions: tuple[str, ...]


def default_fixture() -> Path:
    """The shipped conversation: inside the wheel, or in the source checkout's fixtures/ folder."""
    shipped = resources.files("hermes_bowerbird") / "fixtures" / FIXTURE_NAME
    if shipped.is_file():
        return Path(str(shipped))
    return Path(__file__).resolve().parent.parent / "fixtures" / FIXTURE_NAME


def load_script(path: Path) -> DemoScript:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        sessions = tuple(
            DemoSession(
                str(s["session_id"]),
                str(s.get("title", "")),
                tuple((str(t["user"]), str(t["assistant"])) for t in s["turns"]),
            )
            for s in data["sessions"]
        )
        return DemoScript(
            str(data.get("user", "the user")), sessions, tuple(str(q) for q in data["questions"])
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInputError(f"{path}: not a demo conversation ({exc})") from exc


@contextmanager
def offline_environment(home: Path) -> Iterator[None]:
    """HERMES_HOME at the demo folder, no API keys, no hub downloads; everything restored afterwards."""
    saved = dict(os.environ)
    try:
        for name in list(os.environ):
            if name in _SECRET_ENV or name.startswith("BOWERBIRD_"):
                del os.environ[name]
        os.environ.update(
            {
                "HERMES_HOME": str(home),
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false",
            }
        )
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_demo(
    *,
    fixture: Path | None = None,
    home: Path | None = None,
    echo: Echo | None = print,
    database_url: str = "",
) -> dict[str, Any]:
    """Run the whole demo; prints through `echo` (None = silent) and returns what it showed as data. With a
    `database_url` the memory lives in that PostgreSQL database (it must hold no memory yet)."""
    script = load_script(fixture or default_fixture())
    say: Echo = echo or (lambda _text: None)
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        return _run_in(home, script, say, database_url)
    with tempfile.TemporaryDirectory(prefix="bowerbird-demo-") as tmp:
        return _run_in(Path(tmp), script, say, database_url)


def _run_in(home: Path, script: DemoScript, say: Echo, database_url: str) -> dict[str, Any]:
    started = time.monotonic()
    settings = home / "bowerbird" / "config.yaml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    chosen = {**DEMO_SETTINGS, **({"database_url": database_url} if database_url else {})}
    settings.write_text(yaml.safe_dump(chosen), encoding="utf-8")
    with offline_environment(home):
        from .provider import BowerbirdProvider

        provider = BowerbirdProvider()
        where = f"memory in {shown(database_url)}" if database_url else "local model"
        say(f"bowerbird demo · HERMES_HOME={home} · {where}, no API key, offline\n")
        try:
            replayed = _replay(provider, script, home, say)
            engine = provider.engine
            assert engine is not None
            engine.flush(timeout=60.0)
            engine.admin.wait_model(60.0)
            result = _report(engine, provider.write_scope, provider.visible, script, say)
        finally:
            provider.shutdown()
    result.update(
        {"home": str(home), "turns": replayed, "seconds": round(time.monotonic() - started, 1)}
    )
    say(
        f"{_RULE}\nDone in {result['seconds']} s: {replayed} turns in {len(script.sessions)} sessions, "
        f"{sum(len(v) for v in result['captured'].values())} memories."
    )
    return result


def _replay(provider: BowerbirdProvider, script: DemoScript, home: Path, say: Echo) -> int:
    """Drive the provider the way Hermes does: initialize, per turn prefetch + sync_turn, end and switch sessions."""
    turns = 0
    for n, session in enumerate(script.sessions):
        if n == 0:
            provider.initialize(
                session.session_id, hermes_home=str(home), platform="cli", agent_context="primary"
            )
            if provider.engine is None:
                raise BowerbirdError("the memory provider failed to start (the log above says why)")
            if provider.engine.inspect.scopes():
                raise InvalidInputError(
                    f"{provider.engine.inspect.location} already holds memory; "
                    "the demo replays its conversation into an empty store"
                )
            provider.system_prompt_block()
        say(f"session {n + 1}: {session.title or session.session_id} ({len(session.turns)} turns)")
        messages: list[dict[str, str]] = []
        for user, assistant in session.turns:
            context = provider.prefetch(user, session_id="")
            if context.strip() and n > 0 and not messages:
                say(_indent(f"prefetch for “{render.shorten(user, 60)}”:\n{context}", 4))
            messages += [
                {"role": "user", "content": user},
                {"role": "assistant", "content": assistant},
            ]
            provider.sync_turn(
                user, assistant, session_id=session.session_id, messages=list(messages)
            )
            turns += 1
        provider.on_session_end(messages)
        if n + 1 < len(script.sessions):
            provider.on_session_switch(
                script.sessions[n + 1].session_id, parent_session_id=session.session_id, reset=True
            )
            provider.system_prompt_block()
    return turns


def _report(
    engine: Bowerbird, scope: str, visible: tuple[str, ...], script: DemoScript, say: Echo
) -> dict[str, Any]:
    captured = _captured(engine, visible, say)
    answers = _recall(engine, visible, script.questions, say)
    superseded = _superseded(engine, visible, say)
    bulletin = engine.bulletin(scope, visible=visible, force=True)
    say(f"{_RULE}\nBulletin (what the agent reads at the start of the next session)\n{_RULE}")
    say(bulletin.text if bulletin is not None else "(none)")
    return {
        "captured": captured,
        "recall": answers,
        "superseded": superseded,
        "bulletin": bulletin.text if bulletin is not None else None,
    }


def _captured(engine: Bowerbird, visible: Sequence[str], say: Echo) -> dict[str, list[str]]:
    memories = engine.inspect.list_memories(visible, current_only=False, order="oldest", limit=None)
    by_type: dict[str, list[str]] = {}
    say(f"\n{_RULE}\nCaptured memories by type ({len(memories)})\n{_RULE}")
    for kind in MemoryType:
        items = [m for m in memories if m.type == kind]
        if not items:
            continue
        by_type[str(kind)] = [m.content for m in items]
        say(f"{kind} ({len(items)})")
        for m in items:
            mark = f"  [superseded by #{m.superseded_by}]" if m.superseded_by is not None else ""
            say(f"  #{m.id:<3} {render.shorten(m.content, 90)}{mark}")
    return by_type


def _recall(
    engine: Bowerbird, visible: Sequence[str], questions: Sequence[str], say: Echo
) -> list[dict[str, Any]]:
    from .serialize import hit_dict

    say(f"{_RULE}\nRecall (top 3, with the reasons each result ranked)\n{_RULE}")
    out = []
    for question in questions:
        hits = engine.recall(question, scopes=visible, options=RecallOptions(limit=3, explain=True))
        say(f"? {question}")
        say(_indent(render.hit_lines(hits, explain=True) or "(nothing)", 2))
        out.append({"question": question, "results": [hit_dict(h) for h in hits]})
    return out


def _superseded(engine: Bowerbird, visible: Sequence[str], say: Echo) -> list[Mapping[str, Any]]:
    memories = engine.inspect.list_memories(visible, current_only=False, order="oldest", limit=None)
    by_id = {m.id: m for m in memories}
    stale = [m for m in memories if m.superseded_by is not None]
    say(f"{_RULE}\nSuperseded facts (kept as history, demoted in recall)\n{_RULE}")
    out: list[Mapping[str, Any]] = []
    for old in stale:
        new = by_id.get(old.superseded_by or 0)
        say(
            f"  #{old.id} “{render.shorten(old.content, 60)}”\n     → #{old.superseded_by} "
            f"“{render.shorten(new.content if new else '?', 60)}” (valid until {render.when(old.valid_until)})"
        )
        out.append(
            {
                "old": old.content,
                "new": new.content if new else None,
                "old_id": old.id,
                "new_id": old.superseded_by,
            }
        )
    if not stale:
        say("  (none)")
    return out


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line for line in text.splitlines())
