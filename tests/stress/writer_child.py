"""A writer process for the stress test: threads capture distinct turns while maintenance runs (a script)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from hermes_bowerbird.config import build_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.options import TurnCapture


def main(home: Path, name: str, threads: int, seconds: float, pause: float, mode: str) -> None:
    config = build_config(
        home,
        {
            "embedding_backend": "none",
            "llm_backend": "none",
            "import_markdown": False,
            "curation_mode": mode,
        },
    )
    engine = Bowerbird(config)
    written = [0] * threads
    end = time.monotonic() + seconds

    def write(t: int) -> None:
        while time.monotonic() < end:
            i = written[t]
            engine.capture_turn(
                TurnCapture(
                    f"{name}-{t}-{i}: I moved the deploy of service {i} to Friday.",
                    "Noted.",
                    scope="profile:default",
                    session_id=f"shared-{i % 3}",
                    platform="cli",
                    turn_index=i,
                )
            )
            written[t] += 1
            if pause:
                time.sleep(pause)  # a paced writer: a bounded number of turns for the shorter run

    def maintain() -> None:
        while time.monotonic() < end:
            engine.admin.maintain()
            time.sleep(0.2)

    workers = [threading.Thread(target=write, args=(t,)) for t in range(threads)]
    workers.append(threading.Thread(target=maintain))
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(f"written {sum(written)}", flush=True)
    engine.shutdown()


if __name__ == "__main__":
    main(
        Path(sys.argv[1]),
        sys.argv[2],
        int(sys.argv[3]),
        float(sys.argv[4]),
        float(sys.argv[5]),
        sys.argv[6],  # the curation mode: "process" (a worker process) or "thread"
    )
