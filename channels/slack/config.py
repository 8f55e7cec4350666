"""The `channels.slack` config section."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from channels.base import ChannelConfig
from channels.section import FileLimit, secret

PUBLIC_API = "https://slack.com/api/"


class SlackConfig(FileLimit, ChannelConfig):
    """Slack app credentials, transport and behaviour.

    `api_base` is handed to `AsyncWebClient(base_url=...)`; Socket Mode follows it because
    `apps.connections.open` goes through the same client. `allowed_channels` is Slack's name for
    the shared `allowed_chats` allowlist (both may be given; they are merged).
    """

    # a named bot (channels/bots.py) is an app of its own: its token, app token or signing
    # secret, and its events URL (`/slack/events/<bot>` unless it sets `http_path`)
    credentials: ClassVar[tuple[str, ...]] = ("bot_token",)
    own_keys: ClassVar[tuple[str, ...]] = ("app_token", "signing_secret")
    route_keys: ClassVar[tuple[str, ...]] = ("http_path",)

    bot_token: SecretStr | None = None
    app_token: SecretStr | None = None
    signing_secret: SecretStr | None = None
    mode: Literal["socket", "http"] = "socket"
    api_base: str = PUBLIC_API
    http_path: str = "/slack/events"
    allowed_channels: list[str] = Field(
        default_factory=list, json_schema_extra={"reload": "live"}
    )  # an allowlist
    thread_follow: bool = True
    command_name: str = "/antler"
    native_stream: bool = True
    thread_context_messages: int = 30
    workspace_edits_per_second: float = 0.8
    workspace_appends_per_second: float = 1.5
    min_append_chars: int = Field(default=40, ge=1)

    @field_validator("api_base")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        # slack_sdk joins method names with urljoin: without the slash the last segment is lost.
        return value if value.endswith("/") else value + "/"

    @field_validator("command_name")
    @classmethod
    def _leading_slash(cls, value: str) -> str:
        return value if value.startswith("/") else "/" + value

    @model_validator(mode="after")
    def _check_mode(self) -> SlackConfig:
        if self.allowed_channels:
            merged = [*self.allowed_chats, *self.allowed_channels]
            self.allowed_chats = list(dict.fromkeys(merged))
        if not self.enabled:
            return self
        if self.bot_token is None:
            raise ValueError("bot_token: required (xoxb-...) when channels.slack.enabled is true")
        if self.mode == "socket" and self.app_token is None:
            raise ValueError("app_token: required (xapp-...) when channels.slack.mode is socket")
        if self.mode == "http" and self.signing_secret is None:
            raise ValueError("signing_secret: required when channels.slack.mode is http")
        return self

    @property
    def token(self) -> str:
        return secret(self.bot_token, "channels.slack.bot_token")
