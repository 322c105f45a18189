"""Capture: journal a turn at once when the database is free, else on the capture thread as soon as it is.

With curation in a worker process, that process holds the database's write lock while it writes a curated row. A
turn captured meanwhile is not made to wait for it: the row goes to the capture thread, which appends it the moment
the lock frees (rows keep their order: while any row waits there, later ones queue behind it). The thread holds at
most MAX_WAITING rows; past that, capture waits rather than hold more than shutdown can drain. A waiting row is
never dropped: the thread asks for the lock again after growing pauses (up to POLL_MAX_SECONDS) for as long as the
process lives, and never waits inside SQLite, where it would hold the store's connection. Flush and shutdown drain
the thread first, so what was captured is in the journal before anything reads it back; rows still waiting when
shutdown's budget ends are counted in the log.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import db
from ..types import TurnCapture

if TYPE_CHECKING:
    from ..store import Store

log = logging.getLogger(__name__)

THREAD_NAME = "bowerbird-capture"
# Rows the capture thread may hold. Past this, capture waits for the thread instead of queueing more: a backlog
# held only in memory is lost when shutdown's budget ends before it drains (an unbounded one lost 16,000 of
# 191,000 turns in the two-writer stress run). At the worker's p99 of ~34 ms a curated row, 32 rows drain in
# about a second of the shutdown budget.
MAX_WAITING = 32
# Pauses between attempts to append a waiting row: the worker's write transactions last milliseconds, with the
# preparation of its next row (tens of milliseconds) between them.
POLL_FIRST_SECONDS = 0.001
POLL_MAX_SECONDS = 0.02
_STOP = object()


class Capture:
    """Appends journal rows without waiting on another writer; a named thread takes the rows that would wait."""

    def __init__(self, store: Store, on_appended: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self.on_appended = on_appended
        self._queue: queue.Queue[object] = queue.Queue()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._waiting = 0
        self._thread: threading.Thread | None = None

    def append(self, row: TurnCapture) -> None:
        """Journal `row` now, or right after the current writer."""
        with self._lock:
            if not self._waiting and self.store.journal.try_append(row) is not None:
                self.on_appended()
                return
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
                self._thread.start()
            while self._waiting >= MAX_WAITING:  # never dropped: wait for the thread to catch up
                self._idle.wait()
            self._waiting += 1
            self._queue.put(row)

    def drain(self, timeout: float) -> bool:
        """Wait until every row handed to the thread is in the journal (True) or `timeout` passes (False)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._waiting:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def stop(self, timeout: float) -> bool:
        """Append what waits (within `timeout`), then end the thread; True when it ended.

        When it did not end, the rows it still holds are counted in the log: the thread keeps appending them
        until the process exits, and what is still unwritten then is lost."""
        thread = self._thread
        if thread is None:
            return True
        self._queue.put(_STOP)
        thread.join(timeout)
        if not thread.is_alive():
            return True
        with self._lock:
            waiting = self._waiting
        if waiting:
            log.warning(
                "%d captured turns are not journaled after %.1fs of shutdown (the database stays busy); "
                "they are appended if it frees before this process exits, else lost",
                waiting,
                timeout,
            )
        return False

    def _run(self) -> None:
        while True:
            row = self._queue.get()
            if row is _STOP:
                return
            assert isinstance(row, TurnCapture)
            try:
                if self._write(row):
                    self.on_appended()
            finally:
                with self._idle:
                    self._waiting -= 1
                    self._idle.notify_all()

    def _write(self, row: TurnCapture) -> bool:
        """Append `row` the moment the write lock is free; False only for a failure other than a busy database.

        The thread asks again and again (growing pauses, up to POLL_MAX_SECONDS) and never waits inside SQLite:
        a wait there holds the store's connection, and with it every read of this process (the next turn's
        recall, the next capture) for as long as the other writer keeps the lock. Past the busy policy's time it
        says so in the log, and goes on asking for as long as the process lives."""
        pause = POLL_FIRST_SECONDS
        since = time.monotonic()
        while True:
            try:
                if self.store.journal.try_append(row) is not None:
                    return True
            except Exception as exc:
                if not db.is_busy(exc):  # a closed store or a broken row: retrying cannot help
                    log.exception("a captured turn could not be journaled; it is lost")
                    return False
            if time.monotonic() - since >= db.BUSY_RETRY_SECONDS:
                log.warning(
                    "the database stayed busy for %.0fs; a captured turn waits on, asked again every %.2fs",
                    time.monotonic() - since,
                    pause,
                )
                since = time.monotonic()
            time.sleep(pause)
            pause = min(pause * 2, POLL_MAX_SECONDS)
