"""Which language model the settings ask for: the host's, Gemini, or none (every step then uses its fallback)."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..types import LLM, Clock
from .budget import BudgetedLLM
from .gemini import GeminiLLM
from .host import HostLLM

if TYPE_CHECKING:
    from ..config import Config
    from ..store import Store

log = logging.getLogger(__name__)


def select_llm(
    config: Config,
    store: Store | None = None,
    clock: Clock = time.time,
    *,
    host_configured: Callable[[], bool] = HostLLM.configured,
) -> LLM | None:
    """The model the settings ask for (auto: the host's, then Gemini with a key, else none).

    With a store, the model is wrapped in the per-day call budget (`llm_daily_budget`).
    """
    inner = _pick_backend(config, host_configured)
    if inner is None or store is None:
        return inner
    return BudgetedLLM(inner, store, config.llm_daily_budget, clock)


def _pick_backend(config: Config, host_configured: Callable[[], bool]) -> LLM | None:
    backend = config.llm_backend.strip().lower()
    if backend == "none":
        return None
    # auto picks the host's model only inside Hermes
    inside_host = "agent.memory_manager" in sys.modules
    if (backend == "host" or (backend == "auto" and inside_host)) and host_configured():
        return HostLLM()
    if backend == "host":
        log.warning(
            "llm_backend is 'host' but Hermes has no usable model; continuing without a language model"
        )
        return None
    if config.gemini_api_key:
        return GeminiLLM(
            config.gemini_api_key, model=config.gemini_model, base_url=config.gemini_base_url
        )
    if backend == "gemini":
        log.warning(
            "llm_backend is 'gemini' but no Gemini API key is set; continuing without a language model"
        )
    return None
