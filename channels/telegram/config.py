"""`channels.telegram` settings."""

from __future__ import annotations

import secrets
from typing import ClassVar, Literal
from urllib.parse import urlparse

from pydantic import Field, PrivateAttr, SecretStr, field_validator, model_validator

from channels.base import ChannelConfig

DEFAULT_API_BASE = "https://api.telegram.org/bot"
DEFAULT_WEBHOOK_PATH = "/telegram/webhook"


class TelegramConfig(ChannelConfig):
    """Telegram bot settings. `api_base` points the SDK at a self-hosted Bot API server."""

    # a named bot (channels/bots.py) sets its own token, and its own URL in webhook mode
    credentials: ClassVar[tuple[str, ...]] = ("bot_token",)
    own_keys: ClassVar[tuple[str, ...]] = ("webhook_url",)

    bot_token: SecretStr = SecretStr("")
    api_base: str = DEFAULT_API_BASE
    base_file_url: str = ""
    mode: Literal["polling", "webhook"] = "polling"
    webhook_url: str = ""
    webhook_secret: SecretStr = SecretStr("")
    poll_timeout: int = Field(default=30, ge=0, le=50)
    stream_interval_dm: float = Field(default=1.0, ge=1.0)
    stream_interval_group: float = Field(default=3.0, ge=3.0)
    # Telegram's bot-wide limit on messages sent and edited (about 30 a second). Raise it only
    # when Telegram allows the bot more (paid broadcasts: up to 1,000 a second).
    messages_per_second: float = Field(default=30.0, ge=1.0, le=1000.0)
    _secret_generated: bool = PrivateAttr(default=False)

    @field_validator("bot_token", "webhook_secret", mode="before")
    @classmethod
    def _unset_is_empty(cls, value: object) -> object:
        return "" if value is None else value  # an unset `$VAR` arrives as None

    @field_validator("api_base")
    @classmethod
    def _normalise_api_base(cls, value: str) -> str:
        value = value.rstrip("/")
        if "{token}" in value or value.endswith("/bot"):
            return value
        return value + "/bot"

    @model_validator(mode="after")
    def _check_mode(self) -> TelegramConfig:
        if self.enabled and not self.bot_token.get_secret_value():
            raise ValueError("bot_token: required when channels.telegram.enabled is true")
        if self.mode == "webhook" and not self.webhook_url:
            raise ValueError("webhook_url: required when channels.telegram.mode is webhook")
        secret = self.webhook_secret.get_secret_value()
        if secret and not _secret_ok(secret):
            raise ValueError("webhook_secret: must be 1-256 characters of A-Z a-z 0-9 _ -")
        if self.mode == "webhook" and not secret:
            # Never an open webhook: Telegram sends this secret with every update (setWebhook).
            self.webhook_secret = SecretStr(secrets.token_urlsafe(32))
            self._secret_generated = True
        return self

    @property
    def secret_generated(self) -> bool:
        """True when no webhook_secret was configured and one was generated for this run."""
        return self._secret_generated

    @property
    def file_base(self) -> str:
        """Where files are downloaded from: `base_file_url`, else derived from `api_base`."""
        if self.base_file_url:
            return self.base_file_url
        root = self.api_base.removesuffix("/bot")
        return root + "/file/bot"

    @property
    def webhook_path(self) -> str:
        """The local route: the path of `webhook_url` (the public URL maps onto it)."""
        return urlparse(self.webhook_url).path or DEFAULT_WEBHOOK_PATH


def _secret_ok(secret: str) -> bool:
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
    return 1 <= len(secret) <= 256 and set(secret) <= allowed
