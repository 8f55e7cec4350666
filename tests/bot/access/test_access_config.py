"""`access` in config.yaml: unknown roles stop start-up with their YAML path; grants naming
tools or models nobody has are warnings of `antler check`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.config.schema import ConfigError, settings_from_dict

ROOT = Path(__file__).resolve().parents[3]
MODEL = {"name": "a", "model": "m"}


def test_unknown_roles_are_named_by_their_yaml_path() -> None:
    raw = {
        "models": [MODEL],
        "access": {
            "default_role": "staff",
            "people": {"telegram:42": "boss"},
            "chats": {"slack:C1": "guest"},
            "channels": {"slack": "visitor"},
        },
    }
    with pytest.raises(ConfigError) as info:
        settings_from_dict(raw)
    roles = "(roles: admin, member, guest)"
    assert info.value.problems == [
        f"access.default_role: unknown role 'staff' {roles}",
        f"access.people.telegram:42: unknown role 'boss' {roles}",
        f"access.channels.slack: unknown role 'visitor' {roles}",
    ]


def test_a_model_no_one_configured_stops_start_up_a_glob_only_warns() -> None:
    raw = {"models": [MODEL], "access": {"roles": {"eng": {"models": ["a", "gpt-4o", "o*"]}}}}
    with pytest.raises(ConfigError) as info:
        settings_from_dict(raw)
    assert info.value.problems == ["access.roles.eng.models[1]: unknown model 'gpt-4o' (models: a)"]


def test_a_bad_role_field_is_named() -> None:
    raw = {"models": [MODEL], "access": {"roles": {"eng": {"tool": ["bash"]}}}}
    with pytest.raises(ConfigError) as info:
        settings_from_dict(raw)
    assert info.value.problems == ["access.roles.eng.tool: unknown key"]


def test_operator_roles_join_the_defaults() -> None:
    raw = {"models": [MODEL], "access": {"roles": {"eng": {"tools": ["bash"]}}}}
    settings = settings_from_dict(raw)
    assert list(settings.access.roles) == ["admin", "member", "guest", "eng"]


def test_check_warns_about_tools_and_models_no_one_has(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "models:\n  - name: a\n    model: m\n"
        f"storage:\n  data_dir: {tmp_path / 'data'}\n"
        "gateway:\n  port: 0\n"
        "access:\n  roles:\n    eng:\n      tools: [bash, 'github:*', bsh]\n"
        "      models: [a, gpt-*]\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "gateway", "check", "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "warning: access.roles.eng.tools: no tool matches 'bsh'" in result.stdout
    assert "warning: access.roles.eng.models: no model matches 'gpt-*'" in result.stdout
    assert "'bash'" not in result.stdout
    assert "github" not in result.stdout
