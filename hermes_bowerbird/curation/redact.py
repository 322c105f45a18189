"""Find secrets in text and replace them with typed placeholders before anything is stored."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

Span = tuple[int, int]
Locator = Callable[[re.Match[str]], Span | None]

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
_NON_VALUES = frozenset({
    "none", "null", "nil", "true", "false", "undefined", "str", "string", "int", "bytes", "bool",
    "optional", "any", "required", "empty", "redacted", "hidden", "placeholder", "example",
    "password", "passwd", "secret", "token", "your_password", "your_token", "your_api_key",
})
_CODE_WORDS = ("pass", "pwd", "secret", "token", "key", "cred", "auth")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PASSWORD_KEYS = ("pass", "pwd")


def _value_span(m: re.Match[str], group: str = "value") -> tuple[int, int, str, bool]:
    """The value group without surrounding quotes or trailing sentence punctuation."""
    start, end = m.span(group)
    value = m.group(group)
    if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
        return start + 1, end - 1, value[1:-1], True
    stripped = value.rstrip(".!?)>]}")
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
    return bool(_IDENT.fullmatch(value)) and any(w in low for w in _CODE_WORDS)


def _assignment(m: re.Match[str]) -> Span | None:
    start, end, value, quoted = _value_span(m)
    if len(value) < 4 or _is_code_or_placeholder(value, quoted):
        return None
    key = m.group("key").lower()
    password_like = any(k in key for k in _PASSWORD_KEYS)
    if value.isdigit() and not password_like and len(value) < 12:
        return None
    if not quoted and m.group("sep") == ":" and value.isalpha() and not password_like:
        return None
    return start, end


def _password_is(m: re.Match[str]) -> Span | None:
    start, end, value, quoted = _value_span(m)
    if len(value) < 4 or _is_code_or_placeholder(value, quoted):
        return None
    if not quoted and value.isalpha():
        return None
    return start, end


def _uri_password(m: re.Match[str]) -> Span | None:
    value = m.group("value")
    if _is_code_or_placeholder(value, True) or value.lower() in {"pass", "pwd", "xxx"}:
        return None
    return m.span("value")


def _group_value(m: re.Match[str]) -> Span | None:
    return m.span("value")


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
    return m.span() if _luhn_ok(digits) else None


def _rule(kind: str, pattern: str, triggers: tuple[str, ...], *, lower: bool = False,
          locate: Locator | None = None, flags: int = 0) -> _Rule:
    return _Rule(kind, re.compile(pattern, flags), triggers, lower, locate)


_GENERIC_KEYS = (r"(?:passwd|password|passphrase|pwd|client[_-]?secret|secret[_-]?key|secret|api[_-]?key|apikey"
                 r"|access[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token"
                 r"|credentials?)")

_RULES: tuple[_Rule, ...] = (
    _rule("private_key",
          r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,32768}?-----END[A-Z0-9 ]{0,40}"
          r"PRIVATE KEY(?: BLOCK)?-----|(?:\r?\n[A-Za-z0-9+/=:, -]{0,128}){0,400})",
          ("PRIVATE KEY",)),
    _rule("aws_access_key", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])",
          ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")),
    _rule("aws_secret_key",
          r"aws_?secret_?(?:access_?)?key[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?(?P<value>[A-Za-z0-9/+]{40})"
          r"(?![A-Za-z0-9/+])",
          ("aws",), lower=True, locate=_group_value, flags=re.IGNORECASE),
    _rule("github_token", _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})" + _E,
          ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _rule("gitlab_token", _B + r"glpat-[A-Za-z0-9_-]{20,100}" + _E, ("glpat-",)),
    _rule("slack_token", _B + r"(?:xox[abposre]-[A-Za-z0-9-]{10,250}|xapp-\d-[A-Za-z0-9-]{10,250})",
          ("xox", "xapp-")),
    _rule("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,256}",
          ("hooks.slack.com",)),
    _rule("discord_webhook",
          r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{5,30}/[A-Za-z0-9_-]{20,200}",
          ("/api/webhooks/",)),
    _rule("telegram_bot_token", r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}" + _E, (":AA",)),
    _rule("stripe_key", _B + r"(?:(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,247}|whsec_[A-Za-z0-9]{24,128})" + _E,
          ("_live_", "_test_", "whsec_")),
    _rule("anthropic_api_key", _B + r"sk-ant-[A-Za-z0-9_-]{20,250}", ("sk-ant-",)),
    _rule("openai_api_key", _B + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}" + _E, ("sk-",),
          locate=_mixed_token),
    _rule("google_api_key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E, ("AIza",)),
    _rule("google_oauth_token", _B + r"(?:ya29\.[0-9A-Za-z_-]{20,2048}|GOCSPX-[A-Za-z0-9_-]{20,64})",
          ("ya29.", "GOCSPX-")),
    _rule("huggingface_token", _B + r"hf_[A-Za-z0-9]{30,40}" + _E, ("hf_",), locate=_mixed_token),
    _rule("npm_token", _B + r"npm_[A-Za-z0-9]{36}" + _E, ("npm_",)),
    _rule("pypi_token", _B + r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}", ("pypi-",)),
    _rule("sendgrid_api_key", _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E, ("SG.",)),
    _rule("twilio_key", r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9])", ("SK", "AC")),
    _rule("shopify_token", _B + r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}" + _E, ("shp",)),
    _rule("digitalocean_token", _B + r"do[por]_v1_[a-f0-9]{64}" + _E, ("_v1_",)),
    _rule("azure_storage_key", r"AccountKey=(?P<value>[A-Za-z0-9+/]{80,100}={0,2})", ("AccountKey=",),
          locate=_group_value),
    _rule("jwt", _B + r"eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{16,4096}" + _E,
          ("eyJ",)),
    _rule("bearer_token", r"\bbearer[ \t]{1,8}(?P<value>[A-Za-z0-9._~+/-]{16,4096}=*)", ("bearer",),
          lower=True, locate=_bearer, flags=re.IGNORECASE),
    _rule("basic_auth",
          r"authorization[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?basic[ \t]{1,8}(?P<value>[A-Za-z0-9+/]{8,1024}={0,2})",
          ("authorization",), lower=True, locate=_group_value, flags=re.IGNORECASE),
    _rule("uri_password",
          r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/?#@'\"<>]{0,256}:"
          r"(?P<value>[^\s/?#@'\"<>]{1,256})@[A-Za-z0-9\[]",
          ("://",), locate=_uri_password),
    _rule("credit_card", r"(?<![0-9.-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![0-9])", (), locate=_credit_card),
    _rule("password",
          r"\b(?:password|passcode|passphrase|pin)[ \t]{1,4}(?:is|was)[ \t]{0,4}:?[ \t]{1,4}"
          r"(?P<value>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"'`,;]{4,128})",
          ("pass", "pin"), lower=True, locate=_password_is, flags=re.IGNORECASE),
    _rule("secret_assignment",
          rf"(?P<key>{_GENERIC_KEYS})(?![A-Za-z0-9_])[\"']?[ \t]{{0,8}}(?P<sep>:=|=>|=|:)(?!=)[ \t]{{0,8}}"
          r"(?P<value>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'`,;]{1,256})",
          ("pass", "pwd", "secret", "key", "token", "credential"), lower=True, locate=_assignment,
          flags=re.IGNORECASE),
)

_GENERIC_KIND_BY_KEY = (("pass", "password"), ("pwd", "password"), ("secret", "secret"), ("token", "token"),
                        ("cred", "secret"), ("key", "api_key"))


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
    taken: list[Span] = []
    found: list[SecretMatch] = []
    for rule in _RULES:
        if not _triggered(rule, text, lowered):
            continue
        for m in rule.pattern.finditer(text):
            span = rule.locate(m) if rule.locate else m.span()
            if span is None or span[0] >= span[1] or _overlaps(span, taken):
                continue
            kind = _generic_kind(m) if rule.kind == "secret_assignment" else rule.kind
            bisect.insort(taken, span)
            found.append(SecretMatch(kind, span[0], span[1]))
    found.sort(key=lambda s: s.start)
    return found


def redact(text: str) -> str:
    """`text` with every secret replaced by a typed placeholder such as `[REDACTED:github_token]`."""
    matches = find_secrets(text)
    if not matches:
        return text
    parts: list[str] = []
    pos = 0
    for match in matches:
        parts.append(text[pos:match.start])
        parts.append(PLACEHOLDER.format(kind=match.kind))
        pos = match.end
    parts.append(text[pos:])
    return "".join(parts)
