"""Who a curation worker is when it claims journal rows, and giving back the claims of workers that died here."""

from __future__ import annotations

import logging
import os
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import Store

log = logging.getLogger(__name__)


def worker_name(pid: int | None = None) -> str:
    """This process's name on the claims it takes: its host and process id (every thread of it is one claimant)."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def release_dead(store: Store) -> int:
    """Give back the live claims of processes on this host that no longer run (a crash, a kill) so their rows are
    curated at once instead of when the claims run out; claims of other hosts are left to run out. Returns the
    rows given back."""
    host = socket.gethostname() + ":"
    released = 0
    for claimant in store.journal.claimants():
        if not claimant.startswith(host):
            continue
        pid = claimant[len(host) :]
        if pid.isdigit() and not _running(int(pid)):
            released += store.journal.release_claims(claimant)
    if released:
        log.info("gave back %d journal rows claimed by curation workers that stopped", released)
    return released


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it runs
        return True
    return True
