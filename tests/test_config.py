"""Config: defaults with no file, YAML, BOWERBIRD_* overrides, wizard strings coerced, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_bowerbird.config import RetrievalWeights, load_config, save_settings
from hermes_bowerbird.errors import ConfigError


def test_defaults_work_with_no_file(tmp_path: Path) -> None:
    config = load_config(tmp_path, environ={})
    assert config.db_path == tmp_path / "bowerbird" / "memory.db"
    assert config.embedding_backend == "auto"
    assert config.maintenance_enabled is True
    assert config.weights == RetrievalWeights()


def _write(home: Path, text: str) -> None:
    (home / "bowerbird").mkdir(parents=True, exist_ok=True)
    (home / "bowerbird" / "config.yaml").write_text(text)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("false", False),
        ("False", False),
        ("no", False),
        ("0", False),
        ("off", False),
        ("true", True),
        ("yes", True),
        ("1", True),
        ("on", True),
    ],
)
def test_wizard_strings_become_booleans(tmp_path: Path, raw: str, expected: bool) -> None:
    _write(tmp_path, f"maintenance_enabled: '{raw}'\n")
    assert load_config(tmp_path, environ={}).maintenance_enabled is expected


def test_yaml_then_environment_then_overrides(tmp_path: Path) -> None:
    _write(tmp_path, "prefetch_budget_tokens: 400\nrecall_limit: '5'\nweights:\n  rrf_k: 30\n")
    env = {
        "BOWERBIRD_RECALL_LIMIT": "7",
        "BOWERBIRD_WEIGHTS_MMR_LAMBDA": "0.5",
        "BOWERBIRD_DB_PATH": "~/x.db",
    }
    config = load_config(tmp_path, environ=env, overrides={"prefetch_budget_tokens": 300})
    assert config.prefetch_budget_tokens == 300
    assert config.recall_limit == 7
    assert config.weights.rrf_k == 30.0
    assert config.weights.mmr_lambda == 0.5
    assert config.db_path == Path("~/x.db").expanduser()


def test_gemini_key_from_the_usual_variable(tmp_path: Path) -> None:
    assert load_config(tmp_path, environ={"GEMINI_API_KEY": "k"}).gemini_api_key == "k"


@pytest.mark.parametrize(
    "text, message",
    [
        ("recall_limit: many\n", "recall_limit"),
        ("maintenance_enabled: perhaps\n", "maintenance_enabled"),
        ("no_such_setting: 1\n", "unknown setting"),
        ("weights:\n  nope: 1\n", "unknown retrieval weight"),
        ("- a list\n", "mapping"),
        ("key: [unclosed\n", "cannot read"),
    ],
)
def test_bad_files_give_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    _write(tmp_path, text)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path, environ={})


def test_unknown_environment_variables_are_ignored(tmp_path: Path) -> None:
    assert load_config(tmp_path, environ={"BOWERBIRD_NOT_A_SETTING": "1"}).recall_limit == 8


def test_save_settings_merges_and_validates(tmp_path: Path) -> None:
    _write(tmp_path, "recall_limit: 5\n")
    save_settings(tmp_path, {"prefetch_budget_tokens": "450"})
    config = load_config(tmp_path, environ={})
    assert config.recall_limit == 5
    assert config.prefetch_budget_tokens == 450
    with pytest.raises(ConfigError):
        save_settings(tmp_path, {"recall_limit": "lots"})
    assert load_config(tmp_path, environ={}).recall_limit == 5


@pytest.mark.parametrize(
    "key, misspelt, allowed",
    [
        ("llm_backend", "gemni", "auto, host, gemini, none"),
        ("llm_backend", "local", "auto, host, gemini, none"),
        ("llm_backend", "Gemini", "auto, host, gemini, none"),
        ("embedding_backend", "onxx", "auto, local, onnx, torch, gemini, none"),
    ],
)
def test_a_misspelt_choice_is_refused_naming_the_allowed_values(
    tmp_path: Path, key: str, misspelt: str, allowed: str
) -> None:
    with pytest.raises(ConfigError, match=f"{key}.*{misspelt}.*{allowed}"):
        load_config(tmp_path, environ={}, overrides={key: misspelt})


def test_a_misspelt_choice_in_the_environment_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="llm_backend"):
        load_config(tmp_path, environ={"BOWERBIRD_LLM_BACKEND": "gemeni"})
