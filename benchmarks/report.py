"""Shared by the benchmark scripts: the machine line, percentiles, RSS and RESULTS.md sections."""

from __future__ import annotations

import os
import platform
import re
import resource
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def machine_line() -> str:
    """CPU model, cores, memory, Python and numpy, and the load (these machines are shared and noisy)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    blas = os.environ.get("OPENBLAS_CORETYPE")
    extra = f", OPENBLAS_CORETYPE={blas}" if blas else ""
    return (
        f"{cpu}, {os.cpu_count()} cores, {memory:.0f} GiB RAM, Python {platform.python_version()}, "
        f"numpy {np.__version__}{extra}; load average {os.getloadavg()[0]:.1f} at the end of the run"
    )


def percentiles(samples_ms: list[float], *qs: float) -> tuple[float, ...]:
    """The given percentiles (default p50 and p95) of a list of milliseconds."""
    return tuple(float(np.percentile(samples_ms, q)) for q in (qs or (50, 95)))


def rss_mb() -> float:
    """Current resident memory of this process in MiB (from /proc, else the peak)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_section(name: str, body: str, path: Path = RESULTS) -> None:
    """Replace the text between `<!-- name -->` and `<!-- /name -->` in RESULTS.md (appended when absent)."""
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    text = (
        pattern.sub(lambda _: block, text)
        if pattern.search(text)
        else text.rstrip() + "\n\n" + block + "\n"
    )
    path.write_text(text, encoding="utf-8")
