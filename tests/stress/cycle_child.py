"""One provider lifetime in its own process: initialize, sync turns, shutdown, exit (run as a script)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from hermes_bowerbird.provider import BowerbirdProvider


def main(home: Path, cycle: int, turns: int, wait_model: bool) -> None:
    provider = BowerbirdProvider()
    provider.initialize(
        f"cycle-{cycle}", hermes_home=str(home), platform="cli", agent_context="primary"
    )
    for i in range(turns):
        provider.sync_turn(
            f"In cycle {cycle} I noted item {i}: the build takes {i + 3} minutes.",
            f"Noted item {i} of cycle {cycle}.",
            session_id=f"cycle-{cycle}",
        )
    engine = provider.engine
    if wait_model and engine is not None:  # shut down while the model is busy embedding the backlog
        engine.embeddings.wait_ready(120)
    provider.prefetch(f"how long does the build take in cycle {cycle}")
    started = time.monotonic()
    provider.shutdown()
    print(f"shutdown {time.monotonic() - started:.3f}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:] == ["wait-model"])
