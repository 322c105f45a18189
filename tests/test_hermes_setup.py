"""hermes-install / hermes-uninstall: the shim, config.yaml edits that keep everything else, real host discovery."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_bowerbird import hermes_setup
from hermes_bowerbird.errors import HostError

CONFIG = """\
# my Hermes settings
model:
  default: some-model   # keep this comment
memory:
  # which provider
  provider: holographic
  memory_enabled: true
display:
  skin: dark
"""


def test_install_writes_shim_and_sets_provider_keeping_the_rest(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(CONFIG)
    report = hermes_setup.install(tmp_path)
    text = (tmp_path / "config.yaml").read_text()
    assert "# keep this comment" in text and "# which provider" in text
    data = yaml.safe_load(text)
    assert data["memory"] == {"provider": "bowerbird", "memory_enabled": True}
    assert data["model"] == {"default": "some-model"} and data["display"] == {"skin": "dark"}
    assert report.backup_path is not None and report.backup_path.read_text() == CONFIG
    shim = (tmp_path / "plugins" / "bowerbird" / "__init__.py").read_text()
    assert "MemoryProvider" in shim[:8192]
    assert (tmp_path / "plugins" / "bowerbird" / "plugin.yaml").exists()
    assert hermes_setup.is_installed(tmp_path)


def test_uninstall_restores_the_previous_provider(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(CONFIG)
    hermes_setup.install(tmp_path)
    hermes_setup.uninstall(tmp_path)
    assert yaml.safe_load((tmp_path / "config.yaml").read_text()) == yaml.safe_load(CONFIG)
    assert not (tmp_path / "plugins" / "bowerbird").exists()


@pytest.mark.parametrize(
    "initial, expected_memory",
    [
        ("", {"provider": "bowerbird"}),
        ("model: x\n", {"provider": "bowerbird"}),
        ("memory:\n  memory_enabled: false\n", {"memory_enabled": False, "provider": "bowerbird"}),
        (
            "memory: {provider: mem0, user_profile_enabled: true}\n",
            {"provider": "bowerbird", "user_profile_enabled": True},
        ),
        ("memory:\n    provider: honcho  # old\n", {"provider": "bowerbird"}),
    ],
)
def test_config_layouts(tmp_path: Path, initial: str, expected_memory: dict[str, object]) -> None:
    if initial:
        (tmp_path / "config.yaml").write_text(initial)
    hermes_setup.install(tmp_path)
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["memory"] == expected_memory


def test_invalid_yaml_is_refused_untouched(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("memory: [unclosed\n")
    with pytest.raises(HostError, match="not valid YAML"):
        hermes_setup.install(tmp_path)
    assert (tmp_path / "config.yaml").read_text() == "memory: [unclosed\n"


def test_the_real_host_discovers_and_loads_the_installed_provider(tmp_path: Path) -> None:
    """`bowerbird hermes-install` then the real hermes-agent loads BowerbirdProvider (fresh processes)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("model:\n  default: fake\n")
    exe = shutil.which("bowerbird", path=str(Path(sys.executable).parent))
    assert exe, "the bowerbird console script is installed with the package"
    subprocess.run(
        [exe, "hermes-install", "--hermes-home", str(home)], check=True, capture_output=True
    )
    probe = (
        "from plugins.memory import load_memory_provider, discover_memory_providers\n"
        "p = load_memory_provider('bowerbird')\n"
        "print(type(p).__name__, p.name)\n"
        "print([d for d in discover_memory_providers() if d[0] == 'bowerbird'])\n"
        "from hermes_cli.config import load_config\n"
        "print(load_config()['memory']['provider'])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["HERMES_HOME"] = str(home)
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout.splitlines()
    assert out[0] == "BowerbirdProvider bowerbird"
    assert "('bowerbird'," in out[1] and "True)" in out[1]
    assert out[2] == "bowerbird"
