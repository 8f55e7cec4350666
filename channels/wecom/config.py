"""The `channels.wecom` config section."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field, SecretStr, field_validator, model_validator

from channels.base import ChannelConfig
from channels.section import FileLimit, secret

PUBLIC_WS = "wss://openws.work.weixin.qq.com"


class WeComConfig(FileLimit, ChannelConfig):
    """The intelligent robot's Bot ID and Secret, where its long connection goes, limits.

    The SDK's only endpoint option is its WebSocket URL (`ws_url`) and it always connects with
    its own TLS context, so a `ws://` URL cannot work: a self-hosted or test server is reached
    over `wss://`, its CA certificate named by `ca_file` (added to the SDK's TLS contexts,
    the connection's and the media downloads'). `allowed_chats` holds group chat ids and, for a
    DM, the person's userid.
    """

    credentials: ClassVar[tuple[str, ...]] = ("bot_id", "secret")  # each named bot its own

    bot_id: str = ""
    secret: SecretStr | None = None
    ws_url: str = PUBLIC_WS
    ca_file: Path | None = None
    """A PEM file of CA certificates to trust besides the public ones (relative: to the config
    file's folder); checked when the channel starts."""
    heartbeat_seconds: float = Field(default=30.0, gt=0)
    """The SDK's ping interval; two pings without an answer end the connection (restarted)."""
    stream_interval: float = Field(default=0.5, gt=0)
    """The least time between two frames of a streaming reply."""

    @field_validator("ws_url")
    @classmethod
    def _wss_only(cls, value: str) -> str:
        if not value.startswith("wss://"):
            raise ValueError(
                "must start with wss:// (the WeCom SDK always connects with TLS; for a private "
                "server name its CA certificate in channels.wecom.ca_file)"
            )
        return value

    @model_validator(mode="after")
    def _check(self) -> WeComConfig:
        if self.enabled and (not self.bot_id or self.secret is None):
            raise ValueError("bot_id and secret: required when channels.wecom.enabled is true")
        return self

    @property
    def secret_text(self) -> str:
        return secret(self.secret, "channels.wecom.secret")
