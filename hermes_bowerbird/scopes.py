"""Who owns a memory: a gateway user's private scope, or the profile's shared scope."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^\w.@:+-]")


def _clean(value: str) -> str:
    return _UNSAFE.sub("_", value.strip())[:200]


def profile_scope(identity: str | None = None) -> str:
    """The shared scope of a Hermes profile (CLI use, imported MEMORY.md, facts for every user)."""
    return f"profile:{_clean(identity) if identity and identity.strip() else 'default'}"


def user_scope(user_id: str) -> str:
    """The private scope of one gateway user."""
    if not user_id or not user_id.strip():
        raise ValueError("a user scope needs a non-empty user id")
    return f"user:{_clean(user_id)}"


def write_scope(user_id: str | None, identity: str | None = None) -> str:
    """Where new memories go: the user's own scope on a gateway, else the profile's."""
    return user_scope(user_id) if user_id and user_id.strip() else profile_scope(identity)


def visible_scopes(user_id: str | None, identity: str | None = None) -> tuple[str, ...]:
    """What a reader may see: their own scope plus the shared profile scope, never another user's."""
    profile = profile_scope(identity)
    if user_id and user_id.strip():
        return (user_scope(user_id), profile)
    return (profile,)
