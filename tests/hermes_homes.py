"""Hermes homes for tests: bowerbird installed into one as Hermes users do, and the environment that keeps the
`bowerbird` command offline and free of models (keyword recall only)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

KEYWORD_ONLY = {
    "BOWERBIRD_EMBEDDING_BACKEND": "none",
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "GEMINI_API_KEY": "",
    "GOOGLE_API_KEY": "",
    "HF_HUB_OFFLINE": "1",
}


def install(home: Path) -> None:
    """`bowerbird hermes-install --hermes-home HOME`, run as its own process."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "hermes_bowerbird.cli",
            "hermes-install",
            "--hermes-home",
            str(home),
        ],
        check=True,
        capture_output=True,
    )
