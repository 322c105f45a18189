"""Run the inspector: bind 127.0.0.1, make a fresh token, print the link once, serve until interrupted."""

from __future__ import annotations

import errno
import logging
import secrets
import socket
import webbrowser
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import InvalidInputError
from ..scopes import profile_scope as shared_scope
from .app import Inspector, create_app

if TYPE_CHECKING:
    from ..engine import Bowerbird

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
DEFAULT_PORT = 8767


def new_token() -> str:
    return secrets.token_urlsafe(32)


def bind(port: int | None) -> socket.socket:
    """A listening socket on 127.0.0.1: `port`, or when none is given the default one, else any free one."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, DEFAULT_PORT if port is None else port))
    except OSError as exc:
        if port is not None or exc.errno != errno.EADDRINUSE:
            sock.close()
            raise InvalidInputError(
                f"cannot listen on {HOST}:{port}: {exc.strerror or exc}"
            ) from exc
        sock.bind((HOST, 0))
    sock.listen(128)
    return sock


def url_of(sock: socket.socket, token: str) -> str:
    return f"http://{HOST}:{sock.getsockname()[1]}/?token={token}"


def serve(
    engine: Bowerbird,
    *,
    scopes: Sequence[str] | None = None,
    profile_scope: str | None = None,
    port: int | None = None,
    open_browser: bool = True,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve the inspector for `engine` until Ctrl+C. `scopes` None shows every scope in the file."""
    import uvicorn

    token = new_token()
    inspector = Inspector(
        engine,
        token,
        tuple(scopes) if scopes is not None else None,
        profile_scope or shared_scope(None),
    )
    sock = bind(port)
    url = url_of(sock, token)
    announce(url)
    if open_browser and not webbrowser.open(url):
        log.info("no browser could be opened; use the printed link")
    # No access log: the first request's URL carries the token.
    config = uvicorn.Config(
        create_app(inspector), log_level="warning", access_log=False, lifespan="off"
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
