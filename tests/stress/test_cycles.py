"""Start/stop cycles: a process that initializes a provider, syncs turns, shuts down and exits ends normally."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_bowerbird.config import CURATION_MODES

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("cycle_child.py")


def _env(mode: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"
    }  # as the host runs it
    env["PYTHONPATH"] = str(REPO)
    env["BOWERBIRD_CURATION_MODE"] = mode  # explicit: the test session's own default is "thread"
    return env


def _cycles(
    home: Path,
    count: int,
    *,
    mode: str,
    turns: int = 200,
    parallel: int = 1,
    wait_model: bool = True,
) -> list[tuple[int, float, str]]:
    """(exit code, shutdown seconds, stderr tail) per cycle; `parallel` processes share the home at a time.

    Without wait_model every other cycle shuts down while the model may still be loading."""
    out = []
    for first in range(0, count, parallel):
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(CHILD),
                    str(home),
                    str(cycle),
                    str(turns),
                    *(["wait-model"] if wait_model or cycle % 2 == 0 else []),
                ],
                env=_env(mode),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for cycle in range(first, min(count, first + parallel))
        ]
        for proc in procs:
            stdout, stderr = proc.communicate(timeout=300)
            seconds = float(stdout.split()[-1]) if proc.returncode == 0 and stdout else -1.0
            out.append((proc.returncode, seconds, stderr[-400:]))
    print(
        f"cycles ({mode}; exit code, shutdown seconds): "
        f"{[(code, seconds) for code, seconds, _ in out]}"
    )
    return out


def test_start_stop_cycles_end_with_a_normal_exit(tmp_path: Path) -> None:
    assert [code for code, _, _ in _cycles(tmp_path, 1, mode="thread")] == [0]


@pytest.mark.slow
def test_twenty_short_start_stop_cycles_end_with_a_normal_exit(tmp_path: Path) -> None:
    results = _cycles(tmp_path, 20, mode="thread", turns=20, parallel=4, wait_model=False)
    assert [(code, err) for code, _, err in results if code != 0] == []


@pytest.mark.stress
@pytest.mark.parametrize("mode", CURATION_MODES)
def test_twenty_start_stop_cycles_end_with_a_normal_exit(tmp_path: Path, mode: str) -> None:
    results = _cycles(tmp_path, 20, mode=mode)
    assert [code for code, _, _ in results] == [0] * 20
    assert max(seconds for _, seconds, _ in results) < 5.0
