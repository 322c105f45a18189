"""Where configuration code keeps a secret by its place rather than its name: the entries of a Kubernetes Secret's
`data:` and `stringData:`, and of a TOML/INI table or a YAML mapping named for secrets (`[secrets]`, `credentials:`).

This module only finds those values (one pass over the lines); `redact` judges whether each one reads as a secret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class PlacedValue:
    """A value in a secrets' section: its entry's key, its [start, end) span without quotes, whether it was quoted,
    and whether it sits in a Kubernetes Secret (where every value is one, whatever it looks like)."""

    key: str
    start: int
    end: int
    quoted: bool
    manifest: bool


# a section named for what it holds: "secrets", "credentials", "db_passwords", "api_tokens"
_SECRETS_NAME = re.compile(
    r"(?:[\w-]*[_-])?(?:secrets|credentials?|passwords|passwds|tokens|api[_-]?keys|private[_-]?keys)",
    re.I,
)
_DOCUMENT = re.compile(r"^---[ \t]*$", re.M)
_SECRET_KIND = re.compile(r"^kind:[ \t]*[\"']?Secret[\"']?[ \t]*$", re.M)
_NAME = re.compile(r"[\w.-]{1,80}")
_YAML_ENTRY = re.compile(r"[ \t]*(?:-[ \t]+)?(?P<key>[\w.-]{1,120}):[ \t]+(?P<value>\S.*)$")
_TABLE_ENTRY = re.compile(r"[ \t]*(?P<key>[\w.\"'-]{1,120})[ \t]*[=:][ \t]*(?P<value>\S.*)$")
_TRIGGERS = ("secret", "credential", "password", "passwd", "token", "key")


def placed_values(text: str) -> list[PlacedValue]:
    """The values that sit in a secrets' section of `text`, in text order."""
    lowered = text.lower()
    if "\n" not in text or not any(t in lowered for t in _TRIGGERS):
        return []
    starts = [0, *(m.end() for m in _DOCUMENT.finditer(text))]
    ends = [*(m.start() for m in _DOCUMENT.finditer(text)), len(text)]
    found: list[PlacedValue] = []
    for start, end in zip(starts, ends, strict=True):
        document = text[start:end]
        found += _document_values(document, start, bool(_SECRET_KIND.search(document)))
    return found


def _document_values(document: str, offset: int, manifest: bool) -> list[PlacedValue]:
    found: list[PlacedValue] = []
    yaml: _YamlSection | None = None
    in_table = False
    position = offset
    for line in document.split("\n"):
        start, position = position, position + len(line) + 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if (table := _table_name(line)) is not None:
            in_table, yaml = bool(_SECRETS_NAME.fullmatch(table.split(".")[-1])), None
            continue
        if yaml is not None and not yaml.holds(line):
            yaml = None
        if yaml is None and (header := _mapping_name(line)) is not None:
            yaml = _opened(header, _indent(line), manifest)
            in_table = in_table and yaml is None
            continue
        if yaml is not None:
            entry = _YAML_ENTRY.match(line) if yaml.child(line) else None
        else:
            entry = _TABLE_ENTRY.match(line) if in_table else None
        if entry is not None:
            found += _value(entry, start, manifest=yaml is not None and yaml.manifest)
    return found


@dataclass
class _YamlSection:
    indent: int
    manifest: bool
    child_indent: int | None = None

    def holds(self, line: str) -> bool:
        return _indent(line) > self.indent

    def child(self, line: str) -> bool:
        """Whether `line` (held by the section) is one of its own entries, not one nested deeper: the first line
        under the header sets their indent."""
        if self.child_indent is None:
            self.child_indent = _indent(line)
        return _indent(line) == self.child_indent


def _table_name(line: str) -> str | None:
    """The name a TOML/INI table header gives ("[secrets]", "[[servers.credentials]]", "Add: [secrets]")."""
    body = line.rstrip()
    opening = body.rfind("[")
    if not body.endswith("]") or opening < 0:
        return None
    before = body[:opening].rstrip("[")
    name = body[opening + 1 :].rstrip("]").strip()
    return name if (not before or before[-1].isspace()) and _NAME.fullmatch(name) else None


def _mapping_name(line: str) -> str | None:
    """The name a YAML line opens a mapping with ("credentials:", "  data:", "- secrets:  # note", "Add: secrets:")."""
    body = line.split(" #", 1)[0].rstrip()
    if not body.endswith(":") or not body[:-1].strip():
        return None
    name = body[:-1].split()[-1]
    return name if _NAME.fullmatch(name) else None


def _opened(name: str, indent: int, manifest: bool) -> _YamlSection | None:
    if manifest and name in ("data", "stringData"):
        return _YamlSection(indent, manifest=True)
    if _SECRETS_NAME.fullmatch(name):
        return _YamlSection(indent, manifest=False)
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _value(entry: re.Match[str], line_start: int, *, manifest: bool) -> list[PlacedValue]:
    """The entry's scalar value: quoted, or bare up to a comment; none for a block, a list, an anchor or a map."""
    key, value, start = (
        entry["key"].strip("\"'"),
        entry["value"].rstrip(),
        line_start + entry.start("value"),
    )
    if value[0] in "\"'":
        close = value.find(value[0], 1)
        if close <= 1:
            return []
        return [PlacedValue(key, start + 1, start + close, quoted=True, manifest=manifest)]
    if value[0] in "|>&*{[!":
        return []
    bare = re.split(r"[ \t]+#", value, maxsplit=1)[0].rstrip()
    return [PlacedValue(key, start, start + len(bare), quoted=False, manifest=manifest)]
