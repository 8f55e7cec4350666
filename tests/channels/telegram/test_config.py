from __future__ import annotations

import pytest
from pydantic import ValidationError

from channels.telegram.config import TelegramConfig


def test_api_base_gets_bot_suffix_and_file_url_follows() -> None:
    config = TelegramConfig(api_base="http://127.0.0.1:8081/")
    assert config.api_base == "http://127.0.0.1:8081/bot"
    assert config.file_base == "http://127.0.0.1:8081/file/bot"
    assert TelegramConfig().api_base == "https://api.telegram.org/bot"


def test_enabled_needs_a_token_and_webhook_needs_url_and_secret() -> None:
    with pytest.raises(ValidationError, match="bot_token"):
        TelegramConfig(enabled=True)
    with pytest.raises(ValidationError, match="webhook_url"):
        TelegramConfig(mode="webhook")
    with pytest.raises(ValidationError, match="webhook_secret"):
        TelegramConfig(mode="webhook", webhook_url="https://x/tg", webhook_secret="bad secret!")
    config = TelegramConfig(
        mode="webhook", webhook_url="https://x.io/hooks/tg", webhook_secret="s_1"
    )
    assert config.webhook_path == "/hooks/tg"


def test_stream_intervals_cannot_undercut_telegram_limits() -> None:
    with pytest.raises(ValidationError):
        TelegramConfig(stream_interval_group=1.0)


def test_token_is_secret() -> None:
    assert "123:abc" not in repr(TelegramConfig(bot_token="123:abc"))


def test_unset_env_secrets_mean_empty() -> None:
    config = TelegramConfig(bot_token=None, webhook_secret=None)
    assert config.bot_token.get_secret_value() == ""


def test_webhook_mode_never_runs_without_a_secret() -> None:
    config = TelegramConfig(mode="webhook", webhook_url="https://x.io/tg")
    secret = config.webhook_secret.get_secret_value()
    assert config.secret_generated
    assert len(secret) >= 32
    assert (
        TelegramConfig(
            mode="webhook", webhook_url="https://x.io/tg", webhook_secret="s_1"
        ).secret_generated
        is False
    )
