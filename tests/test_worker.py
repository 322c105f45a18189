"""The curation worker process: one per memory home across Hermes processes, crash-resume, exit with its parents."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from crash_turns import turn

from hermes_bowerbird import filelock
from hermes_bowerbird.config import load_config
from hermes_bowerbird.curation import worker as worker_module
from hermes_bowerbird.curation.capture import MAX_WAITING
from hermes_bowerbird.curation.worker import (
    Worker,
    _read_spec,
    parents_lock_path,
    settings_of,
    worker_lock_path,
    worker_state,
    worker_threads,
)
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import TurnCapture
from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind

if TYPE_CHECKING:
    from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder

REPO = Path(__file__).resolve().parent.parent
SCOPE = "profile:default"
WAIT = 120.0  # generous "does not hang" bound: a worker loads the embedding model before curating

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="the worker election uses POSIX file locks"
)

# A Hermes process: a provider over HERMES_HOME in process mode; captures turns when told, prints the worker's pid
PARENT = textwrap.dedent("""
    import json, sys, time
    from hermes_bowerbird.provider import BowerbirdProvider
    from hermes_bowerbird.curation.worker import worker_state
    home, session, texts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    provider = BowerbirdProvider()
    provider.initialize(session, hermes_home=home, platform="cli")
    for text in texts:
        provider.sync_turn(text, "Noted.", session_id=session)
    deadline = time.monotonic() + 120
    # the worker takes its lock before it writes its pid there: wait for both, and print what was seen
    state = worker_state(provider.engine.store.path)
    while not (state.alive and state.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
        state = worker_state(provider.engine.store.path)
    print(json.dumps({"pid": state.pid}), flush=True)
    if sys.stdin.readline().strip() == "flush":
        print(json.dumps({"flushed": provider.engine.flush(120)}), flush=True)
        sys.stdin.readline()
    provider.shutdown()
""")


def _env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HERMES_HOME": str(home),
        "BOWERBIRD_CURATION_MODE": "process",
        "BOWERBIRD_LLM_BACKEND": "none",
        "BOWERBIRD_MAINTENANCE_ENABLED": "false",
        "BOWERBIRD_IMPORT_MARKDOWN": "false",
    }


def _parent(home: Path, session: str, texts: list[str] = ()) -> subprocess.Popen[str]:  # type: ignore[assignment]
    return subprocess.Popen(
        [sys.executable, "-c", PARENT, str(home), session, json.dumps(list(texts))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(home),
        cwd=REPO,
    )


def _read(proc: subprocess.Popen[str]) -> dict[str, object]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, f"the parent process ended early (exit {proc.poll()})"
    return dict(json.loads(line))


def _tell(proc: subprocess.Popen[str], word: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(word + "\n")
    proc.stdin.flush()


def _running(pid: int) -> bool:
    """Whether `pid` is a live (not zombie) process."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _until(predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _workers_of(home: Path) -> list[int]:
    """Pids of live worker processes started for this HERMES_HOME."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
            env = (proc / "environ").read_bytes()
        except OSError:
            continue
        if (
            b"-m\0hermes_bowerbird.curation.worker" in cmd
            and f"HERMES_HOME={home}\0".encode() in env
            and _running(int(proc.name))
        ):
            found.append(int(proc.name))
    return found


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def _engine(home: Path) -> Iterator[Bowerbird]:
    """An engine of this (test) process in process mode, its worker started by it."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in _env(home).items():
            if key.startswith("BOWERBIRD_"):
                patch.setenv(key, value)
        bowerbird = Bowerbird(load_config(home))
    yield bowerbird
    bowerbird.shutdown()


@pytest.fixture
def engine(home: Path) -> Iterator[Bowerbird]:
    """A fresh memory home's engine (for tests that kill its worker or shut it down)."""
    yield from _engine(home)


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("shared-home")


@pytest.fixture(scope="module")
def shared(shared_home: Path) -> Iterator[Bowerbird]:
    """One engine and worker for the tests that only add to the memory home (a worker loads a model: seconds)."""
    yield from _engine(shared_home)


def _db(home: Path) -> Path:
    return home / "bowerbird" / "memory.db"


def _journal(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT status, count(*) FROM journal GROUP BY status").fetchall())
    finally:
        conn.close()


def _duplicate_episodes(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(
            conn.execute(
                "SELECT count(*) - count(DISTINCT journal_id || '/' || role || '/' || chunk_index) "
                "FROM episodes"
            ).fetchone()[0]
        )
    finally:
        conn.close()


def test_the_engine_curates_in_a_worker_process(shared: Bowerbird) -> None:
    engine = shared
    assert engine.curation_mode == "process"


def test_the_worker_is_another_process(shared: Bowerbird) -> None:
    engine = shared
    assert _until(lambda: worker_state(engine.store.path).alive)
    assert worker_state(engine.store.path).pid not in (None, os.getpid())


def test_the_worker_curates_what_this_process_captured(shared: Bowerbird) -> None:
    engine = shared
    engine.capture_turn(
        TurnCapture("My sister Ines lives in Lisbon.", "Noted.", scope=SCOPE, session_id="s1")
    )
    assert engine.flush(WAIT)
    assert _journal(engine.store.path).get("pending", 0) == 0


def test_status_shows_the_worker(shared: Bowerbird) -> None:
    engine = shared
    assert _until(lambda: worker_state(engine.store.path).alive)
    status = engine.status()["curation_worker"]
    assert isinstance(status, dict)
    assert (status["mode"], status["alive"], status["pid"]) == (
        "process",
        True,
        worker_state(engine.store.path).pid,
    )


def test_the_parent_sees_new_vectors_after_the_worker_curates(shared: Bowerbird) -> None:
    engine = shared
    assert engine.embeddings.wait_ready(WAIT)
    # the index is loaded (empty) before the worker writes
    engine.recall("anything at all", scopes=[SCOPE])
    engine.capture_turn(
        TurnCapture(
            "I keep bees on the roof of my building in Porto.",
            "Lovely.",
            scope=SCOPE,
            session_id="s1",
        )
    )
    assert engine.flush(WAIT)
    memories = [m.id for m in engine.inspect.list_memories([SCOPE])]
    engine.recall("insects", scopes=[SCOPE])
    assert sorted(engine.vectors.vectors(ItemKind.MEMORY, memories)) == sorted(memories)


def _blocked_capture(engine: Bowerbird, text: str, session: str) -> float:
    """Capture a turn while another connection holds the write lock for 0.5 s; seconds the capture took."""
    blocker = sqlite3.connect(engine.store.path, isolation_level=None, timeout=30)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        engine.capture_turn(TurnCapture(text, "Noted.", scope=SCOPE, session_id=session))
        took = time.monotonic() - started
        time.sleep(0.5)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    return took


def test_a_turn_captured_while_another_process_writes_does_not_wait(shared: Bowerbird) -> None:
    engine = shared
    # the lock is held 0.5 s
    assert _blocked_capture(engine, "I moved to Oslo in March.", "blocked-1") < 0.4


def test_a_turn_captured_while_another_process_writes_reaches_the_journal(
    shared: Bowerbird,
) -> None:
    engine = shared
    _blocked_capture(engine, "I moved to Oslo in March.", "blocked-2")
    assert engine.wait_captured(30)
    assert engine.store.journal.next_turn_index("blocked-2") == 1  # its one row is in the journal


def test_capture_waits_rather_than_holding_more_rows_than_shutdown_can_drain(
    shared: Bowerbird,
) -> None:
    engine = shared
    blocker = sqlite3.connect(engine.store.path, isolation_level=None, timeout=30)
    blocker.execute("BEGIN IMMEDIATE")
    done = threading.Event()

    def capture_many() -> None:
        for i in range(MAX_WAITING + 5):
            engine.capture_turn(
                TurnCapture(f"backlog turn {i}", "ok", scope=SCOPE, session_id="backlog")
            )
        done.set()

    writer = threading.Thread(target=capture_many)
    writer.start()
    try:
        assert not done.wait(1.0)  # more rows than the thread may hold: capture waits
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    writer.join(WAIT)
    assert engine.wait_captured(WAIT)
    assert engine.store.journal.next_turn_index("backlog") == MAX_WAITING + 5  # none dropped


def test_a_killed_worker_is_replaced_and_resumes_its_rows(engine: Bowerbird) -> None:
    count = 300
    for i in range(count):
        user, assistant = turn(i)
        engine.capture_turn(
            TurnCapture(user, assistant, scope=SCOPE, session_id="crash", turn_index=i)
        )
    assert _until(lambda: _journal(engine.store.path).get("done", 0) >= 20)
    first = worker_state(engine.store.path).pid
    assert first is not None
    os.kill(first, signal.SIGKILL)  # mid-batch: the journal still holds pending rows
    assert _journal(engine.store.path).get("pending", 0) > 0
    assert engine.flush(WAIT)
    assert (_journal(engine.store.path), _duplicate_episodes(engine.store.path)) == (
        {"done": count},
        0,
    )


def test_a_killed_worker_gives_way_to_a_new_one(engine: Bowerbird) -> None:
    assert _until(lambda: worker_state(engine.store.path).alive)
    first = worker_state(engine.store.path).pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    assert _until(lambda: worker_state(engine.store.path).pid not in (None, first))


def test_two_hermes_processes_elect_one_worker(home: Path) -> None:
    a, b = _parent(home, "a"), _parent(home, "b")
    try:
        pids = {_read(a)["pid"], _read(b)["pid"]}
        time.sleep(1.0)  # a worker that lost the race has exited by now
        assert (len(pids), _workers_of(home)) == (1, list(pids))
    finally:
        for proc in (a, b):
            proc.kill()
            proc.wait()


def test_the_worker_exits_with_its_last_parent(home: Path) -> None:
    a, b = _parent(home, "a"), _parent(home, "b")
    pid = int(str(_read(a)["pid"]))
    _read(b)
    a.kill()
    a.wait()
    time.sleep(1.0)
    assert _running(pid)  # b still uses the memory home
    b.kill()  # crashes: the kernel drops its lock, the worker notices
    b.wait()
    assert _until(lambda: not _running(pid), 30.0)


def test_turns_captured_in_one_process_are_recalled_in_another(
    shared: Bowerbird, shared_home: Path
) -> None:
    engine, home = shared, shared_home
    assert engine.embeddings.wait_ready(WAIT)
    engine.recall("warm up the index", scopes=[SCOPE])
    other = _parent(home, "other", ["My favourite climbing gym is Boulderwelt in Munich."])
    try:
        _read(other)
        _tell(other, "flush")
        assert _read(other) == {"flushed": True}
        hits = engine.recall("Where do I go bouldering?", scopes=[SCOPE])
        assert any("Boulderwelt" in hit.content for hit in hits)
    finally:
        _tell(other, "exit")
        other.wait(30)


def test_shutdown_leaves_the_parents_lock(engine: Bowerbird) -> None:
    engine.shutdown()
    # this process no longer holds it shared
    assert filelock.is_free(parents_lock_path(engine.store.path))
    assert _until(lambda: not worker_state(engine.store.path).alive, 30.0)


@pytest.mark.parametrize(
    ("mode", "expected", "autocheckpoint"), [("process", "process", 0), ("thread", "thread", 1000)]
)
def test_the_setting_chooses_the_mode(
    home: Path, monkeypatch: pytest.MonkeyPatch, mode: str, expected: str, autocheckpoint: int
) -> None:
    """In process mode the agent's commits leave WAL checkpoints to the worker; on a thread they run them."""
    monkeypatch.setenv("BOWERBIRD_CURATION_MODE", mode)
    monkeypatch.setenv("BOWERBIRD_MAINTENANCE_ENABLED", "false")
    monkeypatch.setenv("BOWERBIRD_LLM_BACKEND", "none")
    engine = Bowerbird(load_config(home))
    try:
        assert engine.curation_mode == expected
        assert engine.store.db.scalar("PRAGMA wal_autocheckpoint") == autocheckpoint
    finally:
        engine.shutdown()


class _IdleCurator:
    """The worker loop's view of its curator thread: alive, nothing to do."""

    def is_alive(self) -> bool:
        return True

    def notify(self) -> None:
        pass

    def end_session(self, scope: str, session_id: str) -> None:
        pass


def test_the_worker_checkpoints_what_its_parents_wrote(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "CHECKPOINT_SECONDS", 0.0)
    config = load_config(home, overrides={"maintenance_enabled": False})
    parent = Store.open(config.db_path)
    parent.db.leave_checkpoints()
    parent_fd = filelock.open_lock(parents_lock_path(config.db_path))
    filelock.wait_shared(parent_fd)
    store = Store.open(config.db_path)
    checkpoints: list[int] = []
    monkeypatch.setattr(store.db, "checkpoint", lambda: checkpoints.append(1))
    stop = threading.Event()
    loop = threading.Thread(
        target=Worker(config, stop, poll_seconds=0.01)._loop, args=(store, _IdleCurator())
    )
    loop.start()
    try:
        assert _until(lambda: len(checkpoints) == 1)  # the first look at the file
        parent.journal.append(
            TurnCapture("I moved to Oslo.", "Noted.", scope=SCOPE, session_id="c")
        )
        assert _until(lambda: len(checkpoints) == 2)  # a parent's commit, seen
        time.sleep(0.2)
        assert len(checkpoints) == 2  # nothing new was written: nothing to checkpoint
    finally:
        stop.set()
        loop.join(WAIT)
        os.close(parent_fd)
        store.close()
        parent.close()


def test_an_injected_model_keeps_curation_on_a_thread(
    home: Path, monkeypatch: pytest.MonkeyPatch, minilm: LocalEmbedder
) -> None:
    monkeypatch.setenv("BOWERBIRD_CURATION_MODE", "process")
    engine = Bowerbird(load_config(home, overrides={"maintenance_enabled": False}), embedder=minilm)
    try:
        assert engine.curation_mode == "thread"
    finally:
        engine.shutdown()


def test_the_worker_gets_its_parents_settings(home: Path) -> None:
    config = load_config(home, overrides={"dedup_threshold": 0.8, "weights.rrf_k": 5})
    settings = settings_of(config, llm_backend="none")
    assert (settings["dedup_threshold"], settings["weights.rrf_k"], settings["llm_backend"]) == (
        0.8,
        5.0,
        "none",
    )


@pytest.mark.parametrize(
    ("setting", "cores", "threads"),
    [(0, 1, 1), (0, 2, 2), (0, 3, 2), (0, 16, 2), (0, None, 1), (3, 2, 3), (1, 16, 1)],
)
def test_the_worker_runs_its_model_on_up_to_two_cores(
    setting: int, cores: int | None, threads: int
) -> None:
    assert worker_threads(setting, cores) == threads


@pytest.mark.parametrize(("setting", "expected"), [(0, worker_threads(0, os.cpu_count())), (3, 3)])
def test_the_worker_reads_its_model_threads_from_the_spec(
    home: Path, setting: int, expected: int
) -> None:
    config = load_config(home, overrides={"embedding_threads": setting})
    spec = {"hermes_home": str(home), "settings": settings_of(config, llm_backend="none")}
    assert _read_spec(io.StringIO(json.dumps(spec))).embedding_threads == expected


def test_lock_files_sit_beside_the_database(home: Path) -> None:
    db = _db(home)
    assert (worker_lock_path(db).parent, parents_lock_path(db).parent) == (db.parent, db.parent)


def test_a_provider_in_process_mode_captures_turns(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in _env(home).items():
        if key.startswith("BOWERBIRD_"):
            monkeypatch.setenv(key, value)
    provider = BowerbirdProvider()
    provider.initialize("s", hermes_home=str(home), platform="cli")
    try:
        provider.sync_turn("I am allergic to penicillin.", "Noted.", session_id="s")
        assert provider.engine is not None and provider.engine.flush(WAIT)
        assert _journal(_db(home)) == {"done": 1}
    finally:
        provider.shutdown()
