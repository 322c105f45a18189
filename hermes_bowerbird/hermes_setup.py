"""Switch bowerbird on or off in a Hermes home: the plugin shim folder and `memory.provider` in config.yaml."""

from __future__ import annotations

import json
import logging
import re
import shutil
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from .errors import HostError

log = logging.getLogger(__name__)

PROVIDER_NAME = "bowerbird"
_STATE_FILE = "install.json"

_SHIM_INIT = '''"""Hermes memory provider shim for hermes-bowerbird (written by `bowerbird hermes-install`).

The provider itself lives in the installed `hermes_bowerbird` package; this file only hands it to Hermes,
which discovers user plugins that mention MemoryProvider / register_memory_provider.
"""

from hermes_bowerbird import register  # noqa: F401  (register(ctx) calls ctx.register_memory_provider)
from hermes_bowerbird.provider import BowerbirdProvider  # noqa: F401  (the MemoryProvider subclass)
'''

_SHIM_CLI = '''"""`hermes bowerbird ...`: the bowerbird command inside the Hermes CLI.

Written by `bowerbird hermes-install`.
"""

from hermes_bowerbird.hermes_cli_bridge import register_cli  # noqa: F401
'''

_MEMORY_LINE = re.compile(r"^memory\s*:(.*)$")
_PROVIDER_LINE = re.compile(r"^(\s+)provider\s*:.*$")


@dataclass(frozen=True)
class InstallReport:
    plugin_dir: Path
    config_path: Path
    backup_path: Path | None
    previous_provider: str | None


def plugin_dir(hermes_home: Path) -> Path:
    return hermes_home / "plugins" / PROVIDER_NAME


def install(hermes_home: Path) -> InstallReport:
    """Write the shim, back up config.yaml, then set memory.provider: bowerbird keeping everything else."""
    hermes_home = hermes_home.expanduser()
    target = plugin_dir(hermes_home)
    target.mkdir(parents=True, exist_ok=True)
    (target / "__init__.py").write_text(_SHIM_INIT, encoding="utf-8")
    (target / "cli.py").write_text(_SHIM_CLI, encoding="utf-8")
    (target / "plugin.yaml").write_text(_plugin_yaml(), encoding="utf-8")
    config_path = hermes_home / "config.yaml"
    previous = _current_provider(config_path)
    backup = _backup(config_path)
    set_provider(config_path, PROVIDER_NAME)
    if previous != PROVIDER_NAME:
        _save_state(hermes_home, {"previous_provider": previous, "installed_at": time.time()})
    log.info("bowerbird installed into %s", hermes_home)
    return InstallReport(target, config_path, backup, previous)


def uninstall(hermes_home: Path) -> InstallReport:
    """Remove the shim and restore the provider that was active before install (memories are kept)."""
    hermes_home = hermes_home.expanduser()
    target = plugin_dir(hermes_home)
    if target.exists():
        shutil.rmtree(target)
    config_path = hermes_home / "config.yaml"
    backup = None
    if _current_provider(config_path) == PROVIDER_NAME:
        backup = _backup(config_path)
        previous = _load_state(hermes_home).get("previous_provider")
        set_provider(config_path, previous if isinstance(previous, str) and previous else None)
    state = hermes_home / PROVIDER_NAME / _STATE_FILE
    previous_provider = _load_state(hermes_home).get("previous_provider")
    state.unlink(missing_ok=True)
    return InstallReport(
        target,
        config_path,
        backup,
        previous_provider if isinstance(previous_provider, str) else None,
    )


@dataclass(frozen=True)
class ProviderState:
    """Whether a Hermes home runs bowerbird: the provider its config.yaml names and whether the plugin folder
    Hermes 0.19 loads it from is there (`problem` says why it could not be read)."""

    config_path: Path
    plugin_dir: Path
    provider: str | None
    plugin_present: bool
    problem: str | None = None

    @property
    def active(self) -> bool:
        return self.provider == PROVIDER_NAME and self.plugin_present


def provider_state(hermes_home: Path) -> ProviderState:
    """Read, never change, how the home's memory provider is set (for `bowerbird status`)."""
    hermes_home = hermes_home.expanduser()
    config_path = hermes_home / "config.yaml"
    target = plugin_dir(hermes_home)
    present = (target / "__init__.py").is_file()
    try:
        provider = _current_provider(config_path)
    except (HostError, OSError, UnicodeDecodeError) as exc:
        return ProviderState(config_path, target, None, present, problem=str(exc))
    return ProviderState(config_path, target, provider, present)


def is_installed(hermes_home: Path) -> bool:
    return (plugin_dir(hermes_home) / "__init__.py").exists() and _current_provider(
        hermes_home / "config.yaml"
    ) == PROVIDER_NAME


def set_provider(config_path: Path, provider: str | None) -> None:
    """Set (or with None remove) memory.provider by editing lines, so comments and other keys survive."""
    text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    before = _parse(text, config_path)
    new_text = _edit_provider(text, provider)
    after = _parse(new_text, config_path)
    _verify(before, after, provider)
    config_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = config_path.with_name(config_path.name + ".tmp")
    tmp.write_text(new_text, encoding="utf-8")
    tmp.replace(config_path)


def _edit_provider(text: str, provider: str | None) -> str:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _MEMORY_LINE.match(line)), None)
    value = f"provider: {provider}" if provider else None
    if start is None:
        if provider is None:
            return text
        suffix = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{suffix}memory:\n  {value}\n"
    inline = _MEMORY_LINE.match(lines[start]).group(1).strip()  # type: ignore[union-attr]
    if inline and not inline.startswith("#"):
        return _edit_inline(lines, start, inline, provider)
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith((" ", "\t", "#"))):
        end += 1
    for i in range(start + 1, end):
        match = _PROVIDER_LINE.match(lines[i])
        if match:
            if value is None:
                del lines[i]
            else:
                lines[i] = f"{match.group(1)}{value}"
            return "\n".join(lines) + "\n"
    if value is not None:
        indent = _child_indent(lines[start + 1 : end])
        lines.insert(start + 1, f"{indent}{value}")
    return "\n".join(lines) + "\n"


def _edit_inline(lines: list[str], start: int, inline: str, provider: str | None) -> str:
    mapping = yaml.safe_load(inline) or {}
    if not isinstance(mapping, dict):
        raise HostError(
            f"config.yaml: 'memory' is {inline!r}, not a mapping; set memory.provider by hand"
        )
    if provider is None:
        mapping.pop("provider", None)
    else:
        mapping["provider"] = provider
    dumped = yaml.safe_dump(mapping, default_flow_style=True, sort_keys=False).strip()
    lines[start] = f"memory: {dumped}"
    return "\n".join(lines) + "\n"


def _child_indent(block: list[str]) -> str:
    for line in block:
        if line.strip() and not line.lstrip().startswith("#"):
            return line[: len(line) - len(line.lstrip())]
    return "  "


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise HostError(f"{path} is not valid YAML ({exc}); fix it before installing") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise HostError(f"{path}: the top level is not a mapping")
    return data


def _verify(before: dict[str, Any], after: dict[str, Any], provider: str | None) -> None:
    """Refuse to write unless the edit changed memory.provider and nothing else."""
    expected = json.loads(json.dumps(before, default=str))
    memory = dict(expected.get("memory") or {})
    if provider is None:
        memory.pop("provider", None)
    else:
        memory["provider"] = provider
    if memory or "memory" in expected:
        expected["memory"] = memory
    if json.loads(json.dumps(after, default=str)) != expected:
        raise HostError(
            "could not edit config.yaml safely (unusual layout); set memory.provider by hand"
        )


def _current_provider(config_path: Path) -> str | None:
    if not config_path.exists():
        return None
    data = _parse(config_path.read_text(encoding="utf-8"), config_path)
    memory = data.get("memory")
    provider = memory.get("provider") if isinstance(memory, dict) else None
    return str(provider) if provider else None


def _backup(config_path: Path) -> Path | None:
    if not config_path.exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = config_path.with_name(f"{config_path.name}.bak-{stamp}")
    n = 1
    while backup.exists():
        backup = config_path.with_name(f"{config_path.name}.bak-{stamp}-{n}")
        n += 1
    shutil.copy2(config_path, backup)
    return backup


def _plugin_yaml() -> str:
    shipped = resources.files("hermes_bowerbird") / "plugin.yaml"
    if shipped.is_file():
        return shipped.read_text(encoding="utf-8")
    return (Path(__file__).resolve().parent.parent / "plugin.yaml").read_text(encoding="utf-8")


def _save_state(hermes_home: Path, state: dict[str, Any]) -> None:
    path = hermes_home / PROVIDER_NAME / _STATE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state), encoding="utf-8")


def _load_state(hermes_home: Path) -> dict[str, Any]:
    path = hermes_home / PROVIDER_NAME / _STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
