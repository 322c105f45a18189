"""A daily call budget in front of any language model, counted in the store."""

from __future__ import annotations

import datetime as dt
import threading
import time
from typing import TYPE_CHECKING

from ..errors import LLMBudgetExceeded
from ..types import LLM, Clock

if TYPE_CHECKING:
    from ..store import Store

_BUDGET_KEY = "llm.calls."


class BudgetedLLM:
    """Wraps an LLM and counts its calls per UTC day in the store's meta table; past the budget it refuses."""

    def __init__(
        self, inner: LLM, store: Store, daily_budget: int, clock: Clock = time.time
    ) -> None:
        self.inner = inner
        self.store = store
        self.daily_budget = daily_budget
        self.clock = clock
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    def _key(self) -> str:
        day = dt.datetime.fromtimestamp(self.clock(), tz=dt.UTC).date().isoformat()
        return _BUDGET_KEY + day

    def calls_today(self) -> int:
        return int(self.store.meta.get(self._key(), "0") or 0)

    def remaining(self) -> int:
        return max(0, self.daily_budget - self.calls_today())

    def _spend(self) -> None:
        with self._lock, self.store.transaction():
            key = self._key()
            used = int(self.store.meta.get(key, "0") or 0)
            if used >= self.daily_budget:
                raise LLMBudgetExceeded(
                    f"the daily budget of {self.daily_budget} model calls is spent"
                )
            self.store.meta.set(key, str(used + 1))

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        max_tokens: int = 1024,
        json_mode: bool = False,
        timeout: float = 30.0,
    ) -> str:
        self._spend()
        return self.inner.complete(
            prompt, system=system, max_tokens=max_tokens, json_mode=json_mode, timeout=timeout
        )
