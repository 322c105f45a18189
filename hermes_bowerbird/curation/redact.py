"""Find secrets in text and replace them with typed placeholders before anything is stored."""

from __future__ import annotations

import bisect
import difflib
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..text import whitespace_token_spans, whitespace_tokens
from .config_sections import PlacedValue, placed_values

Span = tuple[int, int]
Locator = Callable[[re.Match[str]], Span | None]

log = logging.getLogger(__name__)

PLACEHOLDER = "[REDACTED:{kind}]"


@dataclass(frozen=True)
class SecretMatch:
    """One secret found in a text: its kind and the [start, end) span to hide."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    triggers: tuple[str, ...]  # cheap substring pre-check: at least one must occur
    lower: bool = False  # triggers are matched against the lowercased text
    locate: Locator | None = None  # narrows or rejects a match; default is the whole match


# Every token pattern starts with a negative lookbehind of its own alphabet and uses bounded quantifiers,
# so a scan is linear even on megabytes of token-like input.
_B = r"(?<![A-Za-z0-9_-])"
_E = r"(?![A-Za-z0-9_-])"

_MASK_CHARS = frozenset("*xX.-_#•")
_NON_VALUES = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "str",
        "string",
        "int",
        "bytes",
        "bool",
        "optional",
        "any",
        "required",
        "empty",
        "redacted",
        "hidden",
        "placeholder",
        "example",
        "password",
        "passwd",
        "secret",
        "token",
        "your_password",
        "your_token",
        "your_api_key",
        "changeme",
        "change_me",
        "changeit",
        "todo",
        "tbd",
        "xxxx",
        "****",
    }
)
_CODE_WORDS = ("pass", "pwd", "secret", "token", "key", "cred", "auth")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PASSWORD_KEYS = ("pass", "pwd")
_SECRET_WORD_WINDOW = 48
_SECRET_WORD_BEFORE = re.compile(
    r"\b(?:pass(?:word|phrase|wd|code)?|pwd|secrets?|tokens?|keys?|credentials?|session|cookie|bearer|auth"
    r"|signature|salt)\b[^\n\w]{0,4}(?:(?:is|was|the|my|our|its|it's|here|use|using|value|of|this|that|new|now"
    r"|set|to|id|=|:)[^\n\w]{0,4}){0,5}$",
    re.IGNORECASE,
)
# a generated credential this long needs only a secret word before it on its line, whatever words come between (a
# public key is none)
_LONG_TOKEN = 32
_SECRET_WORD_ANYWHERE = re.compile(
    r"\b(?:pass(?:word|phrase|wd|code)?|pwd|secrets?|tokens?|(?<!public )keys?|credentials?|bearer|auth)\b",
    re.IGNORECASE,
)
_CODE_NAME = re.compile(r"[a-z_][a-z_]*(?:[A-Z][a-z_]*)*[0-9]*")


def _value_span(m: re.Match[str], group: str = "value") -> tuple[int, int, str, bool]:
    """The value group without surrounding quotes or trailing sentence punctuation ("!" is kept: it ends
    passwords as often as sentences, and a sentence loses less than a password leaks)."""
    start, end = m.span(group)
    value = m.group(group)
    if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
        return start + 1, end - 1, value[1:-1], True
    stripped = value.rstrip(".?)>]}")
    if len(stripped) >= 4:
        return start, start + len(stripped), stripped, False
    return start, end, value, False


def _is_code_or_placeholder(value: str, quoted: bool) -> bool:
    low = value.lower()
    if low in _NON_VALUES or value.startswith("[REDACTED") or set(value) <= _MASK_CHARS:
        return True
    if value[0] in "$<{%[(" or "(" in value or ")" in value:
        return True
    if quoted:
        return False
    if any(c in value for c in "[]{}"):
        return True
    if _IDENT_PATH.fullmatch(value):
        return True
    return _looks_like_code_name(value) and any(w in low for w in _CODE_WORDS)


def _env_style(key: str) -> bool:
    """An ALL-CAPS key (DB_PASSWORD, JWT_SECRET): config or environment, whose values are literals, not code."""
    return key.isupper() and len(key) >= 4


def _looks_like_code_name(value: str) -> bool:
    """snake_case or lowerCamel names (`user_password`, `dbPass`), digits at most at the end."""
    return bool(_CODE_NAME.fullmatch(value))


def _assignment(m: re.Match[str]) -> Span | None:
    start, end, value, quoted = _value_span(m)
    full_key = _full_key(m)
    if len(value) < 4 or _is_code_or_placeholder(value, quoted or _env_style(full_key)):
        return None
    key = m.group("key").lower()
    password_like = any(k in key for k in _PASSWORD_KEYS)
    if value.isdigit() and not password_like and len(value) < 12:
        return None
    if (
        not quoted
        and m.group("sep") == ":"
        and value.isalpha()
        and not password_like
        and not _env_style(full_key)
    ):
        return None
    return start, end


def _full_key(m: re.Match[str]) -> str:
    """The whole key the secret word sits in (`DB_PASSWORD` around `PASSWORD`)."""
    text, start, end = m.string, m.start("key"), m.end("key")
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return text[start:end]


# the parts of a setting's name that say it holds a secret ("db_password", "webhook_token", "stripe_api_key"): a
# "key" only when they say whose
_SECRET_PARTS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "credential",
        "credentials",
        "apikey",
    }
)
_KEY_OWNERS = frozenset(
    {
        "api",
        "private",
        "access",
        "secret",
        "encryption",
        "signing",
        "master",
        "client",
        "app",
        "license",
        "webhook",
    }
)
# ...and the parts that say the setting is about one, not one ("password_min_length", "token_ttl", "ssh_key_name",
# "api_key_rotation_days")
_ABOUT_A_SECRET = frozenset(
    {
        "name",
        "id",
        "arn",
        "path",
        "file",
        "length",
        "min",
        "max",
        "size",
        "ttl",
        "expiry",
        "expires",
        "days",
        "hours",
        "minutes",
        "seconds",
        "header",
        "type",
        "policy",
        "version",
        "rotation",
        "hash",
        "url",
        "uri",
        "prefix",
        "count",
        "enabled",
        "format",
    }
)


# what the other entries of a secrets' section hold: who, where and how, not the secret
_NAMES_NO_SECRET = _ABOUT_A_SECRET | {
    "user",
    "username",
    "login",
    "email",
    "mail",
    "host",
    "hostname",
    "server",
    "endpoint",
    "region",
    "provider",
    "profile",
    "database",
    "db",
    "dbname",
    "port",
    "scope",
    "scopes",
    "audience",
    "issuer",
    "account",
    "tenant",
    "domain",
    "domains",
    "method",
    "mode",
}


def _names_a_secret(name: str) -> bool:
    parts = re.split(r"[_.-]+", name.lower())
    if _ABOUT_A_SECRET.intersection(parts):
        return False
    return any(
        part in _SECRET_PARTS or (part == "key" and i > 0 and parts[i - 1] in _KEY_OWNERS)
        for i, part in enumerate(parts)
    )


def _secret_variable_default(m: re.Match[str]) -> Span | None:
    start, end, value, quoted = _value_span(m)
    if not quoted or not _names_a_secret(m.group("key")) or _is_code_or_placeholder(value, True):
        return None
    return start, end


def _password_is(m: re.Match[str]) -> Span | None:
    start, end, value, quoted = _value_span(m)
    if len(value) < 4 or _is_code_or_placeholder(value, quoted):
        return None
    # a word, or the rest of an address whose scheme's colon read as the one before a password ("ftp://...")
    if not quoted and (value.isalpha() or value.startswith("//")):
        return None
    return start, end


def _uri_password(m: re.Match[str]) -> Span | None:
    value = m.group("value")
    if _is_code_or_placeholder(value, True) or value.lower() in {"pass", "pwd", "xxx"}:
        return None
    return m.span("value")


def _group_value(m: re.Match[str]) -> Span | None:
    return m.span("value")


def _numbered(least: int) -> Locator:
    """The value, when it holds at least `least` digits: an identity or account number, not a word after its name."""

    def locate(m: re.Match[str]) -> Span | None:
        return m.span("value") if sum(c.isdigit() for c in m.group("value")) >= least else None

    return locate


def _mixed_token(m: re.Match[str]) -> Span | None:
    """Accept only token-looking text: digits plus letters of both cases."""
    text = m.group(0)
    has_digit = any(c.isdigit() for c in text)
    has_upper = any(c.isupper() for c in text)
    has_lower = any(c.islower() for c in text)
    return m.span() if has_digit and has_upper and has_lower else None


def _bearer(m: re.Match[str]) -> Span | None:
    value = m.group("value")
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return None
    return m.span("value")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_CARD_PREFIX = re.compile(r"4|5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)|3[47]|6(?:011|5|4[4-9])")


def _credit_card(m: re.Match[str]) -> Span | None:
    raw = m.group(0)
    separators = {c for c in raw if not c.isdigit()}
    if len(separators) > 1:
        return None
    digits = raw.replace(" ", "").replace("-", "")
    if not 13 <= len(digits) <= 19 or not _CARD_PREFIX.match(digits):
        return None
    # a number said to be a card's is one even when a digit was mistyped: "the card on file is 4915 6600 2281 0473"
    return m.span() if _luhn_ok(digits) or _CARD_WORD.search(_before(m, 40)) else None


_CARD_WORD = re.compile(r"\b(?:card|visa|mastercard|amex|debit|credit)\b", re.IGNORECASE)


def _before(m: re.Match[str], chars: int) -> str:
    return m.string[max(0, m.start() - chars) : m.start()]


def _card_expiry(m: re.Match[str]) -> Span | None:
    """A month and year after an expiry word, where a card was spoken of just before."""
    return m.span("value") if _CARD_WORD.search(_before(m, 80)) else None


# what names a network whose key may follow, as a pattern and as the rules' trigger words
_NETWORK = r"(?:wi-?fi|wlan|network|router|hotspot|ssid)"
_NETWORK_WORDS = ("wifi", "wi-fi", "wlan", "network", "router", "hotspot", "ssid")


def _network_key(m: re.Match[str]) -> Span | None:
    """A network's key: password-like text (letters with a digit or a symbol), not a word."""
    group = "value" if m.group("value") is not None else "slashed"
    start, end, value, quoted = _value_span(m, group)
    if not _chosen_password(value, quoted):
        return None
    return start, end


def _id_said_before(m: re.Match[str]) -> Span | None:
    """A number of five digits or more whose text named an identity number before it."""
    value = m.group("value")
    if sum(c.isdigit() for c in value) < 5 or not _ID_NAME.search(_before(m, 200)):
        return None
    return m.span("value")


def _login_name(m: re.Match[str]) -> Span | None:
    """A login's name or number, not a word: it holds a digit, a dot, "@" or "_" ("henrike.voss88", "8842 1173
    9920")."""
    start, end, value, _ = _value_span(m)
    if value.startswith("[REDACTED") or not any(c.isdigit() or c in ".@_" for c in value):
        return None
    # "docker login ghcr.io": a command and the registry it logs in to
    if _LOGIN_COMMAND_BEFORE.search(_before(m, 40)):
        return None
    return start, end


def _iban(m: re.Match[str]) -> Span | None:
    """An IBAN whose check digits hold (ISO 13616: the rearranged number is 1 modulo 97)."""
    code = m.group().replace(" ", "")
    moved = code[4:] + code[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return m.span() if len(code) <= 34 and int(number) % 97 == 1 else None


_STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "in",
        "on",
        "at",
        "to",
        "of",
        "for",
        "and",
        "or",
        "not",
        "no",
        "is",
        "was",
        "be",
        "been",
        "it",
        "its",
        "my",
        "your",
        "our",
        "this",
        "that",
        "too",
        "very",
        "so",
        "still",
        "also",
        "just",
        "now",
        "set",
        "stored",
        "saved",
        "kept",
        "written",
        "wrong",
        "correct",
        "expired",
        "invalid",
        "valid",
        "missing",
        "required",
        "needed",
        "different",
        "same",
        "weak",
        "strong",
        "long",
        "short",
        "secure",
        "safe",
        "new",
        "old",
        "changed",
        "reset",
        "there",
        "here",
        "where",
        "what",
        "which",
        "with",
        "from",
        "by",
        "as",
        "but",
        "if",
        "then",
        "than",
        "used",
        "rotated",
        "revoked",
        "shared",
        "sent",
        "gone",
        "lost",
        "easy",
        "hard",
        "simple",
        "case",
        "sensitive",
        "empty",
        "blank",
        "hidden",
        "encrypted",
        "hashed",
        "checked",
        "ready",
        "fine",
        "okay",
        "ok",
    }
)


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _token_like(value: str) -> bool:
    """Reads as a generated credential: long hex, or long mixed-class text with high entropy."""
    core = value.strip("=")
    if len(core) >= 24 and all(c in "0123456789abcdefABCDEF" for c in core):
        return True
    classes = sum(
        (
            any(c.islower() for c in core),
            any(c.isupper() for c in core),
            any(c.isdigit() for c in core),
            any(c in "+/_-.~" for c in core),
        )
    )
    return (
        len(core) >= 16
        and classes >= 2
        and any(c.isdigit() for c in core)
        and _entropy(core) >= 3.0
    )


def _phrase_value(m: re.Match[str]) -> Span | None:
    """`my password is X`, `the API key is X`, `the passphrase is three plain words`: X unless it is prose."""
    start, end, value, quoted = _value_span(m)
    if quoted:
        return (start, end) if value.strip() and not _is_code_or_placeholder(value, True) else None
    words = value.split()
    if len(words) > 1:
        key = m.group("key").lower()
        if "phrase" not in key or any(w.lower().strip(".,!?") in _STOP_WORDS for w in words):
            words = words[:1]
        else:
            return start, end
    first = words[0].rstrip(".,?;:)")
    if (
        len(first.rstrip("!")) < 4
        or first.lower() in _STOP_WORDS
        or _is_code_or_placeholder(first, False)
    ):
        return None
    if first.rstrip("!").isalpha() and not (
        _token_like(first) or (len(first) >= 8 and not first.islower() and not first.istitle())
    ):
        return None
    return start, start + len(first)


def _near_secret_word(m: re.Match[str]) -> Span | None:
    """A credential-looking token within a few filler words after a secret word (`the token is 3q2+7w...`), or a
    long one anywhere after a secret word close before it (`here's my token so you can debug: 7c2f9e81...`)."""
    if not _token_like(m.group(0)):
        return None
    window = _before(m, _SECRET_WORD_WINDOW)
    if _SECRET_WORD_BEFORE.search(window):
        return m.span()
    long = len(m.group(0).strip("=")) >= _LONG_TOKEN
    line = window.rsplit("\n", 1)[-1]
    return m.span() if long and _SECRET_WORD_ANYWHERE.search(line) else None


def _password_like(value: str) -> bool:
    """Letters with a digit or a symbol in them (`hunter22`, `Sunburn#2291`): a chosen password, not a word."""
    return any(c.isalpha() for c in value) and any(not c.isalpha() for c in value)


def _login_password(m: re.Match[str]) -> Span | None:
    """The password of a login given as a pair (`login is dan / Sunburn#2291`, `login: dan@x.com pass hunter22`):
    after a password word anything but prose, after a bare separator only password-like text."""
    start, end, value, quoted = _value_span(m)
    if len(value) < 3 or _is_code_or_placeholder(value, quoted) or value.lower() in _STOP_WORDS:
        return None
    # an address's "//" read as the pair's slash: "oc login https://api.cluster:6443"
    if value.startswith("/"):
        return None
    if m.group("named") is None and m.group("after_slash") is None and not _password_like(value):
        return None
    return start, end


# a word naming a login earlier in the same sentence (a dot inside a name such as "simone.baird" ends none)
_LOGIN_WORD_BEFORE = re.compile(
    r"\b(?:log[ \t-]?ins?|sign[ \t-]?ins?|logon|creds|credentials|user[ \t]?names?)\b"
    r"(?:[^\n.!?]|[.!?](?=\S))*$",
    re.IGNORECASE,
)
# a login's name as a pair gives it: three letters and a dot, "@" or a digit ("simone.baird", "jo_smith99"; not a
# version, "v2.1 / v3beta")
_PAIRED_NAME = r"(?<![\w.@+\[-])(?=(?:[^\sA-Za-z/]*[A-Za-z]){3})(?:[\w+-]+(?:[.@][\w+-]+)+|[A-Za-z_-]*\d[\w-]*)"


def _login_said_before(m: re.Match[str]) -> bool:
    return _LOGIN_WORD_BEFORE.search(_before(m, 160)) is not None


def _paired_login(m: re.Match[str]) -> Span | None:
    """The name of a login given as a pair in a sentence that named a login (`sent me the login for their portal,
    its simone.baird / Harcourt#77`), when a password-like value follows the slash: "the login page is slow / broken"
    gives none."""
    following = re.match(r"[^\s\"'`,;]{3,128}", m.string[m.end() : m.end() + 128])
    if following is None or not _password_like(following.group().rstrip(".?)>]}")):
        return None
    return _login_name(m) if _login_said_before(m) else None


def _paired_password(m: re.Match[str]) -> Span | None:
    """The password of a login given as a pair in a sentence that named a login: password-like text only."""
    start, end, value, quoted = _value_span(m)
    if _is_code_or_placeholder(value, quoted) or not _password_like(value):
        return None
    return (start, end) if _login_said_before(m) else None


def _emailed_password(m: re.Match[str]) -> Span | None:
    """The password given after an email address and a slash: password-like text only ("ana@x.es / Lluvia99", not
    "ana@x.es / bob@y.com")."""
    start, end, value, quoted = _value_span(m)
    if _is_code_or_placeholder(value, quoted) or not _password_like(value) or "@" in value:
        return None
    return start, end


def _bare_password(m: re.Match[str]) -> Span | None:
    """`the password Tr0ub4dor&3`: a password word followed straight by a password-like value (not a flag's name or
    value, with the command's next argument after it: "--ask-password ftp://...", "-field=password secret/db")."""
    start, end, value, quoted = _value_span(m)
    if len(value) < 4 or not _chosen_password(value, quoted) or _before(m, 1) in ("=", "-"):
        return None
    return start, end


def _chosen_password(value: str, quoted: bool) -> bool:
    """Password-like text (letters with a digit or a symbol), not code or a placeholder, and not a word ending the
    sentence ("I'd change that password now.")."""
    return (
        not _is_code_or_placeholder(value, quoted)
        and _password_like(value)
        and not value.rstrip(".?!):,;").isalpha()
    )


_CLOSING_QUOTE = re.compile(r"[\"'`](?=\s|$)")


def _header_value(m: re.Match[str]) -> Span | None:
    """The credential of an auth header (any scheme): everything after the scheme up to the line's end or quote."""
    start = m.start("value")
    value = _CLOSING_QUOTE.split(m.group("value"), maxsplit=1)[0].rstrip(" \t\"'`,;)")
    if len(value) < 6 or not any(c.isdigit() or c in "=+/_-" for c in value):
        return None
    return start, start + len(value)


def _cmdline_value(m: re.Match[str]) -> Span | None:
    """The password of `-u user:pass`, not the rest of an address (`-u http://app`)."""
    return None if m.group("value").startswith("//") else _cmdline_value_of(m, "value")


def _rule(
    kind: str,
    pattern: str,
    triggers: tuple[str, ...],
    *,
    lower: bool = False,
    locate: Locator | None = None,
    flags: int = 0,
) -> _Rule:
    return _Rule(kind, re.compile(pattern, flags), triggers, lower, locate)


_VAL = r"(?P<value>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'`]{1,256})"
# a digit said as a word, once or more: "four", "oh" (zero), "double seven"
_SPELLED_DIGIT = (
    r"(?:(?:double|triple)[ \t]+)?(?:zero|oh|nought|one|two|three|four|five|six|seven|eight|nine)"
)
# a code's digits, four to ten, grouped or not, or three words or more spelled out (a "double" says two): "5566",
# "1-9-8-4", "two four eight six", "one-nine-eight-four", "four, oh, double seven"
_CODE_DIGITS = (
    r"(?<![\w'’-])(?P<value>\d(?:[ -]?\d){3,9}"
    rf"|{_SPELLED_DIGIT}(?:(?:[ \t]*,[ \t]*|[ \t]+|-){_SPELLED_DIGIT}){{2,9}})(?![\w-])"
)
# a secret set anew, up to the word naming it: "I changed the WiFi password ...", "we've updated the alarm code ..."
_SET_ANEW = (
    r"\b(?:chang|sett?|reset|updat|switch)(?:e|es|ed|ing|s)?[ \t]+(?:(?:the|my|our|your|his|her|their)[ \t]+)?"
    r"(?:[\w'’-]{1,30}[ \t]+){0,2}?"
)
# a password said after "is" or ":" in prose: quoted, or a token of four characters or more up to a comma
_SAID_PASSWORD = r"(?P<value>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"'`,;]{4,128})"


def _cmdline_value_of(m: re.Match[str], group: str) -> Span | None:
    start, end, value, _quoted = _value_span(m, group)
    if not value or value[0] in "-$<{" or value.lower() in _NON_VALUES:
        return None
    return start, end


# one shell command, continued over lines by a backslash: what may come between a command's name and its flag
_SAME_COMMAND = r"(?:[^\n|;&]|\\\r?\n){0,200}?"
# the clients whose `login` takes a password after -p: "docker login -u bot -p X registry.io", "az login -u app -p X"
_LOGIN_CLIS = r"(?:docker|podman|buildah|skopeo|nerdctl|oc|cf|az|helm[ \t]+registry)[ \t]+login"
# commands and the short flag that takes their password, as their manuals spell it (a short flag means a password
# only to its own command: "ssh -p 22", "psql -p 5432" and "docker run -p 8080:80" give ports); mysql's and 7z's
# value is attached ("mysql -u root -p shop" prompts, and opens the database "shop")
_PASSWORD_FLAGS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (_LOGIN_CLIS, r"(?:-p|--password)(?:=|[ \t]+)", ("login",)),
    (r"mongo(?:sh|dump|restore|export|import|stat|top|files)?", r"-p(?:=|[ \t]+)", ("mongo",)),
    (r"redis-cli", r"-a[ \t]+", ("redis-cli",)),
    (
        r"sqlcmd|bcp|mosquitto_(?:pub|sub|rr)|zip|unzip|zipcloak",
        r"-P[ \t]+",
        ("sqlcmd", "bcp", "mosquitto", "zip"),
    ),
    (r"ldap(?:search|add|modify|delete|whoami|passwd|compare|modrdn|exop)", r"-w[ \t]+", ("ldap",)),
    (r"sshpass", r"-p[ \t]*", ("sshpass",)),
    (r"mysql|mysqldump|mysqladmin|mariadb|mariadb-dump", r"-p", ("mysql", "mariadb")),
    (r"7z|7za|7zr|rar|unrar", r"-p", ("7z", "rar")),
    (r"gh[ \t]+secret[ \t]+set", r"(?:-b|--body)(?:=|[ \t]+)", ("secret",)),
    # a login's name and password in one value: "lftp -u bob,X", "smbclient -U alice%X"
    (r"lftp", r"-u[ \t]+[^\s,\"']{1,64},", ("lftp",)),
    (
        r"smbclient|rpcclient|smbcacls|smbget|smbmap",
        r"-U[ \t]+[^\s%\"']{1,64}%",
        ("smb", "rpcclient"),
    ),
)
# a flag named for a secret, in any command: "--password X", "--http-password=X", "--client-secret X", "--_authToken
# X", "-storepass X", openssl's "-passin pass:X"; not one naming where the secret is read from ("--password-stdin",
# "--token-file") nor a switch ("--ask-pass", "--no-password", "--with-token")
_SECRET_FLAG = (
    r"(?<![\w-])(?:--(?!(?:ask|no|prompt|with|use|show|print|read|generate|require|skip)-)(?:[a-z0-9]*[-_]){0,4}"
    r"(?:password|passwd|passphrase|pass|pwd|token|secret|api[-_]?key|access[-_]key|secret[-_]key|auth[-_]?token"
    r"|auth)"
    r"|-[a-z]{0,12}pass(?:word|wd|phrase|in|out)?)(?![\w-])(?:=|[ \t]+)"
)
# a value that says where the secret is, not what it is: "env:PASS", "file:pw.txt", "stdin", "~/.token", "creds.json"
_NAMES_A_SOURCE = re.compile(
    r"(?:env|file|fd|stdin)(?::|$)|[~.]{0,2}/|.*\.(?:json|txt|pem|key|ya?ml|env|p12|pfx|crt|cfg|conf|ini)$",
    re.IGNORECASE,
)
# a `login` that is a command's, followed by the registry it logs in to: "docker login ghcr.io"
_LOGIN_COMMAND_BEFORE = re.compile(
    r"\b(?:docker|podman|buildah|skopeo|nerdctl|oc|cf|az|helm[ \t]+registry|npm|gh)[ \t]+$"
)
# a Kubernetes secret given on the command line: "kubectl create secret generic db --from-literal=password=X"
_CREATES_SECRET = re.compile(r"\bcreate[ \t]+secret\b(?:[^\n|;&]|\\\r?\n)*$")


# what prose says after a flag's name: "the --token flag is deprecated", "--password works too"
_SAID_OF_A_FLAG = frozenset(
    {
        "flag",
        "flags",
        "option",
        "options",
        "argument",
        "arg",
        "parameter",
        "param",
        "switch",
        "works",
        "instead",
    }
)


def _flag_value(m: re.Match[str]) -> Span | None:
    """The value of a flag that takes a secret, unless it names where the secret comes from or is prose ("use -p
    to pass the password")."""
    start, end, value, _ = _value_span(m)
    if value.startswith("pass:"):  # openssl's "-passin pass:X"
        start, value = start + 5, value[5:]
    if (
        not value
        or value[0] == "-"
        or value.lower() in _STOP_WORDS
        or value.lower() in _SAID_OF_A_FLAG
        or _is_code_or_placeholder(value, True)
        or _NAMES_A_SOURCE.match(value)
    ):
        return None
    return start, end


def _secret_flag_value(m: re.Match[str]) -> Span | None:
    """A flag named for a secret: its value; of an `--auth user:pass`, only the password."""
    span = _flag_value(m)
    flag = m.group(0)[: m.start("value") - m.start()].rstrip(" \t=").lower()
    if span is None or not flag.endswith("auth"):
        return span
    colon = m.string.find(":", span[0], span[1])
    return (colon + 1, span[1]) if colon >= 0 and colon + 1 < span[1] else None


def _literal_of_created_secret(m: re.Match[str]) -> Span | None:
    return _flag_value(m) if _CREATES_SECRET.search(_before(m, 400)) else None


def _command_rules() -> tuple[_Rule, ...]:
    return tuple(
        _rule(
            "command_line_password",
            rf"\b(?:{commands})\b{_SAME_COMMAND}[ \t]{flag}" + _VAL,
            triggers,
            lower=True,
            locate=_flag_value,
        )
        for commands, flag, triggers in _PASSWORD_FLAGS
    )


def _near_or_assigned(m: re.Match[str]) -> Span | None:
    start, end, value, quoted = _value_span(m)
    if len(value) < 8 or _is_code_or_placeholder(value, quoted):
        return None
    return (start, end) if quoted or _token_like(value) or any(c.isdigit() for c in value) else None


# the words that name a code to a door, a lock, an alarm or an account
# what a code opens: "door code", "lockbox code", "key safe combo"
_LOCKS = r"door|gate|alarm|entry|garage|safe|lock|locker|padlock|keypad|lock[ \t_-]?box|key[ \t_-]?(?:safe|box)"
_CODE_WORDS_SAID = (
    rf"(?:(?:{_LOCKS}|building|front[ \t]+door|access|bank|card|atm|phone|sim)[ \t_-]?)?"
    r"(?:code|pin(?:[ \t_-]?(?:code|number))?|combo|combination)"
)
# a code word after these names no secret: "zip code 90210", "error code 5003", "area code 0161"
_NOT_SECRET_CODES = (
    r"(?<!zip )(?<!post )(?<!area )(?<!country )(?<!dial )(?<!dialling )(?<!promo )(?<!discount )"
    r"(?<!coupon )(?<!voucher )(?<!error )(?<!status )(?<!exit )(?<!return )(?<!sort )(?<!swift )(?<!tax )"
    r"(?<!product )(?<!colour )(?<!color )(?<!source )(?<!course )(?<!dress )(?<!qr )(?<!bar )"
    r"(?<!booking )(?<!confirmation )(?<!reference )(?<!tracking )(?<!referral )(?<!invite )(?<!gift )"
    r"(?<!cheat )(?<!morse )(?<!zone )"
)
# " number" or " no." after a number's name, or nothing: "passport", "passport number", "passport no."
_NUMBER_WORD = r"(?:[ \t]+(?:number|no\.?))?"
# identity numbers by the names people give them
_ID_NUMBERS = (
    rf"ssn|social[ \t]+security{_NUMBER_WORD}|sin|ppsn|pps{_NUMBER_WORD}|dni|nie|nif|bsn|cpf|curp|tin"
    rf"|tax[ \t]+id(?:[ \t]+number)?|personnummer|codice[ \t]+fiscale|steuer[ \t-]?id|steuernummer"
    r"|utr(?:[ \t]+(?:number|letter))?|oci(?:[ \t]+card)?|rg|cnh|nss|rfc|irn"
    r"|cart[ãa]o[ \t]+(?:do[ \t]+)?sus|sus[ \t]+card|carte[ \t]+vitale"
    r"|num[ée]ro[ \t]+de[ \t]+s[ée]cu(?:rit[ée][ \t]+sociale)?"
    r"|s[ée]curit[ée][ \t]+sociale|sozialversicherungs(?:nummer|ausweis)|versichertennummer|personalausweis"
    r"|tarjeta[ \t]+sanitaria|driving[ \t]+licen[cs]e(?:[ \t]+number)?|health[ \t]+card"
    r"|ni[ \t]+number|national[ \t]+insurance(?:[ \t]+number)?|nino|tfn|tax[ \t]+file[ \t]+number|aadhaar"
    rf"|pan(?:[ \t]+(?:card|number))?|passport{_NUMBER_WORD}"
    rf"|driver['’]?s?[ \t]+licen[cs]e{_NUMBER_WORD}|national[ \t]+id(?:[ \t]+number)?"
    r"|medicare(?:[ \t]+(?:card[ \t]+)?number)?|health(?:[ \t]+card)?[ \t]+number|nhs[ \t]+number|sns[ \t]+number"
    # the numbers a hospital or an insurer files the user under
    rf"|ohip{_NUMBER_WORD}"
    r"|(?:patient|hospital|chart|(?:hospital[ \t]+)?folder|case)[ \t]+(?:number|no\.?|id)"
    rf"|medical[ \t]+record{_NUMBER_WORD}|mrn|(?:insurance|policy|member(?:ship)?)[ \t]+(?:number|no\.?|id)"
)


_ID_NAME = re.compile(rf"\b(?:{_ID_NUMBERS})(?![\w-])", re.IGNORECASE)


def _number_value(more: str) -> str:
    """An identity or account number as it is written, as the `value` group: a digit in its first token, then
    letters and digits, a space only before a digit (the words after it are not the number), "/" or "-" inside it
    ("KATH/OPD/2219854", "4826-119-774-KM"), after a short capitalised prefix of the card's ("SIP 4471 2290 8813");
    `more` bounds the characters after the first ("4,23")."""
    return (
        rf"(?P<value>(?:(?-i:[A-Z]{{2,5}})[ ](?=\d))?(?=[A-Za-z/-]*\d)[A-Za-z0-9]"
        rf"(?:[A-Za-z0-9]|[ ](?=\d|(?-i:[A-Z])\b)|[/-](?=[A-Za-z0-9])|[.](?=\d)){{{more}}})"
    )


# where an identity number is kept, said between its name and the number: "there", "at Komfo Anokye"
_ID_WHERE = r"(?:[ \t]+(?:there|here)|[ \t]+(?:at|with|for)(?:[ \t]+[\w'’-]{1,30}){1,3}?)?"
_GENERIC_KEYS = (
    r"(?:passwd|password|passphrase|pwd|client[_-]?secret|secret[_-]?key|secret|api[_-]?key|apikey"
    r"|access[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token"
    r"|credentials?"
    # "pass" and "pw" only as code names them: the end of a key ("db_pass", "ansible_become_pass") or a quoted one
    # ('"pass": ...'), never the word ("a bus pass: ...")
    r"|(?<=[A-Za-z0-9][_-])(?:pass|pw)|(?<=[\"'])(?:pass|pw)(?=[\"']))"
)

_RULES: tuple[_Rule, ...] = (
    _rule(
        "private_key",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,32768}?-----END[A-Z0-9 ]{0,40}"
        r"PRIVATE KEY(?: BLOCK)?-----|(?:\r?\n[A-Za-z0-9+/=:, -]{0,128}){0,400})",
        ("PRIVATE KEY",),
    ),
    _rule(
        "aws_access_key",
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    ),
    _rule(
        "aws_secret_key",
        r"aws_?secret_?(?:access_?)?key[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?(?P<value>[A-Za-z0-9/+]{40})"
        r"(?![A-Za-z0-9/+])",
        ("aws",),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "github_token",
        _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})" + _E,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _rule("gitlab_token", _B + r"glpat-[A-Za-z0-9_-]{20,100}" + _E, ("glpat-",)),
    _rule(
        "slack_token",
        _B + r"(?:xox[abposre]-[A-Za-z0-9-]{10,250}|xapp-\d-[A-Za-z0-9-]{10,250})",
        ("xox", "xapp-"),
    ),
    _rule(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,256}",
        ("hooks.slack.com",),
    ),
    _rule(
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{5,30}/[A-Za-z0-9_-]{20,200}",
        ("/api/webhooks/",),
    ),
    _rule("telegram_bot_token", r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}" + _E, (":AA",)),
    _rule(
        "stripe_key",
        _B + r"(?:(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,247}|whsec_[A-Za-z0-9]{24,128})" + _E,
        ("_live_", "_test_", "whsec_"),
    ),
    _rule("anthropic_api_key", _B + r"sk-ant-[A-Za-z0-9_-]{20,250}", ("sk-ant-",)),
    _rule(
        "openai_api_key",
        _B + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}" + _E,
        ("sk-",),
        locate=_mixed_token,
    ),
    _rule("google_api_key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E, ("AIza",)),
    _rule(
        "google_oauth_token",
        _B + r"(?:ya29\.[0-9A-Za-z_-]{20,2048}|GOCSPX-[A-Za-z0-9_-]{20,64})",
        ("ya29.", "GOCSPX-"),
    ),
    _rule("huggingface_token", _B + r"hf_[A-Za-z0-9]{30,40}" + _E, ("hf_",), locate=_mixed_token),
    _rule("npm_token", _B + r"npm_[A-Za-z0-9]{36}" + _E, ("npm_",)),
    _rule("pypi_token", _B + r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}", ("pypi-",)),
    _rule("sendgrid_api_key", _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E, ("SG.",)),
    _rule("twilio_key", r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9])", ("SK", "AC")),
    _rule("shopify_token", _B + r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}" + _E, ("shp",)),
    _rule("digitalocean_token", _B + r"do[por]_v1_[a-f0-9]{64}" + _E, ("_v1_",)),
    _rule(
        "azure_storage_key",
        r"AccountKey=(?P<value>[A-Za-z0-9+/]{80,100}={0,2})",
        ("AccountKey=",),
        locate=_group_value,
    ),
    _rule(
        "jwt",
        _B + r"eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{16,4096}" + _E,
        ("eyJ",),
    ),
    _rule(
        "bearer_token",
        r"\bbearer[ \t]{1,8}(?P<value>[A-Za-z0-9._~+/-]{16,4096}=*)",
        ("bearer",),
        lower=True,
        locate=_bearer,
        flags=re.IGNORECASE,
    ),
    _rule(
        "basic_auth",
        r"authorization[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?basic[ \t]{1,8}(?P<value>[A-Za-z0-9+/]{8,1024}={0,2})",
        ("authorization",),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "uri_password",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/?#@'\"<>]{0,256}:"
        r"(?P<value>[^\s/?#@'\"<>]{1,256})@[A-Za-z0-9\[]",
        ("://",),
        locate=_uri_password,
    ),
    _rule(
        "credit_card", r"(?<![0-9.-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![0-9])", (), locate=_credit_card
    ),
    *_command_rules(),
    _rule(
        "command_line_password",
        _SECRET_FLAG + _VAL,
        ("pass", "pwd", "token", "secret", "key", "auth"),
        lower=True,
        locate=_secret_flag_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "command_line_password",
        r"--from-literal[= ][^=\s]{1,120}=" + _VAL,
        ("--from-literal",),
        lower=True,
        locate=_literal_of_created_secret,
    ),
    _rule(
        # a token given to vault's login: "vault login hvs.CAES..." (not "vault login -method=userpass ...")
        "command_line_password",
        r"\bvault[ \t]+login[ \t]+(?P<value>[^\s\"'`=-][^\s\"'`=]{7,256})(?![^\s])",
        ("vault",),
        lower=True,
        locate=_flag_value,
    ),
    _rule(
        # a client's setting named for a secret: "aws configure set aws_secret_access_key X", "npm config set
        # //registry.npmjs.org/:_authToken X", "git config --global github.token X"
        "secret_assignment",
        r"\bconfig(?:ure)?[ \t]+(?:set[ \t]+)?(?:--?[\w-]{1,30}[ \t]+){0,3}"
        r"(?P<key>[\w./:@-]{0,100}?(?:token|secret|password|passwd|pass|pwd|api[-_]?key|access[-_]?key"
        r"|secret[-_]?key|credentials?))[ \t]+" + _VAL,
        ("config",),
        lower=True,
        locate=_flag_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "basic_credentials",
        r"(?:\s|^)(?:-u|--user)[ \t]+[\"']?[^\s:\"'@]{1,64}:(?P<value>[^\s\"']{1,256})",
        ("-u", "--user"),
        lower=True,
        locate=_cmdline_value,
    ),
    _rule(
        "cookie",
        r"\b(?:set-)?cookie[ \t]*:[ \t]*(?P<value>[^\n]{4,4096})",
        ("cookie",),
        lower=True,
        locate=_header_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "auth_header",
        r"\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:[A-Za-z][\w.+-]{0,30}[ \t]+)?"
        r"(?P<value>[^\s\"'][^\n]{0,4096})",
        ("authorization",),
        lower=True,
        locate=_header_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "api_key",
        r"\b(?:x-[a-z-]{0,30}(?:token|key|secret|auth)[a-z-]{0,30}|api-key|apikey)[ \t]*:[ \t]*"
        r"[\"']?(?P<value>[^\s\"']{8,4096})",
        ("token", "key", "secret", "auth"),
        lower=True,
        locate=_header_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "session_id",
        r"\b(?:session[_-]?(?:id|token|key)?|sess[_-]?id|sid|phpsessid|jsessionid|connect\.sid|csrf[_-]?token"
        r"|xsrf[_-]?token|remember[_-]?token)[\"']?[ \t]*[:=][ \t]*" + _VAL,
        ("sess", "sid", "csrf", "xsrf", "remember"),
        lower=True,
        locate=_near_or_assigned,
        flags=re.IGNORECASE,
    ),
    _rule(
        # an app password, four groups of four letters: "gmail app password: abcd efgh ijkl mnop" (read before the
        # rules that would take its first group for the whole)
        "password",
        r"\bapp[ \t-]+(?:specific[ \t-]+)?password\b[^\n\w]{0,12}(?:is[ \t]+)?"
        r"(?P<value>[a-z]{4}(?:[ \t-]?[a-z]{4}){3})(?![\w-])",
        ("app",),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "password",
        r"\b(?:password|passcode|passphrase|pin)(?:[ \t]{1,4}(?:is|was)|['’]s|[ \t]*\?[ \t]*(?:it['’]s|it[ \t]+is))"
        r"[ \t]{0,4}:?[ \t]{1,4}" + _SAID_PASSWORD,
        ("pass", "pin"),
        lower=True,
        locate=_password_is,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a password set to a new value: "I changed the WiFi password to kestrel77", "reset my password to
        # Sunburn#2291" (a word is no password: "change my password to something stronger")
        "password",
        rf"{_SET_ANEW}(?:password|passcode|passphrase|pin|pw|pwd)[ \t]+to[ \t]+" + _SAID_PASSWORD,
        ("pass", "pin", "pw"),
        lower=True,
        locate=_password_is,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a Terraform variable named for a secret, given a default: 'variable "db_password" { default = "X" }' (not
        # its description, its type or `sensitive = true`)
        "secret_assignment",
        r"\bvariable[ \t]+\"(?P<key>[\w-]{1,80})\"[ \t]*\{[^{}]{0,800}?\bdefault[ \t]*=[ \t]*"
        + _VAL,
        ("variable",),
        lower=True,
        locate=_secret_variable_default,
    ),
    _rule(
        "secret_assignment",
        rf"(?P<key>{_GENERIC_KEYS})(?![A-Za-z0-9_])[\"']?[ \t]{{0,8}}(?P<sep>:=|=>|=|:)(?!=)[ \t]{{0,8}}"
        r"(?P<value>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'`,;]{1,256})",
        ("pass", "pw", "secret", "key", "token", "credential"),
        lower=True,
        locate=_assignment,
        flags=re.IGNORECASE,
    ),
    _rule(
        "secret_assignment",
        r"(?<![A-Za-z0-9_.$-])(?P<key>[A-Z][A-Z0-9_]{0,60}(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|KEY|"
        r"CREDENTIALS?|AUTH|SALT|DSN)[A-Z0-9_]{0,30})[ \t]*(?P<sep>=|:)[ \t]*" + _VAL,
        ("PASS", "PWD", "SECRET", "TOKEN", "KEY", "CRED", "AUTH", "SALT", "DSN"),
        locate=_assignment,
    ),
    _rule(
        "password",
        r"\b(?:log[ \t-]?ins?|sign[ \t-]?ins?|logon|creds|credentials|user(?:[ \t]?name)?"
        r"|username[ \t]+and[ \t]+password|user(?:name)?/pass(?:word)?)(?:[ \t]+(?:details|info))?"
        r"(?:[ \t]+(?:for|to|on|at|of)[ \t]+[\w.@'’-]{1,40}(?:[ \t]+[\w.@'’-]{1,40}){0,2})?"
        r"[ \t]*(?:(?:is|are|was|were)[ \t]*:?|[:=]|(?<=[ \t]))[ \t]*[^\s/|,;\"'`]{1,80}"
        r"(?:[ \t]*[/|][ \t]*(?:(?P<after_slash>pass(?:word)?|pwd?)\b[ \t]*[:=]?[ \t]*)?"
        r"|,?[ \t]+(?:and[ \t]+)?(?:the[ \t]+)?(?P<named>pass(?:word)?|pwd?)\b(?:['’]s|[ \t]+is)?[ \t]*[:=]?[ \t]*)"
        r"(?P<value>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"'`,;]{1,128})",
        ("log", "sign", "cred", "user"),
        lower=True,
        locate=_login_password,
        flags=re.IGNORECASE,
    ),
    _rule(
        # an email address and a password given as a pair, whatever names them: "Netflix: ana@x.es / Lluvia99"
        "password",
        r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}[ \t]*/[ \t]*"
        r"(?P<value>[^\s\"'`,;]{4,128})",
        ("@",),
        locate=_emailed_password,
    ),
    _rule(
        # a login given as a pair further on in the sentence that named it: "sent me the login for their portal so
        # i can upload pics, its simone.baird / Harcourt#77": the name here, the password by the next rule
        "login",
        rf"(?P<value>{_PAIRED_NAME})[ \t]*/[ \t]*(?=[^\s\"'`,;]{{3,128}})",
        ("log", "sign", "cred", "user"),
        lower=True,
        locate=_paired_login,
        flags=re.IGNORECASE,
    ),
    _rule(
        "password",
        rf"{_PAIRED_NAME}[ \t]*/[ \t]*(?P<value>[^\s\"'`,;]{{3,128}})",
        ("log", "sign", "cred", "user"),
        lower=True,
        locate=_paired_password,
        flags=re.IGNORECASE,
    ),
    _rule(
        "password",
        r"\b(?:pass(?:word|code|phrase)|pwd?)[ \t]+(?P<value>[^\s\"'`,;]{4,128})",
        ("pass", "pw"),
        lower=True,
        locate=_bare_password,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a network's key: "the school's wifi code for parents evening is Krekel2024!", "wi-fi password: kettle-Moon9",
        # "router key = 7Hb2kQ" (all letters unquoted is a word: "the wifi password is written on the router")
        "password",
        rf"\b{_NETWORK}[ \t]+(?:code|key|password|pass|pw|pwd)"
        r"(?:[ \t]+(?:for|at|in|on)[ \t]+[\w'’-]{1,30}(?:[ \t]+[\w'’-]{1,30}){0,3}?)?"
        r"(?:,?[ \t]+(?:it['’]?s|it[ \t]+is))?[ \t]*(?:is|was|=|:)[ \t]*" + _SAID_PASSWORD,
        _NETWORK_WORDS,
        lower=True,
        locate=_password_is,
        flags=re.IGNORECASE,
    ),
    _rule(
        # ...or further on in a sentence naming the network: "the wifi at the cottage: network Hillside_5G, key is
        # meadowlark-42" (a word is no key: "the wifi keeps dropping, the key is to restart the router")
        "password",
        rf"\b{_NETWORK}\b[^\n.!?]{{0,60}}?[ \t,;]+(?:the[ \t]+)?"
        r"(?:key|password|pass|pw|pwd|code)[ \t]*(?:is|was|=|:)[ \t]*" + _SAID_PASSWORD,
        _NETWORK_WORDS,
        lower=True,
        locate=_password_is,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a password given after a colon further on: "my work VPN password is the same as email: Aurora#2291"
        "password",
        r"\b(?:password|passcode|passphrase)\b[^\n:.!?]{1,40}?:[ \t]*" + _SAID_PASSWORD,
        ("pass",),
        lower=True,
        locate=_password_is,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a code given as digits, however it is put: "door code 5566", "pin 8812 for the alarm", "combo is 0917",
        # "key safe on the side wall, code is 2741", "the code for the lockbox is 3390", "alarm code there is 1-9-8-4",
        # "their alarm code for early setup, it's 9-1-7-7-4"; set anew: "the gate code changed to 7788", "alarm code's
        # now 2468", "I've updated the alarm code to 9090"
        "secret",
        rf"(?<![\w-]){_NOT_SECRET_CODES}(?:{_CODE_WORDS_SAID})(?:[ \t]+(?:for|of|on|to|at|in)[ \t]+[\w'’-]{{1,30}}"
        r"(?:[ \t]+[\w'’-]{1,30}){0,3})?(?:[ \t]+(?:there|here|now))?(?:,?[ \t]+(?:it['’]?s|it[ \t]+is|which[ \t]+is))?"
        r"[ \t]*(?:(?:['’]s|is|was|=|:|(?:has[ \t]+)?(?:been[ \t]+)?(?:changed|updated|set|reset|switched)[ \t]+to)"
        r"[ \t]*(?:now[ \t]+)?)?" + _CODE_DIGITS,
        ("code", "pin", "combo", "combination"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # ...or set to them: "I've updated the alarm code to 9090", "we changed the garage pin to 4821"
        "secret",
        rf"{_SET_ANEW}(?:{_CODE_WORDS_SAID})[ \t]+to[ \t]+" + _CODE_DIGITS,
        ("code", "pin", "combo", "combination"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a lock given its digits without the word "code": "the key safe by the back door is 3391", "lockbox is 4421",
        # "the alarm at the shop is 2233" (four digits or more, no unit after: "the gate is 5 minutes away")
        "secret",
        rf"(?<![\w-])(?:{_LOCKS})(?:[ \t]+(?:by|at|on|in|for|of|near|outside)[ \t]+[\w'’-]{{1,30}}"
        r"(?:[ \t]+[\w'’-]{1,30}){0,3})?[ \t]*(?:is|was|=|:)[ \t]*"
        + _CODE_DIGITS
        + r"(?![ \t]*(?:minutes?|mins?|hours?|m|km|ft|feet|metres?|meters?|miles?|mm|cm|in|inches|%|am|pm|years?|days?|"
        r"wide|high|tall|long|kg|lbs?)\b)",
        ("safe", "box", "lock", "alarm", "gate", "door", "entry", "garage", "keypad", "padlock"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a dial's combination, turn by turn: "the safe's combination is left 12, right 34, left 56",
        # "padlock: R 10 L 22 R 5"
        "secret",
        r"\b(?:combos?|combinations?|safes?|padlocks?|locks?|dial)\b[^\n]{0,40}?(?P<value>"
        r"(?:left|right|l|r)[ \t]*(?:to[ \t]+)?\d{1,3}"
        r"(?:[ \t]*[,;]?[ \t]*(?:(?:and[ \t]+)?then[ \t]+|and[ \t]+)?"
        r"(?:left|right|l|r)[ \t]*(?:to[ \t]+)?\d{1,3}){2,5})"
        r"(?![\w-])",
        ("combo", "combination", "safe", "lock", "dial"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a card's security code or a one-time code: "cvv on the back is 332", "otp from the bank was 482913"
        "secret",
        r"\b(?:cvv2?|cvc2?|cv2|csc|card[ \t]+security[ \t]+code|otp|one[ \t-]time[ \t]+(?:code|password|pin)"
        r"|verification[ \t]+code|2fa[ \t]+code|sms[ \t]+code)\b[^\n\d]{0,30}?(?P<value>\d{3,8})(?![\w-])",
        ("cv", "csc", "security code", "otp", "one", "verification", "2fa", "sms"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a US social security number or a UK national insurance number by its form alone, whoever's it is: "and
        # Travis's is 518-61-3304", "SJ 48 72 19 B"
        "national_id",
        r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])"
        r"|(?<![\w-])(?!BG|GB|NK|KN|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z](?:[ ]?\d{2}){3}[ ]?[A-D](?![\w-])",
        (),
    ),
    _rule(
        # an identity number: "ppsn is 7654321TA", "sin is 046 454 286", "my SSN: 078-05-1120"
        "national_id",
        # the words between the name and the number hold no digit and no line break: "SIN yesterday: 453 246 134",
        # "health card came: 5824-193-067-KT", "Medicare card for his specialist referral: 4108 39638 9"
        rf"\b(?:{_ID_NUMBERS})(?![\w-])[^\n\d]{{0,40}}?" + _number_value("4,23"),
        (
            "ssn",
            "social",
            "sin",
            " ni ",
            "utr",
            " oci",
            " rg",
            "cnh",
            "nss",
            "rfc",
            "irn",
            " sus",
            "vitale",
            "sécu",
            "secu",
            "sozialversicherung",
            "versicherten",
            "personalausweis",
            "sanitaria",
            "driving",
            "dni",
            " nie",
            "nif",
            "bsn",
            "cpf",
            "curp",
            " tin",
            "personnummer",
            "fiscale",
            "steuer",
            "pps",
            "insurance",
            "nino",
            "tfn",
            "tax",
            "aadhaar",
            "pan",
            "passport",
            "licen",
            "national",
            "id number",
            "medicare",
            "health",
            "nhs",
            "sns",
            "ohip",
            "patient",
            "hospital",
            "chart",
            "folder",
            "case",
            "record",
            "mrn",
            "policy",
            "member",
        ),
        lower=True,
        locate=_numbered(5),
        flags=re.IGNORECASE,
    ),
    _rule(
        # a login's name or number, which with its password opens the account: "my DigiD login is henrike.voss88",
        # "HMRC gateway user id is 8842 1173 9920", "login is rangi.ngata / ..." (a plain word is none: "my login
        # is the same")
        "login",
        r"\b(?:log[ \t-]?in|sign[ \t-]?in|user[ \t]?(?:name|id)|customer[ \t]+(?:id|number)|member[ \t]+id"
        r"|gateway[ \t]+id|account[ \t]+(?:id|login))(?:[ \t]+(?:name|id))?"
        r"(?:[ \t]+(?:for|to|on|at)[ \t]+[\w.'’-]{1,40})?"
        r"[ \t]*(?:(?:is|was|=|:)[ \t]*)?(?P<value>[^\s,;/|\"'`]{3,80}(?:[ ]\d{2,6}){0,4})",
        ("log", "sign", "user", "customer", "member", "gateway", "account"),
        lower=True,
        locate=_login_name,
        flags=re.IGNORECASE,
    ),
    _rule(
        # what a bank asks besides the password: "the memorable word is Ceredigion", "security answer: Rex",
        # "mother's maiden name is Pryce", "my mum's maiden name is Fitzgerald"
        "password",
        r"\b(?:memorable[ \t]+(?:word|phrase|name|place|date|information|info)|security[ \t]+(?:answer|word)"
        r"|secret[ \t]+(?:answer|word)|answer[ \t]+to[ \t]+(?:my|the)[ \t]+security[ \t]+question"
        r"|security[ \t]+question(?:[ \t]+answer)?"
        r"|(?:mother|mum|mom|mam|mommy|mummy)['’]?s[ \t]+maiden[ \t]+name)"
        r"(?:[ \t]+(?:for|on|at)[ \t]+[\w'’-]{1,30})?[ \t]*(?:is|was|=|:)[ \t]*"
        r"(?P<value>\"[^\"\n]{1,64}\"|'[^'\n]{1,64}'|[^\s\"'`,;.!?]{2,64})",
        ("memorable", "security", "secret", "maiden"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a card's expiry given with it: "new card number 5355 ... exp 09/28"
        "secret",
        r"\b(?:exp(?:iry|ires|iration)?|valid[ \t]+(?:thru|through|until|till))(?:[ \t]+date)?[ \t]*[:.]?[ \t]*"
        r"(?P<value>(?:0[1-9]|1[0-2])[ \t]*/[ \t]*(?:\d{2}|20\d{2}))(?![\w/])",
        ("exp", "valid"),
        lower=True,
        locate=_card_expiry,
        flags=re.IGNORECASE,
    ),
    _rule(
        # an Indian PAN by its form after its name: "PAN AKRPI4827M"
        "national_id",
        r"\bpan\b[^\n\d]{0,30}?(?P<value>(?-i:[A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z]))(?![\w-])",
        ("pan",),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a PIN written down somewhere: "his UPI PIN on a sticky note on the fridge - 5921" (the capitals: "pin the
        # map at 2024" is a verb)
        "secret",
        r"(?<![\w-])(?-i:PIN)(?![\w-])[^\n\d]{0,50}?(?<![\w-])(?P<value>\d{4,8})(?![\w-])",
        ("PIN",),
        locate=_group_value,
    ),
    _rule(
        # backup or recovery codes listed: "backup codes when I turned on 2-step: 8841 2039, 5520 7712, ..."
        "secret",
        r"\b(?:backup|recovery|2fa|two[- ]factor|2[- ]step|verification|one[- ]time)[ \t]+codes?\b[^\n]{0,60}?"
        r"(?<![\w-])(?P<value>\d{3,5}[ -]?\d{3,5}(?:[ \t]*[,;][ \t]*(?:and[ \t]+)?\d{3,5}[ -]?\d{3,5})*)(?![\w-])",
        ("code",),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a recovery or backup code of letters and digits in groups: "recovery code: ABCD-EFGH-IJKL-MNOP", "backup key
        # is 7HQ2-9XKD-M4PA"
        "secret",
        r"\b(?:backup|recovery|reset|2fa|two[- ]factor|2[- ]step)[ \t]+(?:codes?|keys?)\b[^\n\w]{0,10}"
        r"(?:(?:is|are|was)[ \t]+)?(?<![\w-])(?P<value>[A-Za-z0-9]{3,8}(?:-[A-Za-z0-9]{3,8}){2,7})(?![\w-])",
        ("code", "key"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # an authenticator's secret key: "Binance 2FA secret key, in case I lose my phone: JBSWY3DPEHPK3PXP"
        "secret",
        r"\b(?:2fa|totp|mfa|otp|authenticator|two[- ]factor)\b[^\n]{0,60}?(?<![\w-])(?P<value>(?-i:[A-Z2-7]{16,64}))"
        r"(?![\w-])",
        ("2fa", "totp", "mfa", "otp", "authenticator", "factor"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a password named in another language: "senha Floripa@2024", "Passwort: Hund!2024", "contraseña es Luna#7"
        "password",
        r"\b(?:senha|contrase[ñn]a|passwort|kennwort|wachtwoord|mot[ \t]+de[ \t]+passe|l[öo]senord|has[łl]o|salasana"
        r"|adgangskode|passord)\b(?:[ \t]+(?:is|é|es|ist|est|er|on|è))?[ \t]*[:=]?[ \t]*(?P<value>[^\s,;\"'`]{4,64})",
        (
            "senha",
            "contrase",
            "passwort",
            "kennwort",
            "wachtwoord",
            "passe",
            "senord",
            "has",
            "salasana",
            "adgang",
            "passord",
        ),
        lower=True,
        locate=_bare_password,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a network's key given after its name: "router: network VF-Balcon-Azul, key 7Qx9-ZmP2-4LrT", "wifi
        # Marsolais_5G / Clementine!Rue88"
        "password",
        rf"\b{_NETWORK}\b[^\n]{{0,50}}?\b(?:key|pass(?:word)?|pw|pwd|code)\b[ \t]*[:=]?[ \t]*"
        r"(?P<value>[^\s,;\"'`]{6,64})"
        r"|\bwi-?fi\b[ \t:]*[^\s/]{2,40}[ \t]*/[ \t]*(?P<slashed>[^\s,;\"'`]{4,64})",
        _NETWORK_WORDS,
        lower=True,
        locate=_network_key,
        flags=re.IGNORECASE,
    ),
    _rule(
        # where a house key is hidden: "side door key under the blue planter"
        "secret",
        r"\b(?:spare|door|house|front|back|side)[ \t]+(?:door[ \t]+)?key[ \t]+(?:is[ \t]+)?(?:hidden[ \t]+|kept[ \t]+)?"
        r"(?P<value>(?:under|behind|beneath|inside)[ \t]+[^\n,.;]{3,40})",
        ("key",),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # another's identity number said after one: "she got her SIN yesterday: 453 246 134. and mine is 518 617 113",
        # "my SSN is ..., and Travis's is ..." (an identity number's name said before, in the same text)
        "national_id",
        r"\b(?:mine|his|hers|theirs|(?-i:[A-Z])[\w-]+['’]s)[ \t]+(?:is|was|=|:)[ \t]*"
        + _number_value("4,23"),
        # run only where an identity number was named: what `_id_said_before` asks for
        (
            "ssn",
            "social",
            "sin",
            "insurance",
            "tfn",
            "passport",
            "licen",
            "national",
            "medicare",
            "health",
            "cpf",
            "dni",
            "nie",
            "utr",
            "oci",
            "tax",
            "id number",
            "personnummer",
            "versicherten",
            "sozialversicherung",
        ),
        lower=True,
        locate=_id_said_before,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a bank account by its number: "my TD chequing account is 00412-004-5518832", "acct no. 12345678", "pay
        # into my account NO62 1503 5522 019", "IBAN NO93 8601 1117 947"
        "bank_account",
        r"\b(?:iban|bic|(?:(?:bank|chequing|checking|savings|current|business|joint)[ \t]+)?account"
        r"(?:[ \t]+(?:number|no\.?|#))?|acct?\.?(?:[ \t]+(?:number|no\.?|#))?|routing(?:[ \t]+number)?"
        r"|checking|chequing"
        r"|(?:client|customer)[ \t]+(?:number|no\.?|id)|bsb)\b"
        r"[ \t]*(?:(?:is|was|['’]s|number|no\.|no(?=[ \t])|#|=|:)[ \t]*){0,2}"
        + _number_value("5,33")
        + r"(?![\w-])",
        (
            "iban",
            "bic",
            "account",
            "acc",
            "routing",
            "bsb",
            "checking",
            "chequing",
            "client",
            "customer",
        ),
        lower=True,
        locate=_numbered(6),
        flags=re.IGNORECASE,
    ),
    _rule(
        # an IBAN however it is introduced, when its check digits hold: "GB82 WEST 1234 5698 7654 32"
        "bank_account",
        r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}(?![A-Za-z0-9])",
        (),
        locate=_iban,
    ),
    _rule(
        # a wallet's recovery words: twelve or more short words after what names them ("I wrote the recovery words
        # down: orbit canvas pillow ..."); prose breaks such a run with a short word ("in", "my", "a")
        "recovery_phrase",
        r"\b(?:recovery|seed|backup|mnemonic|secret)(?:[ \t]+(?:words?|phrase|sentence)s?)?\b[^\n.!?]{0,40}?"
        r"(?P<value>(?:\d{1,2}[.)][ \t]*)?[a-z]{3,8}(?:[ \t,]+(?:\d{1,2}[.)][ \t]*)?[a-z]{3,8}){11,23})(?![\w-])",
        ("recovery", "seed", "backup", "mnemonic", "secret"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        # a password described, then given: "my password is the van reg 191D4432", "pw is the same as the van reg
        # lol 191D4432"
        "password",
        r"\b(?:pass(?:word|code)|pwd?)[ \t]+(?:is|was|=|:)[ \t]+"
        r"(?!(?:stored|saved|kept|written|managed|synced|in|on|at|under)\b)(?:[\w'’]+[ \t]+){1,8}?"
        r"(?P<value>(?=(?:[^\s]*\d){2})(?=[^\s]*[A-Za-z])[A-Za-z0-9!@#$%^&*._+-]{6,64})(?![\w])",
        ("pass", "pw"),
        lower=True,
        locate=_group_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "phrase_secret",
        r"\b(?P<key>pass(?:word|phrase|code)|pwd?|pin(?:[ \t_-]?(?:code|number))?"
        rf"|(?:{_LOCKS})"
        r"[ \t_-]?(?:code|combo|combination)|secret(?:[ \t_-]?(?:access[ \t_-]?)?key)?"
        r"|(?:api|access|private|encryption|signing|license)[ \t_-]?key(?:[ \t]id)?"
        r"|(?:access|auth|api|bearer|refresh|session)[ \t_-]?token|token|session[ \t_-]?(?:id|cookie)|cookie"
        r"|credentials?)(?:[ \t]+(?:for|of|on|to|at|in)[ \t]+[\w.@-]{1,40}(?:[ \t]+"
        r"[\w.@-]{1,40}){0,2})?(?:[ \t]+(?:is[ \t]+set[ \t]+to|is[ \t]+now|is|was|will[ \t]+be|reads)[ \t]*:?"
        r"|[ \t]*(?:=|:))[ \t]+"
        r"(?P<value>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'`,;]{1,256}(?:[ \t]+[A-Za-z0-9]{1,40}){0,5})",
        (
            "password",
            "passphrase",
            "passcode",
            "pin",
            "key",
            "secret",
            "token",
            "session",
            "cookie",
            "credential",
            "code",
            "combo",
            "combination",
            "pw",
        ),
        lower=True,
        locate=_phrase_value,
        flags=re.IGNORECASE,
    ),
    _rule(
        "high_entropy_secret",
        r"(?<![A-Za-z0-9+/_.~=-])[A-Za-z0-9+/_.~-]{16,512}={0,2}(?![A-Za-z0-9+/_.~=-])",
        (
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "credential",
            "session",
            "cookie",
            "bearer",
            "auth",
            "signature",
            "salt",
        ),
        lower=True,
        locate=_near_secret_word,
    ),
)

_GENERIC_KIND_BY_KEY = (
    ("pass", "password"),
    ("pw", "password"),
    ("secret", "secret"),
    ("token", "token"),
    ("cred", "secret"),
    ("code", "secret"),  # a keypad code is no API key
    ("key", "api_key"),
)


def _generic_kind(m: re.Match[str]) -> str:
    key = m.group("key").lower()
    return next((kind for word, kind in _GENERIC_KIND_BY_KEY if word in key), "secret")


def _triggered(rule: _Rule, text: str, lowered: str) -> bool:
    if not rule.triggers:
        return True
    haystack = lowered if rule.lower else text
    return any(t in haystack for t in rule.triggers)


def _overlaps(span: Span, taken: list[Span]) -> bool:
    """Whether `span` intersects any of the sorted, disjoint spans in `taken`."""
    i = bisect.bisect_left(taken, (span[1], span[1]))
    return i > 0 and taken[i - 1][1] > span[0]


def find_secrets(text: str) -> list[SecretMatch]:
    """All non-overlapping secrets in `text`, specific kinds winning over generic ones, in text order."""
    if not text:
        return []
    lowered = text.lower()
    taken: list[Span] = [m.span() for m in _PLACEHOLDERS.finditer(text)]  # what an earlier pass hid
    found: list[SecretMatch] = []
    for rule in _RULES:
        if not _triggered(rule, text, lowered):
            continue
        for m in rule.pattern.finditer(text):
            span = rule.locate(m) if rule.locate else m.span()
            if (
                span is None
                or span[0] >= span[1]
                or _overlaps(span, taken)
                or text.startswith("[REDACTED", span[0])
            ):
                continue
            kind = (
                _generic_kind(m)
                if rule.kind in ("secret_assignment", "phrase_secret")
                else rule.kind
            )
            bisect.insort(taken, span)
            found.append(SecretMatch(kind, span[0], span[1]))
    found += _placed_secrets(text, taken)
    found.sort(key=lambda s: s.start)
    return found


def _placed_secrets(text: str, taken: list[Span]) -> list[SecretMatch]:
    """The values of a secrets' section (see `config_sections`) that no rule took."""
    found: list[SecretMatch] = []
    for placed in placed_values(text):
        span = (placed.start, placed.end)
        if _overlaps(span, taken) or not _placed_secret(text[placed.start : placed.end], placed):
            continue
        bisect.insort(taken, span)
        found.append(SecretMatch("secret", *span))
    return found


def _placed_secret(value: str, placed: PlacedValue) -> bool:
    """A value in a secrets' section is one unless it is code or a placeholder; outside a Kubernetes Secret it must
    also read as a password or a token, under a key that names no account, place or setting (a `[credentials]`
    table's `provider = "aws"` and `email: ada@example.com` are none)."""
    if len(value) < 4 or _is_code_or_placeholder(value, placed.quoted):
        return False
    if placed.manifest:
        return True
    named = re.split(r"[_.-]+", placed.key.lower())[-1]
    return named not in _NAMES_NO_SECRET and (_password_like(value) or _token_like(value))


def redact(text: str) -> str:
    """`text` with every secret replaced by a typed placeholder such as `[REDACTED:github_token]`.

    Our rules run first; then Hermes' own redactor (when installed) is asked too, and any further span it would
    mask is hidden as well, unless the original there reads as code or a placeholder (`settings.API_KEY`).
    """
    matches = find_secrets(text)
    matches = sorted([*matches, *_host_spans(text, matches)], key=lambda s: s.start)
    if not matches:
        return text
    parts: list[str] = []
    pos = 0
    for match in matches:
        parts.append(text[pos : match.start])
        parts.append(PLACEHOLDER.format(kind=match.kind))
        pos = match.end
    parts.append(text[pos:])
    return "".join(parts)


def _host_redactor() -> Callable[[str], str] | None:
    try:
        from agent.redact import redact_sensitive_text
    except ImportError:
        return None

    def run(text: str) -> str:
        return str(redact_sensitive_text(text, force=True))

    return run


_HOST_REDACT = _host_redactor()
_HOST_SCAN_CHARS = 32_768  # Hermes is asked about the first 32 KiB; our own rules cover all of it
_HOST_PIECE_CHARS = 4_096
_WIDEN_CHARS = 512
_PLACEHOLDERS = re.compile(r"\[REDACTED[^\]\n]{0,40}\]")
_TOKEN_STOP = " \t\n\"'`,;&<>()[]{}"


# where a sentence's clauses part: a secret said in one leaves the others standing
_CLAUSES = re.compile(r"[,;]\s+(?:(?:and|but|so|plus)\s+)?|\s+(?:and|but|so|plus)\s+|\s+[-–—]\s+")
_POINTS_BACK = re.compile(r"\b(?:it|its|it's|that|this|them|one)\b", re.IGNORECASE)


def without_secrets(sentence: str) -> str:
    """`sentence` without the clauses that held a secret ("" when nothing else was said): "my bank pin is
    [REDACTED:password] lol dont tell anyone" tells nothing worth keeping, while "switched my endocrinologist to
    Haukeland, my patient number there is [REDACTED:national_id]" still tells the switch."""
    if not _PLACEHOLDERS.search(sentence):
        return sentence
    kept: list[str] = []
    dropped = False
    for clause in (c.strip() for c in _CLAUSES.split(sentence)):
        # what comes after a secret and points back at it goes with it: "..., I always have to look it up"
        if _PLACEHOLDERS.search(clause) or (dropped and _POINTS_BACK.search(clause)):
            dropped = True
        elif clause:
            kept.append(clause)
    return ", ".join(kept)


def _host_spans(text: str, ours: list[SecretMatch]) -> list[SecretMatch]:
    """Spans Hermes' redactor changes that our rules left alone, widened to whole tokens.

    It runs on runs of lines of a few KiB (its patterns are line-local; ours catch multi-line keys), so its cost
    stays linear in the text.
    """
    if _HOST_REDACT is None or not text or not _may_interest_host(text):
        return []
    taken = sorted(
        [*((m.start, m.end) for m in ours), *(m.span() for m in _PLACEHOLDERS.finditer(text))]
    )
    found: list[SecretMatch] = []
    for offset, piece in _pieces(text[:_HOST_SCAN_CHARS]):
        try:
            theirs = _HOST_REDACT(piece)
        except Exception:  # a host bug must not stop capture: our own rules have already run
            log.warning("Hermes' redactor failed; our own rules stand", exc_info=True)
            return found
        for i1, i2 in _changed_tokens(piece, theirs):
            start, end = _value_part(text, *_widen(text, offset + i1, offset + i2))
            if (
                end <= start
                or _overlaps((start, end), taken)
                or not _credential_like(text[start:end])
            ):
                continue
            bisect.insort(taken, (start, end))
            found.append(SecretMatch("secret", start, end))
    return found


def _may_interest_host(text: str) -> bool:
    """Every Hermes pattern needs one of these characters or prefixes; plain prose has none."""
    return any(c in text for c in "=:-_+@") or any(
        p in text for p in ("AKIA", "AIza", "gAAAA", "eyJ", "SG.")
    )


def _pieces(text: str) -> list[tuple[int, str]]:
    """(offset, text) runs of whole lines of at most `_HOST_PIECE_CHARS` (a longer line is cut)."""
    out: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + _HOST_PIECE_CHARS)
        if end < len(text):
            newline = text.rfind("\n", start, end)
            end = newline + 1 if newline > start else end
        out.append((start, text[start:end]))
        start = end
    return out


def _changed_tokens(before: str, after: str) -> list[Span]:
    """Spans of `before` whose whitespace-delimited tokens differ in `after`."""
    if before == after:
        return []
    spans = whitespace_token_spans(before)
    old = [before[a:b] for a, b in spans]
    new = whitespace_tokens(after)
    if len(old) == len(new):  # the usual case: values masked in place
        return [span for span, a, b in zip(spans, old, new, strict=True) if a != b]
    changed: list[Span] = []
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag in ("replace", "delete"):
            changed += spans[i1:i2]
    return changed


def _credential_like(value: str) -> bool:
    """Whether a span another redactor flagged reads as a credential (not code, prose or a placeholder)."""
    if len(value) < 8 or _is_code_or_placeholder(value, False):
        return False
    return _token_like(value) or (
        any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    )


def _value_part(text: str, start: int, end: int) -> Span:
    """The value of a `key=value` / `key:value` token; the token itself otherwise."""
    token = text[start:end]
    cut = max(token.find("="), token.find(":") if "://" not in token else -1)
    return (start + cut + 1, end) if cut >= 0 else (start, end)


def _widen(text: str, start: int, end: int) -> Span:
    """The whitespace/quote-delimited token around [start, end)."""
    end = min(end, len(text))
    floor, ceiling = max(0, start - _WIDEN_CHARS), min(len(text), end + _WIDEN_CHARS)
    while start > floor and text[start - 1] not in _TOKEN_STOP and text[start - 1] not in "=:":
        start -= 1
    while end < ceiling and text[end] not in _TOKEN_STOP:
        end += 1
    return start, end
