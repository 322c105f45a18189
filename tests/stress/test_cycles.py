"""Start/stop cycles: a process that initializes a provider, syncs turns, shuts down and exits ends normally."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("cycle_child.py")


def _cycles(home: Path, count: int) -> list[tuple[int, float]]:
    env = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"}  # as the host runs it
    env["PYTHONPATH"] = str(REPO)
    out = []
    for cycle in range(count):
        done = subprocess.run([sys.executable, str(CHILD), str(home), str(cycle), "200", "wait-model"], env=env,
                              capture_output=True, text=True, timeout=300)
        seconds = float(done.stdout.split()[-1]) if done.returncode == 0 and done.stdout else -1.0
        out.append((done.returncode, seconds))
    print(f"cycles (exit code, shutdown seconds): {out}")
    return out


def test_start_stop_cycles_end_with_a_normal_exit(tmp_path: Path) -> None:
    assert [code for code, _ in _cycles(tmp_path, 1)] == [0]


@pytest.mark.stress
def test_twenty_start_stop_cycles_end_with_a_normal_exit(tmp_path: Path) -> None:
    results = _cycles(tmp_path, 20)
    assert [code for code, _ in results] == [0] * 20
    assert max(seconds for _, seconds in results) < 5.0
