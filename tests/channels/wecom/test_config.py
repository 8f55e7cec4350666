"""The `channels.wecom` section: what `antler check` refuses, in one line each."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.schema import ConfigError, settings_from_dict
from channels.base import ChannelError
from channels.wecom.config import WeComConfig
from channels.wecom.connection import trust

MODEL = {"name": "a", "model": "m"}


def problems(section: dict[str, object]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        settings_from_dict({"models": [MODEL], "channels": {"wecom": section}})
    return info.value.problems


def test_enabled_without_credentials_is_named() -> None:
    assert problems({"enabled": True}) == [
        "channels.wecom: bot_id and secret: required when channels.wecom.enabled is true"
    ]


def test_a_ws_url_without_tls_is_refused_with_the_reason() -> None:
    (line,) = problems({"bot_id": "b", "secret": "s", "ws_url": "ws://127.0.0.1:9000"})
    assert line.startswith("channels.wecom.ws_url: must start with wss://")
    assert "ca_file" in line


def test_a_valid_section() -> None:
    settings = settings_from_dict(
        {"models": [MODEL], "channels": {"wecom": {"enabled": True, "bot_id": "b", "secret": "s"}}}
    )
    wecom = settings.channels.platform("wecom")
    assert isinstance(wecom, WeComConfig)
    assert wecom.ws_url == "wss://openws.work.weixin.qq.com"
    assert wecom.secret_text == "s"


def test_an_unreadable_ca_file_stops_the_start_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate")
    for path in (bad, tmp_path / "missing.pem"):
        config = WeComConfig(bot_id="b", secret="s", ca_file=path)
        with pytest.raises(ChannelError, match=r"channels\.wecom\.ca_file: .* is not a readable"):
            trust(config)
