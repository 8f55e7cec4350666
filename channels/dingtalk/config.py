"""`channels.dingtalk` settings."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, SecretStr, field_validator, model_validator

from channels.base import ChannelConfig
from channels.section import FileLimit, required

DEFAULT_API_BASE = "https://api.dingtalk.com"
AI_MARKDOWN_TEMPLATE = "382e4302-551d-4880-bf29-a30acfab2e71.schema"
"""The AI markdown card template dingtalk-stream's `AIMarkdownCardInstance` uses (staticMsgContent,
flowStatus, sys_full_json_obj with msgButtons)."""


class DingTalkConfig(FileLimit, ChannelConfig):
    """An enterprise-internal DingTalk app with a robot, connected in Stream mode.

    `api_base` is where every OpenAPI call goes (gateway, token, robot send, cards, files); see
    `channels.dingtalk.endpoint` for how it reaches the SDK. `upload_base` defaults to the legacy
    host `https://oapi.dingtalk.com` when `api_base` is the official one, else to `api_base`.
    """

    # a named bot (channels/bots.py) is an app (robot) of its own
    credentials: ClassVar[tuple[str, ...]] = ("client_id", "client_secret")
    own_keys: ClassVar[tuple[str, ...]] = ("robot_code",)

    client_id: str = ""
    client_secret: SecretStr = SecretStr("")
    robot_code: str = ""
    card_template_id: str = ""
    card_content_key: str = "content"
    # the card-platform template buttons are shown on (its `msgButtons`; see buttons.py)
    button_card_template_id: str = AI_MARKDOWN_TEMPLATE
    api_base: str = DEFAULT_API_BASE
    upload_base: str = ""
    stream_interval: float = Field(default=0.5, ge=0.05, le=10.0)
    markdown_title: str = "Antler"
    http_timeout: float = Field(default=30.0, gt=0)

    @field_validator("client_id", "client_secret", "robot_code", "card_template_id", mode="before")
    @classmethod
    def _unset_is_empty(cls, value: object) -> object:
        """An unset `$VAR` arrives as None: treat it as not configured."""
        return "" if value is None else value

    @field_validator("button_card_template_id")
    @classmethod
    def _card_platform_template(cls, value: str) -> str:
        if value.strip() in ("", "StandardCard"):
            raise ValueError(
                "must be a card-platform template id (ends in .schema); StandardCard is the"
                " robot interactiveCards template, which /v1.0/card/instances does not know"
            )
        return value.strip()

    @field_validator("api_base", "upload_base")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @model_validator(mode="after")
    def _credentials_when_enabled(self) -> DingTalkConfig:
        required(
            self.enabled,
            "channels.dingtalk",
            client_id=self.client_id,
            client_secret=self.client_secret,
        )
        return self

    @property
    def robot(self) -> str:
        """The robot code; for apps created with a robot it equals the client id."""
        return self.robot_code or self.client_id
