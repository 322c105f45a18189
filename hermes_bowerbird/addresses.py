"""Leaf module: what names a store (a SQLite file, or a PostgreSQL server's address) and how an address may be
shown: never with its password."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

_SECRET_PARAMS = ("password", "sslpassword")
HIDDEN = "***"


def is_server_address(target: Path | str) -> bool:
    """Whether `target` names a PostgreSQL server (a `postgresql://` or `postgres://` address) rather than a file."""
    return str(target).startswith(("postgresql://", "postgres://"))


def shown(target: Path | str) -> str:
    """A store's name safe to log or print: a file's path as it is; a server address with any password (in the
    user part or the query) replaced by ***."""
    address = str(target)
    if not is_server_address(address):
        return address
    try:
        parts = urllib.parse.urlsplit(address)
    except ValueError:
        return "postgresql://(an address that cannot be read)"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":" + HIDDEN
        netloc = f"{user}@{host}"
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    hidden = [(k, HIDDEN if k.lower() in _SECRET_PARAMS else v) for k, v in query]
    return urllib.parse.urlunsplit(
        (parts.scheme, netloc, parts.path, urllib.parse.urlencode(hidden, safe="/:"), "")
    )
