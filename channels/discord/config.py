"""The `channels.discord` config section."""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any, ClassVar

from pydantic import Field, SecretStr, field_validator, model_validator

from channels.base import ChannelConfig
from channels.section import FileLimit, secret

PUBLIC_API = "https://discord.com/api/v10"
_LIVE: dict[str, Any] = {"reload": "live"}


class DiscordConfig(FileLimit, ChannelConfig):
    """Bot token, where to reach Discord, threads, allowlists.

    discord.py has no constructor option for its endpoints: the channel sets
    `discord.http.Route.BASE` to `api_base` and the gateway's default URL to `gateway_url`
    (unset: the URL `GET /gateway/bot` names), so one process serves one Discord bot.
    `allowed_chats` holds channel ids (a thread counts as its parent channel);
    `allowed_channels` is Discord's name for it (merged). `allowed_roles` admits members of
    those roles besides `allowed_users`; `allowed_guilds` limits the servers (refuses DMs).
    """

    credentials: ClassVar[tuple[str, ...]] = ("bot_token",)  # each named bot its own
    shared_keys: ClassVar[tuple[str, ...]] = ("api_base", "gateway_url")  # discord.py's globals

    bot_token: SecretStr | None = None
    api_base: str = PUBLIC_API
    gateway_url: str | None = None
    thread_replies: bool = True
    """A mention in a server channel is answered in a thread started from it."""
    sync_commands: bool = True
    """Register the command registry as slash commands at start (PUT, global)."""
    allowed_channels: list[str] = Field(default_factory=list, json_schema_extra=_LIVE)
    allowed_roles: list[str] = Field(default_factory=list, json_schema_extra=_LIVE)
    allowed_guilds: list[str] = Field(default_factory=list, json_schema_extra=_LIVE)
    max_file_mb: float = Field(default=10.0, gt=0)
    edits_per_second: float = Field(default=0.6, gt=0)
    """Edits of the streaming reply per channel (Discord allows 5 in 5 s; 2 + 0.6/s stays
    within)."""

    @field_validator("api_base")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")  # discord.py appends paths that start with "/"

    @field_validator("allowed_channels", "allowed_roles", "allowed_guilds", mode="before")
    @classmethod
    def _ids(cls, value: object) -> object:
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            value = [value]
        if isinstance(value, list):
            return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
        return value

    @model_validator(mode="after")
    def _check(self) -> DiscordConfig:
        if self.allowed_channels:
            merged = [*self.allowed_chats, *self.allowed_channels]
            self.allowed_chats = list(dict.fromkeys(merged))
        if self.enabled and self.bot_token is None:
            raise ValueError("bot_token: required when channels.discord.enabled is true")
        return self

    @property
    def role_allowlist(self) -> list[str]:
        return self.allowed_roles

    @property
    def workspace_allowlist(self) -> list[str]:
        return self.allowed_guilds

    @property
    def token(self) -> str:
        return secret(self.bot_token, "channels.discord.bot_token")


def bot_id(token: str) -> str:
    """The bot's user id: a bot token's first part is it in base64 (not secret). A token of
    another shape is named by a short digest of it (never the token itself)."""
    head = token.split(".", 1)[0]
    try:
        text = base64.b64decode(head + "=" * (-len(head) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        text = ""
    if text.isdigit():
        return text
    return "bot-" + hashlib.sha256(token.encode()).hexdigest()[:12]
