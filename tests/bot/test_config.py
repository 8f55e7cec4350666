from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import ConfigError, load_settings, settings_from_dict

ROOT = Path(__file__).resolve().parents[2]


def problems(raw: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        settings_from_dict(raw)
    return info.value.problems


def test_defaults() -> None:
    s = settings_from_dict({})
    assert s.gateway.host == "127.0.0.1"
    assert s.gateway.port == 8001
    assert s.channels.max_concurrent_runs == 16
    assert s.channels.dedupe_window_hours == 24
    assert str(s.storage.data_dir) == ".antler"


def test_errors_name_the_yaml_path() -> None:
    lines = problems(
        {
            "models": [{"name": "a", "model": "m", "base_url": "not a url"}],
            "gateway": {"port": "x"},
            "bogus": 1,
        }
    )
    assert any(line.startswith("models[0].base_url: invalid URL") for line in lines)
    assert any(line.startswith("gateway.port:") for line in lines)
    assert "bogus: unknown key" in lines


def test_missing_field_and_channel_section_paths() -> None:
    lines = problems({"models": [{"name": "a"}], "channels": {"console": {"nope": True}}})
    assert "models[0].model: field required" in lines
    assert "channels.console.nope: unknown key" in lines


def test_env_substitution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-secret")
    monkeypatch.setenv("HOST", "example.test")
    monkeypatch.delenv("UNSET_KEY", raising=False)
    s = settings_from_dict(
        {
            "models": [
                {"name": "a", "model": "m", "api_key": "$MY_KEY", "base_url": "https://${HOST}/v1"},
                {"name": "b", "model": "m", "api_key": "${UNSET_KEY}"},
            ]
        }
    )
    assert s.models[0].api_key is not None
    assert s.models[0].api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(s)
    assert str(s.models[0].base_url) == "https://example.test/v1"
    assert s.models[1].api_key is None


def test_unset_env_var_for_a_required_value_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_MODEL", raising=False)
    lines = problems({"models": [{"name": "a", "model": "$NO_SUCH_MODEL"}]})
    assert lines == ["models[0].model: environment variable NO_SUCH_MODEL is not set"]


def test_cross_checks() -> None:
    lines = problems(
        {
            "models": [{"name": "a", "model": "m"}, {"name": "a", "model": "n"}],
            "default_model": "zzz",
        }
    )
    assert "models[1].name: duplicate model name 'a'" in lines
    assert "default_model: 'zzz' is not one of models[].name" in lines


def test_bad_yaml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("models: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_settings(bad)
    with pytest.raises(ConfigError, match="file not found"):
        load_settings(tmp_path / "missing.yaml")


def test_example_config_is_valid() -> None:
    settings = load_settings(ROOT / "config.example.yaml")
    assert settings.models


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_cli_bad_config_exits_2_with_the_path(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("models:\n  - name: a\n    model: m\n    base_url: nope\n")
    result = run_cli("check", "--config", str(cfg))
    assert result.returncode == 2
    assert "models[0].base_url: invalid URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_check_and_version(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("models:\n  - name: a\n    model: m\n")
    result = run_cli("check", "--config", str(cfg))
    assert result.returncode == 0, result.stderr
    assert "config ok" in result.stdout
    assert "no API key" in result.stdout
    assert run_cli("--version").stdout.startswith("antler ")


def test_enabled_channel_without_credentials_is_named() -> None:
    lines = problems({"channels": {"slack": {"enabled": True}}})
    assert lines == ["channels.slack: bot_token (xoxb-...) is required when enabled"]
