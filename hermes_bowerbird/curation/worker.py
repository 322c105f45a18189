"""The curation worker process: one per memory home, elected by a lock file, curating the journal others append to.

Hermes processes that share a memory home (the CLI, a gateway, several profiles) each hold a shared lock on
`<db>.parents.lock` while they are open. The one worker holds an exclusive lock on `<db>.curator.lock` (its pid
written inside) and curates every journal row, whoever captured it. A parent that finds no worker starts one; a
worker that loses that race exits at once. The worker ends when no parent holds the parents' lock any more (the
last Hermes process exited or crashed: the kernel drops its lock) or on SIGTERM, after the row in hand; rows it
did not curate stay pending in the journal and the next worker resumes them, exactly as after a crash.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .. import filelock
from ..config import Config, RetrievalWeights, build_config
from ..embeddings.local import default_threads

if TYPE_CHECKING:
    from ..embeddings.service import EmbeddingService
    from ..store import Store

log = logging.getLogger(__name__)

# sessions whose model batch a parent asked the worker to run
END_SESSIONS_KEY = "curator.end_sessions"
POLL_SECONDS = 0.1  # how often the worker looks for new journal rows, requests and parents
# how often a parent looks for a live worker (and starts one when there is none)
CHECK_SECONDS = 1.0
# how often at most the worker checkpoints what the parents wrote (its own commits checkpoint as SQLite's do)
CHECKPOINT_SECONDS = 10.0
STOP_SECONDS = 3.0  # how long the worker gives its curator thread to finish the row in hand
# the worker curates only once its model is ready (or failed), at most this late
MODEL_WAIT_SECONDS = 600.0
NICE = 10  # the worker's niceness above its parent's: the scheduler favours the agent's threads
LOG_MAX_BYTES = 1_000_000  # the worker's log beside the database starts over past this size
WATCH_THREAD_NAME = "bowerbird-curation-watch"


def supported() -> bool:
    """Whether this platform can elect a worker process (POSIX file locks); else curation stays on a thread."""
    return filelock.supported()


def worker_lock_path(db_path: Path) -> Path:
    """The lock file the one worker of a database holds (its pid inside)."""
    return db_path.with_name(db_path.name + ".curator.lock")


def parents_lock_path(db_path: Path) -> Path:
    """The lock file every open parent holds shared; the worker ends once nobody holds it."""
    return db_path.with_name(db_path.name + ".parents.lock")


def worker_log_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".curator.log")


@dataclass(frozen=True)
class WorkerState:
    """What `status` shows of a memory home's curation worker."""

    alive: bool
    pid: int | None

    def as_dict(self) -> dict[str, object]:
        return {"alive": self.alive, "pid": self.pid}


def worker_state(db_path: Path) -> WorkerState:
    """Whether a worker holds this database's lock, and its pid (from any process: the CLI's status too)."""
    path = worker_lock_path(db_path)
    if not supported() or not path.exists():
        return WorkerState(False, None)
    try:
        alive = not filelock.is_free(path)
        pid = int(path.read_text(encoding="ascii").strip() or 0) or None
    except (OSError, ValueError):  # a lock file this user cannot open says nothing about a worker
        log.debug("cannot read the curation worker's lock file %s", path, exc_info=True)
        return WorkerState(False, None)
    return WorkerState(alive, pid if alive else None)


# -- the parent's side ------------------------------------------------------------------------------------------
def settings_of(config: Config, **changes: object) -> dict[str, object]:
    """A Config as the plain settings `build_config` reads back (how a worker receives its parent's)."""
    out: dict[str, object] = {}
    for f in fields(Config):
        if f.name in ("hermes_home", "weights"):
            continue
        value = getattr(config, f.name)
        out[f.name] = str(value) if isinstance(value, Path) else value
    out.update(
        {f"weights.{f.name}": getattr(config.weights, f.name) for f in fields(RetrievalWeights)}
    )
    out.update(changes)
    return out


class CurationProcess:
    """A parent's link to its memory home's worker: holds the parents' lock, starts a worker when none runs.

    Capture only appends to the journal; the worker notices new rows by itself. A session end becomes a request
    row the worker picks up; `drain` waits until the journal has nothing due.
    """

    def __init__(
        self,
        config: Config,
        store: Store,
        *,
        llm_backend: str,
        check_seconds: float = CHECK_SECONDS,
    ) -> None:
        self.config = config
        self.store = store
        self.llm_backend = llm_backend
        self.check_seconds = check_seconds
        self._parent_fd: int | None = None
        self._child: subprocess.Popen[bytes] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> bool:
        """Join the memory home as a parent and make sure a worker runs; False when none could be started."""
        self._parent_fd = filelock.open_lock(parents_lock_path(self.config.db_path))
        filelock.wait_shared(self._parent_fd)  # shared: parents never wait for each other
        try:
            self.elect()
        except OSError:
            log.warning(
                "cannot start the curation worker process; curating on a thread instead",
                exc_info=True,
            )
            self._release()
            return False
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, name=WATCH_THREAD_NAME, daemon=True)
        self._thread.start()
        return True

    def elect(self) -> bool:
        """Start a worker when none holds the lock; True when this call started one (it may still lose a race)."""
        with self._lock:
            if self._child is not None and self._child.poll() is not None:
                self._child = None  # reaped: it exited (lost a race, crashed, or was killed)
            if not filelock.is_free(worker_lock_path(self.config.db_path)):
                return False
            self._child = self._spawn()
            log.info(
                "started curation worker process %d for %s", self._child.pid, self.config.db_path
            )
            return True

    def _spawn(self) -> subprocess.Popen[bytes]:
        package_root = str(Path(__file__).resolve().parent.parent.parent)
        env = {
            **os.environ,
            "HERMES_HOME": str(self.config.hermes_home),
            "PYTHONPATH": os.pathsep.join(
                p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p
            ),
        }
        with _open_log(worker_log_path(self.config.db_path)) as log_file:
            child = subprocess.Popen(
                [sys.executable, "-m", "hermes_bowerbird.curation.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=log_file,
                env=env,
                start_new_session=True,
            )
        spec = {
            "hermes_home": str(self.config.hermes_home),
            "settings": settings_of(self.config, llm_backend=self.llm_backend),
        }
        assert child.stdin is not None
        try:  # the settings (a key among them) go through a pipe, never the command line
            child.stdin.write(json.dumps(spec).encode("utf-8"))
            child.stdin.close()
        except BrokenPipeError:
            log.warning("the curation worker exited before reading its settings")
        return child

    def end_session(self, scope: str, session_id: str) -> None:
        """Ask the worker to run this session's model batch (a request row it picks up within a poll)."""
        with self.store.transaction():
            requests = _requests(self.store.meta.get(END_SESSIONS_KEY))
            if [scope, session_id] not in requests:
                self.store.meta.set(END_SESSIONS_KEY, json.dumps([*requests, [scope, session_id]]))

    def drain(self, timeout: float) -> bool:
        """Wait until no journal row is due and no request waits (True), or `timeout` passes (False)."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.store.journal.pending(limit=1) and not _requests(
                self.store.meta.get(END_SESSIONS_KEY)
            ):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._stop.wait(min(0.05, left))

    def is_alive(self) -> bool:
        return worker_state(self.config.db_path).alive

    def status(self) -> dict[str, object]:
        state = worker_state(self.config.db_path)
        return {"mode": "process", **state.as_dict(), "started_here": self._child is not None}

    def stop(self, timeout: float = 1.0) -> bool:
        """Leave the memory home: the worker ends by itself once no parent is left. True when the watch ended."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        self._release()
        child = self._child
        if (
            child is not None
            and child.poll() is None
            and filelock.is_free(parents_lock_path(self.config.db_path))
        ):
            try:  # the last parent in: reap our worker if it ends within the time left (it stops after a poll)
                child.wait(max(0.0, min(timeout, POLL_SECONDS * 5)))
            except subprocess.TimeoutExpired:
                log.debug(
                    "curation worker %d still finishing its row; it exits by itself", child.pid
                )
        return thread is None or not thread.is_alive()

    def _release(self) -> None:
        fd, self._parent_fd = self._parent_fd, None
        if fd is not None:
            os.close(fd)

    def _watch(self) -> None:
        """Re-elect on a timer: a worker that died (killed, crashed) is replaced by a parent within a check."""
        while not self._stop.wait(self.check_seconds):
            try:
                self.elect()
            except OSError:
                log.warning(
                    "cannot start a curation worker process; rows wait in the journal",
                    exc_info=True,
                )


def _open_log(path: Path) -> IO[bytes]:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if path.stat().st_size > LOG_MAX_BYTES:
            return open(path, "wb")  # handed to the child, closed by the caller
    except FileNotFoundError:
        pass
    return open(path, "ab")


def _requests(raw: str | None) -> list[list[str]]:
    try:
        data = json.loads(raw) if raw else []
    except json.JSONDecodeError:
        log.warning("discarding an unreadable session-end request record")
        return []
    return [[str(a), str(b)] for a, b in data] if isinstance(data, list) else []


# -- the worker's side ------------------------------------------------------------------------------------------
class Worker:
    """Inside the worker process: the curator thread over the store, woken when another process commits."""

    def __init__(
        self, config: Config, stop: threading.Event, *, poll_seconds: float = POLL_SECONDS
    ) -> None:
        self.config = config
        self.stop = stop
        self.poll_seconds = poll_seconds

    def run(self) -> int:
        """Curate until the last parent leaves or SIGTERM; 0 also when another worker won the election."""
        lock_fd = filelock.open_lock(worker_lock_path(self.config.db_path))
        try:
            if not filelock.try_exclusive(lock_fd):
                log.info("another curation worker runs for %s; this one exits", self.config.db_path)
                return 0
            os.ftruncate(lock_fd, 0)
            os.write(lock_fd, str(os.getpid()).encode("ascii"))
            _lower_priority()
            log.info("curation worker %d for %s", os.getpid(), self.config.db_path)
            self._serve()
            return 0
        finally:
            os.close(lock_fd)

    def _serve(self) -> None:
        from ..embeddings.service import EmbeddingService
        from ..embeddings.tier import VectorTier
        from ..llm.selection import select_llm
        from ..store import Store
        from .curator import Curator, CuratorWorker

        store = Store.open(self.config.store_target)
        embeddings = EmbeddingService(self.config, store, auto_reindex=True)
        embeddings.start()
        vectors = VectorTier(store, embeddings, ann_threshold=self.config.ann_threshold)
        curator = Curator(store, vectors, self.config, time.time, select_llm(self.config, store))
        thread = CuratorWorker(curator, store)
        try:
            # nobody waits on this process: curate with vectors from the start
            if self._model_ready(embeddings):
                thread.start()
                self._loop(store, thread)
        finally:
            stopped = thread.stop(STOP_SECONDS)
            embeddings.stop(timeout=0)
            if stopped and embeddings.wait_idle(STOP_SECONDS):
                store.close()
            log.info("curation worker %d stopped", os.getpid())

    def _model_ready(self, embeddings: EmbeddingService) -> bool:
        """Wait for the embedding model (or its failure: then curation goes on without vectors); False when the
        worker should end first (stopped, or no parent left)."""
        deadline = time.monotonic() + MODEL_WAIT_SECONDS
        parents = parents_lock_path(self.config.db_path)
        while not embeddings.wait_ready(self.poll_seconds):
            if self.stop.is_set() or filelock.is_free(parents):
                return False
            if embeddings.status().get("state") != "loading" or time.monotonic() > deadline:
                log.warning(
                    "curating without an embedding model: %s", embeddings.status().get("reason")
                )
                break
        return True

    def _loop(self, store: Store, thread: Any) -> None:
        version, checkpointed = -1, time.monotonic()
        parents = parents_lock_path(self.config.db_path)
        while not self.stop.wait(self.poll_seconds):
            if filelock.is_free(parents):
                log.info(
                    "no Hermes process uses %s any more; the worker exits", self.config.db_path
                )
                return
            if not thread.is_alive():
                log.error("the curator thread ended; the worker exits and a parent starts another")
                return
            seen = store.db.data_version()
            if seen != version:
                version = seen
                if time.monotonic() - checkpointed >= CHECKPOINT_SECONDS:
                    # the parents leave checkpoints to this process (Connection.leave_checkpoints): their
                    # writes alone (turns, access counts, maintenance) would grow the WAL while nothing is curated
                    store.db.checkpoint()
                    checkpointed = time.monotonic()
                for scope, session_id in _take_requests(store):
                    thread.end_session(scope, session_id)
                thread.notify()


def _lower_priority() -> None:
    """Background work yields the cores to the agent's own threads whenever both want them."""
    try:
        os.nice(NICE)
    except OSError:
        log.info("cannot lower the curation worker's priority; it runs at the parent's")


def _take_requests(store: Store) -> Sequence[tuple[str, str]]:
    # read first: the parents' own writes (access counts) wake this loop, and a write lock taken for nothing
    # would make their next write wait
    if not _requests(store.meta.get(END_SESSIONS_KEY)):
        return []
    with store.transaction():
        requests = _requests(store.meta.get(END_SESSIONS_KEY))
        if requests:
            store.meta.set(END_SESSIONS_KEY, "[]")
    return [(scope, session) for scope, session in requests]


def _read_spec(stream: IO[str]) -> Config:
    spec: Mapping[str, Any] = json.loads(stream.read())
    config = build_config(Path(str(spec["hermes_home"])), dict(spec["settings"]))
    return replace(
        config, embedding_threads=worker_threads(config.embedding_threads, os.cpu_count())
    )


def worker_threads(setting: int, cores: int | None) -> int:
    """The worker's model threads: the `embedding_threads` setting when given, else the local model's default (up to
    2, the cores there are; torch alone would take one per core).

    The worker runs niced and onnxruntime's idle threads sleep, so the agent's threads still get a core the moment
    they wake. Measured on 2 cores (benchmarks/bench_provider.py --curation-only, 600 turns, four runs each,
    interleaved): on 2 threads 58-68 turns/s, a 1 ms ticker in the Hermes process late by 0.44-0.78 ms at p99 and
    sync_turn 0.72-1.31 ms at p99; on 1 thread 50-52 turns/s, 0.30-0.34 ms and 0.64-1.53 ms. (An earlier build
    and curator, slower and heavier on the GIL, had made 2 threads cost 1.9-2.1 ms of ticker lateness.)"""
    return setting if setting > 0 else default_threads(cores)


def main() -> int:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(process)d %(name)s %(levelname)s %(message)s",
    )
    if not supported():
        log.error(
            "this platform has no file locks; curation runs on a thread of the Hermes process"
        )
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())
    config = _read_spec(sys.stdin)
    return Worker(config, stop).run()


if __name__ == "__main__":
    raise SystemExit(main())
