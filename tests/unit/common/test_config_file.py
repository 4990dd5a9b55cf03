"""One config file, `$XDG_CONFIG_HOME/kronii/config.toml` (or KRONII_CONFIG): the environment wins over
it, it wins over the defaults; an unknown key or a bad value is a sentence naming the file and key;
`kronii config path|show|check` as a person runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kronii.foundation.settings import SettingsError, load_settings
from kronii.launcher.up import LauncherSettings
from kronii.pipeline.settings import PipelineSettings

KRONII = str(Path(sys.executable).with_name("kronii"))
GOOD = """
log_level = "debug"
stop_agents = true

[pipeline]
llm_backend = "openai"
llm_base_url = "http://127.0.0.1:8180/v1"
llm_model = "gemma"
llm_timeout_secs = 20
"""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("KRONII_"):
            monkeypatch.delenv(name)  # KRONII_CONFIG too: XDG_CONFIG_HOME decides here
    home = tmp_path / "xdg"
    (home / "kronii").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    path = home / "kronii" / "config.toml"
    path.write_text(GOOD)
    return path


def test_the_file_sets_shared_and_service_settings(config: Path) -> None:
    pipeline = load_settings(PipelineSettings)
    assert (pipeline.llm_backend.value, pipeline.llm_model, pipeline.llm_timeout_secs) == (
        "openai",
        "gemma",
        20,
    )
    assert pipeline.log_level == "DEBUG"  # a shared key at the top reaches every service
    assert load_settings(LauncherSettings).stop_agents is True


def test_the_environment_wins_over_the_file_and_the_file_over_the_defaults(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KRONII_PIPELINE_LLM_MODEL", "from-env")
    monkeypatch.setenv("KRONII_LOG_LEVEL", "ERROR")
    pipeline = load_settings(PipelineSettings)
    assert (pipeline.llm_model, pipeline.log_level) == ("from-env", "ERROR")
    assert pipeline.llm_base_url == "http://127.0.0.1:8180/v1"  # still the file's
    assert pipeline.context_budget_tokens == 1_200  # the default


def test_a_bad_value_in_the_file_names_the_file_and_the_key(config: Path) -> None:
    config.write_text("[pipeline]\nllm_timeout_secs = -3\n")
    with pytest.raises(SettingsError) as refused:
        load_settings(PipelineSettings)
    assert (
        f"KRONII_PIPELINE_LLM_TIMEOUT_SECS ({config}: [pipeline] llm_timeout_secs) is invalid"
        in refused.value.message
    )


def test_a_file_that_is_not_toml_is_one_sentence(config: Path) -> None:
    config.write_text("log_level = [\n")
    with pytest.raises(SettingsError, match=r"config.toml is not valid TOML"):
        load_settings(PipelineSettings)


def kronii(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KRONII, "config", *args], capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )


def test_config_path_show_and_check_as_a_person_runs_them(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert kronii("path").stdout.strip() == str(config)
    monkeypatch.setenv("KRONII_PIPELINE_LLM_MODEL", "from-env")
    shown = json.loads(kronii("show", "--json").stdout)
    pipeline = shown["sections"]["pipeline"]
    assert pipeline["llm_model"] == {
        "value": "from-env",
        "from": "env",
        "variable": "KRONII_PIPELINE_LLM_MODEL",
    }
    assert (
        pipeline["llm_backend"]["from"] == "file" and pipeline["context_budget_tokens"]["from"] == "default"
    )
    assert shown["sections"][""]["log_level"] == {
        "value": "DEBUG",
        "from": "file",
        "variable": "KRONII_LOG_LEVEL",
    }
    text = kronii("show").stdout
    assert 'llm_backend                  = "openai"  # file: KRONII_PIPELINE_LLM_BACKEND' in text
    checked = kronii("check")
    assert (checked.returncode, checked.stdout.strip()) == (0, f"{config} is valid")


def test_check_names_each_unknown_key_with_a_suggestion_and_exits_2(config: Path) -> None:
    config.write_text('log_levl = "x"\n[pipeline]\nllm_backnd = "openai"\n[pipelin]\nx = 1\n')
    checked = kronii("check")
    assert checked.returncode == 2
    assert "kronii: config: log_levl is not a setting; did you mean 'log_level'?" in checked.stderr
    assert (
        "kronii: config: [pipeline] llm_backnd is not a setting; did you mean 'llm_backend'?"
        in checked.stderr
    )
    assert "kronii: config: [pipelin] is not a part of kronii; did you mean 'pipeline'?" in checked.stderr


def test_a_secret_in_the_file_is_never_shown(config: Path) -> None:
    config.write_text('api_token = "s3cr3t-mesh-token"\n[pipeline]\nllm_api_key = "sk-live-abc"\n')
    shown = kronii("show").stdout
    assert "s3cr3t" not in shown and "sk-live" not in shown and shown.count("********") >= 2


def test_show_masks_the_secrets_only_not_the_settings_named_like_them(config: Path) -> None:
    config.write_text(
        'api_token = "s3cr3t-mesh"\n'
        "[capture]\ntoken_ttl_secs = 600\nuse_secret_service = false\n"
        '[pipeline]\nllm_api_key = "sk-live-abc"\nllm_max_output_tokens = 900\n'
        '[supervisor]\ntoken_secret = "signing-secret-0123456789"\ntoken_ttl_secs = 1800\n'
    )
    shown = kronii("show", "--json")
    assert shown.returncode == 0, shown.stderr
    sections = json.loads(shown.stdout)["sections"]
    assert sections["capture"]["token_ttl_secs"]["value"] == 600
    assert sections["capture"]["use_secret_service"]["value"] is False
    assert sections["pipeline"]["llm_max_output_tokens"]["value"] == 900
    assert sections["supervisor"]["token_ttl_secs"]["value"] == 1800
    # api_token is a plain string setting: masked as a credential all the same (fail closed).
    for section, name in (("", "api_token"), ("pipeline", "llm_api_key"), ("supervisor", "token_secret")):
        assert sections[section][name]["value"] == "********", (section, name)
    text = kronii("show").stdout
    assert not any(secret in text for secret in ("s3cr3t", "sk-live", "signing-secret"))


def test_show_with_bad_values_shows_every_other_setting_and_each_bad_value_with_its_error(
    config: Path,
) -> None:
    config.write_text(
        GOOD + 'llm_max_output_tokens = 100\n[capture]\ntoken_ttl_secs = "soon"\n'
        '[supervisor]\ntoken_secret = ""\n'
    )
    shown = kronii("show", "--json")
    assert shown.returncode == 2, shown.stderr
    sections = json.loads(shown.stdout)["sections"]
    ttl = sections["capture"]["token_ttl_secs"]
    assert ttl["value"] == "soon" and "valid integer" in ttl["error"]
    budget = sections["pipeline"]["llm_max_output_tokens"]
    assert budget["value"] == 100 and "raise it to at least" in budget["error"]
    assert sections["pipeline"]["llm_model"] == {"value": "gemma", "from": "file",
                                                 "variable": "KRONII_PIPELINE_LLM_MODEL"}  # fmt: skip
    assert sections[""]["log_level"]["value"] == "DEBUG"
    text = kronii("show")
    assert text.returncode == 2
    assert (
        'token_ttl_secs              = "soon"  # file: KRONII_CAPTURE_TOKEN_TTL_SECS  ERROR: ' in text.stdout
    )
    assert 'llm_model                    = "gemma"' in text.stdout


def test_show_of_a_file_that_is_not_toml_says_so_and_shows_the_rest(config: Path) -> None:
    config.write_text('log_level = "debug"\n[pipeline\n')
    shown = kronii("show")
    assert shown.returncode == 2
    assert f"# ERROR: {config} is not valid TOML" in shown.stdout
    assert 'log_level              = "INFO"  # default: KRONII_LOG_LEVEL' in shown.stdout
