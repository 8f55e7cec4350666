from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config.schema import ConfigError, load_settings, path_warnings, settings_from_dict
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply

ROOT = Path(__file__).resolve().parents[2]


def problems(raw: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        settings_from_dict(raw)
    return info.value.problems


MODEL = {"name": "a", "model": "m"}


def test_defaults() -> None:
    s = settings_from_dict({"models": [MODEL]})
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
    assert lines == ["models[0].model: $NO_SUCH_MODEL is not set"]


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
        [sys.executable, "-m", "gateway", *args],
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
    lines = problems({"models": [MODEL], "channels": {"slack": {"enabled": True}}})
    assert lines == [
        "channels.slack.bot_token: required (xoxb-...) when channels.slack.enabled is true"
    ]


def test_unset_credential_names_the_field_and_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TELEGRAM_BOT_TOKEN", "FEISHU_APP_SECRET", "DT_SECRET"):
        monkeypatch.delenv(var, raising=False)
    lines = problems(
        {
            "models": [MODEL],
            "channels": {
                "telegram": {"enabled": True, "bot_token": "$TELEGRAM_BOT_TOKEN"},
                "feishu": {
                    "enabled": True,
                    "app_id": "cli_1",
                    "app_secret": "${FEISHU_APP_SECRET}",
                },
                "dingtalk": {"enabled": True, "client_id": "ding1", "client_secret": "$DT_SECRET"},
            },
        }
    )
    assert sorted(lines) == [
        "channels.dingtalk.client_secret: $DT_SECRET is not set",
        "channels.feishu.app_secret: $FEISHU_APP_SECRET is not set",
        "channels.telegram.bot_token: $TELEGRAM_BOT_TOKEN is not set",
    ]


@pytest.mark.parametrize("text", ["gateway:\n  port: 0\n", "models: []\n", ""])
def test_no_model_is_a_config_error(tmp_path: Path, text: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    result = run_cli("check", "--config", str(cfg))
    assert result.returncode == 2
    assert "config ok" not in result.stdout  # check never says ok for what serve refuses
    assert result.stderr.strip() == (
        "config error: models: at least one model is required (see config.example.yaml)"
    )


def test_unreadable_config_files_exit_2_in_one_line(tmp_path: Path) -> None:
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"models:\n  - name: caf\xe9\n    model: m\n")
    cases = {
        ("check", "--config", str(latin)): f"config error: {latin}: not UTF-8 text (byte 21); "
        "save it as UTF-8",
        ("check", "--config", str(tmp_path)): f"config error: {tmp_path}: is a folder; give the "
        "path of the config file",
        ("chat", "--config", str(tmp_path / "none.yaml")): (
            f"config error: {tmp_path / 'none.yaml'}: file not found; `antler chat` needs a "
            "model: copy config.example.yaml to config.yaml and fill in models[]"
        ),
    }
    for args, line in cases.items():
        result = run_cli(*args)
        assert (result.returncode, result.stderr.strip()) == (2, line)


def test_taken_port_names_gateway_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cfg = tmp_path / "c.yaml"
        cfg.write_text(
            f"gateway:\n  port: {port}\nmodels:\n  - name: a\n    model: m\n"
            f"storage:\n  data_dir: {tmp_path / 'data'}\n"
        )
        for command in ("check", "serve"):
            result = run_cli(command, "--config", str(cfg))
            assert result.returncode == 2, (command, result.stderr)
            assert (
                f"config error: gateway.port: {port} on 127.0.0.1 is already in use"
                in result.stderr
            )
            assert "Traceback" not in result.stderr


def test_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    cfg = tmp_path / "c.yaml"
    cfg.write_text("models:\n  - name: a\n    model: m\nstorage:\n  data_dir: state\n")
    settings = load_settings(cfg)
    assert settings.storage.data_dir == tmp_path / "state"
    assert settings.agent.skills.path == tmp_path / "skills"
    assert path_warnings(settings) == []
    (tmp_path / "skills").rmdir()
    [warning] = path_warnings(load_settings(cfg))
    assert warning.startswith(f"agent.skills.path: {tmp_path / 'skills'} does not exist")


@pytest.mark.parametrize("failure", ["closed port", "401"])
def test_chat_shows_a_model_failure_in_plain_words(
    tmp_path: Path, fake_openai: FakeOpenAI, failure: str
) -> None:
    if failure == "401":
        fake_openai.script(Reply(status=401, error="Incorrect API key provided"))
        base = fake_openai.base_url
    else:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            base = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"models:\n  - name: a\n    model: m\n    api_key: sk-x\n    base_url: {base}\n"
        f"    max_retries: 0\nstorage:\n  data_dir: {tmp_path / 'data'}\n"
        "agent:\n  title:\n    enabled: false\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "gateway", "chat", "--config", str(cfg)],
        input="hello\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Traceback" not in out
    assert "Error" not in out  # no exception class names
    expected = "refused the API key" if failure == "401" else "The model is not reachable"
    assert expected in out
    assert len([line for line in out.splitlines() if line.strip()]) <= 6, out
