"""Who owns a memory: a gateway user's private scope, or the profile's shared scope.

A user's key is `user:<platform>:<readable id>~<hash>`: the readable part is for people, the hash of the
platform and the raw id keeps two users apart whose ids differ only in characters the readable part drops
(`a.b` and `a_b`) or who share an id on two platforms. Stores written before this keyed users as
`user:<readable id>`; those keys stay readable by the user they most likely belong to (a legacy alias).

A user id given without its platform (on the command line) is looked up: the platforms on which that exact raw id
owns a key are found by recomputing its key there, so a lookup never reaches another user.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from .errors import AmbiguousUserError

_UNSAFE = re.compile(r"[^\w.@:+-]")
_READABLE = re.compile(r"[^\w.@+-]")
_PLATFORM = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_HASH_CHARS = 10
_READABLE_CHARS = 48


def _clean(value: str) -> str:
    return _UNSAFE.sub("_", value.strip())[:200]


def profile_scope(identity: str | None = None) -> str:
    """The shared scope of a Hermes profile (CLI use, imported MEMORY.md, facts for every user)."""
    return f"profile:{_clean(identity) if identity and identity.strip() else 'default'}"


def user_scope(user_id: str, platform: str | None = None) -> str:
    """The private scope of one gateway user on one platform (collision-free: it carries a hash of the raw id)."""
    if not user_id or not user_id.strip():
        raise ValueError("a user scope needs a non-empty user id")
    place = _platform(platform)
    raw = f"{place}\x00{user_id}".encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(raw).hexdigest()[:_HASH_CHARS]
    readable = _READABLE.sub("_", user_id.strip())[:_READABLE_CHARS] or "_"
    return f"user:{place}:{readable}~{digest}" if place else f"user:{readable}~{digest}"


def legacy_user_scope(user_id: str) -> str:
    """The key older stores gave this user (readable part only): read as an alias, never written."""
    return f"user:{_clean(user_id)}"


NO_PLATFORM = ""  # the platform of the key of an id kept without one (`user:<readable id>~<hash>`)


def split_user(value: str) -> tuple[str, str | None]:
    """`telegram:12345` -> ('12345', 'telegram'); `:12345` -> ('12345', NO_PLATFORM), the id's key without a
    platform; an id without a platform prefix -> (id, None), a platform still to be looked up."""
    head, sep, tail = value.partition(":")
    if sep and tail and (head == NO_PLATFORM or _PLATFORM.match(head)):
        return tail, head
    return value, None


def written(user_id: str, platform: str | None) -> str:
    """A user as the command line takes it: `telegram:12345`, or `:12345` for the key without a platform."""
    return f"{platform or NO_PLATFORM}:{user_id}"


def key_platform(key: str) -> str | None:
    """The platform a user key names: `user:telegram:12345~...` -> 'telegram', `user:bob~...` -> NO_PLATFORM;
    None for any other key (the profile's, or an older store's readable-only `user:bob`)."""
    if not key.startswith("user:") or "~" not in key:
        return None
    head, sep, _ = key.removeprefix("user:").partition(":")
    return head if sep else NO_PLATFORM


def platforms_holding(user_id: str, keys: Iterable[str]) -> tuple[str, ...]:
    """The platforms on which this raw user id owns one of `keys` (NO_PLATFORM last). A key counts only when it is
    exactly this id's key there: the hash is of the raw id, so ids that differ only in characters the readable
    part drops (`a.b`, `a_b`, `a b`) never find each other's keys."""
    found = {
        platform
        for key in keys
        if (platform := key_platform(key)) is not None
        and user_scope(user_id, platform or None) == key
    }
    return tuple(sorted(found, key=lambda platform: (platform == NO_PLATFORM, platform)))


def choose_platform(user_id: str, held: Sequence[str]) -> str | None:
    """The platform to read and write a user id given without one: the one holding it, None when none does; when
    several hold it, which one is the caller's to say (AmbiguousUserError lists them as PLATFORM:ID)."""
    if len(held) > 1:
        choices = ", ".join(written(user_id, platform) for platform in held)
        raise AmbiguousUserError(
            f"user id {user_id!r} has memories on several platforms ({choices}); "
            "give one of them as PLATFORM:ID",
            choices=[written(user_id, platform) for platform in held],
        )
    return held[0] if held else None


def _platform(platform: str | None) -> str:
    text = (platform or "").strip().lower()
    return text if _PLATFORM.match(text) else ("other" if text else "")


def write_scope(
    user_id: str | None, identity: str | None = None, platform: str | None = None
) -> str:
    """Where new memories go: the user's own scope on a gateway, else the profile's."""
    return user_scope(user_id, platform) if user_id and user_id.strip() else profile_scope(identity)


def own_scopes(
    user_id: str | None, identity: str | None = None, platform: str | None = None
) -> tuple[str, ...]:
    """The scopes a caller may change and export: the user's key and its legacy alias, or the profile's."""
    if user_id and user_id.strip():
        return tuple(dict.fromkeys((user_scope(user_id, platform), legacy_user_scope(user_id))))
    return (profile_scope(identity),)


def visible_scopes(
    user_id: str | None, identity: str | None = None, platform: str | None = None
) -> tuple[str, ...]:
    """What a reader may see: their own scope(s) plus the shared profile scope, never another user's."""
    profile = profile_scope(identity)
    if user_id and user_id.strip():
        return (*own_scopes(user_id, identity, platform), profile)
    return (profile,)
