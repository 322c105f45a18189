"""hermes-bowerbird: local-first long-term memory for Hermes Agent (a MemoryProvider plugin).

Importing this package does no work; the provider loads its engine on `initialize()`.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "register"]


def register(ctx: Any) -> None:
    """Hermes plugin entry point: hand the host a fresh BowerbirdProvider (a MemoryProvider)."""
    from .provider import BowerbirdProvider

    ctx.register_memory_provider(BowerbirdProvider())
