"""The provider benchmark's store builder ends with the benchmark: a killed run leaves no child writing its cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

# the benchmark's role: start the builder (here a child that only sleeps) and report its pid
PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(__import__("os").getpid())])
print(child.pid, flush=True)
child.wait()
"""
CHILD = f"""
import sys, time
sys.path.insert(0, {str(BENCHMARKS)!r})
from bench_provider import exit_with_parent
exit_with_parent(int(sys.argv[1]), poll_seconds=0.1)
time.sleep(120)
"""


def _running(pid: int) -> bool:
    """Whether `pid` still runs (an ended child its new parent has not reaped yet counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def test_the_store_builder_ends_when_the_benchmark_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, CHILD],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(BENCHMARKS.parent)},
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(3.0)  # the child has imported the benchmark and watches its parent
    assert _running(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 20
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        assert not _running(child)
    finally:
        if _running(child):
            os.kill(child, signal.SIGKILL)
