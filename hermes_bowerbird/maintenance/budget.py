"""Budget: how long one maintenance job may keep working, and whether shutdown asked it to stop."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Budget:
    """A deadline on a monotonic clock plus an optional stop event; jobs poll `exhausted()` between steps."""

    def __init__(
        self,
        seconds: float | None = None,
        stop: threading.Event | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._monotonic = monotonic
        self._deadline = None if seconds is None else monotonic() + seconds
        self._stop = stop

    @classmethod
    def unlimited(cls) -> Budget:
        return cls(None)

    def exhausted(self) -> bool:
        if self._stop is not None and self._stop.is_set():
            return True
        return self._deadline is not None and self._monotonic() >= self._deadline
