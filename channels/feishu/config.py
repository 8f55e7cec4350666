"""The `channels.feishu` config section."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from channels.base import ChannelConfig
from channels.section import required

DOMAINS = {"feishu": "https://open.feishu.cn", "lark": "https://open.larksuite.com"}


class FeishuConfig(ChannelConfig):
    """Feishu (China) or Lark (international): one app, one bot."""

    # a named bot (channels/bots.py) is an app of its own: its id, secret, event keys and
    # callback path (`/feishu/events/<bot>` unless it sets `webhook_path`)
    credentials: ClassVar[tuple[str, ...]] = ("app_id", "app_secret")
    own_keys: ClassVar[tuple[str, ...]] = ("verification_token", "encrypt_key")
    route_keys: ClassVar[tuple[str, ...]] = ("webhook_path",)

    app_id: str = ""
    app_secret: SecretStr = SecretStr("")
    domain: str = Field(
        default="feishu", description="`feishu`, `lark` or a base URL (e.g. a test server)"
    )
    mode: Literal["ws", "webhook"] = "ws"
    verification_token: SecretStr = SecretStr("")
    encrypt_key: SecretStr = SecretStr("")
    webhook_path: str = "/feishu/events"
    group_scope: Literal["chat", "topic"] = "topic"
    stream_interval: float = Field(default=0.3, gt=0)
    card_mode: Literal["cardkit", "patch"] = "cardkit"
    request_timeout: float = Field(default=10.0, gt=0)
    silence_timeout: float = Field(
        default=0.0,
        ge=0,
        description="reconnect after this long without a frame (0: 3 x the ping interval)",
    )

    @field_validator("app_id", "app_secret", "verification_token", "encrypt_key", mode="before")
    @classmethod
    def _unset_is_empty(cls, value: object) -> object:
        return "" if value is None else value  # an unset $VAR means "not given"

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, value: str) -> str:
        if value in DOMAINS or value.startswith(("http://", "https://")):
            return value
        raise ValueError("domain must be 'feishu', 'lark' or an http(s) URL")

    @model_validator(mode="after")
    def _credentials(self) -> FeishuConfig:
        required(self.enabled, "channels.feishu", app_id=self.app_id, app_secret=self.app_secret)
        webhook = self.enabled and self.mode == "webhook"
        if webhook and not self.verification_token.get_secret_value():
            raise ValueError("verification_token: required when channels.feishu.mode is webhook")
        return self

    @property
    def base_url(self) -> str:
        return DOMAINS.get(self.domain, self.domain).rstrip("/")
