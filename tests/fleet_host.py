"""One Hermes host of a fleet sharing one PostgreSQL memory: the real host's MemoryManager with bowerbird loaded the
way Hermes loads it, its own curation worker process (a script; HERMES_HOME and the settings come from the
environment).

    python tests/fleet_host.py write NAME THREADS SECONDS   -> gateway users NAME-0.. tell facts; prints "ack ..."
        after each turn the host has taken, "written N" at the end; maintenance runs meanwhile. The host then stays
        up (as a fleet's hosts do) until the shared journal holds nothing left to curate, from any host.
    python tests/fleet_host.py ask USER QUESTION            -> a new session of USER; prints the prefetch as JSON.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from typing import Any

PLATFORM = "telegram"


def fact(user: str, n: int) -> str:
    """What gateway user `user` tells in turn `n`: a fact only they hold."""
    return f"My book club at the {user} library reads chapter {n} of Middlemarch this week."


def acked(output: str) -> set[tuple[str, int]]:
    """(user, n) of each turn a host's output says it took: whole lines only, since a host killed while printing
    leaves its last line cut short ("ack a-1 13" of "ack a-1 1354")."""
    whole = output.split("\n")[:-1]  # what follows the last newline was never finished
    return {
        (parts[1], int(parts[2]))
        for parts in (line.split() for line in whole)
        if len(parts) == 3 and parts[0] == "ack"
    }


def _manager(user: str, session: str) -> tuple[Any, Any]:
    from agent.memory_manager import MemoryManager
    from plugins.memory import load_memory_provider

    manager = MemoryManager()
    provider = load_memory_provider("bowerbird")
    assert provider is not None
    manager.add_provider(provider)
    manager.initialize_all(
        session_id=session, platform=PLATFORM, agent_context="primary", user_id=user
    )
    manager.build_system_prompt()
    return manager, provider


def write(name: str, threads: int, seconds: float, linger: float = 180.0) -> None:
    end = time.monotonic() + seconds
    keeper, provider = _manager(f"{name}-keeper", f"{name}-keeper-session")
    written = [0] * threads
    lock = threading.Lock()

    def tell(t: int) -> None:
        user = f"{name}-{t}"
        manager, _ = _manager(user, f"{user}-session")
        while time.monotonic() < end:
            n = written[t]
            manager.sync_all(
                fact(user, n), "Noted, I'll remember it.", session_id=f"{user}-session"
            )
            manager.flush_pending(30)  # the host's own barrier: the provider has taken the turn
            with lock:
                print(f"ack {user} {n}", flush=True)
            written[t] += 1
        manager.shutdown_all()

    def maintain() -> None:
        manager, provider = _manager(f"{name}-maintainer", f"{name}-maintenance")
        from hermes_bowerbird.errors import DatabaseError

        while time.monotonic() < end:
            with contextlib.suppress(
                DatabaseError
            ):  # the other host runs it: one runner in the fleet
                provider.engine.admin.maintain(wait_seconds=0.5)
            time.sleep(0.5)
        manager.shutdown_all()

    workers = [threading.Thread(target=tell, args=(t,)) for t in range(threads)]
    workers.append(threading.Thread(target=maintain))
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(f"written {sum(written)}", flush=True)
    stay = time.monotonic() + linger
    while provider.engine.inspect.journal_backlog() and time.monotonic() < stay:
        time.sleep(0.2)
    keeper.shutdown_all()


def ask(user: str, question: str) -> None:
    manager, _ = _manager(user, f"{user}-new-session-{time.time_ns()}")
    print(json.dumps({"prefetch": manager.prefetch_all(question)}), flush=True)
    manager.shutdown_all()


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        ask(sys.argv[2], sys.argv[3])
