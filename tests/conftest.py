"""Fixtures shared across test modules."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


@pytest.fixture(scope="session")
def minilm():  # type: ignore[no-untyped-def]
    """The real shipped all-MiniLM-L6-v2, loaded once for the whole test session."""
    from hermes_bowerbird.embedding import LocalEmbedder

    return LocalEmbedder()
