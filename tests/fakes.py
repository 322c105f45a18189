"""Small test doubles shared by the test modules (external boundaries only: time)."""

from __future__ import annotations

T0 = 1_700_000_000.0  # a fixed "now" for tests that reason about elapsed time


class FakeClock:
    """A settable clock: pass it wherever a Clock is expected and move `now` by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
