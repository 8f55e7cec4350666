"""The channel registry: the only place that names platforms.

Each entry points at a platform's config model and channel class by import path, so a platform's
SDK is imported only when that channel is enabled.
"""

from __future__ import annotations

import importlib
from typing import Any

from channels.base import Channel, ChannelConfig

REGISTRY: dict[str, tuple[str, str]] = {
    "console": ("channels.console.config:ConsoleConfig", "channels.console.channel:ConsoleChannel"),
    "discord": (
        "channels.discord.config:DiscordConfig",
        "channels.discord.channel:DiscordChannel",
    ),
    "dingtalk": (
        "channels.dingtalk.config:DingTalkConfig",
        "channels.dingtalk.channel:DingTalkChannel",
    ),
    "slack": ("channels.slack.config:SlackConfig", "channels.slack.channel:SlackChannel"),
    "feishu": ("channels.feishu.config:FeishuConfig", "channels.feishu.channel:FeishuChannel"),
    "telegram": (
        "channels.telegram.config:TelegramConfig",
        "channels.telegram.channel:TelegramChannel",
    ),
    "wecom": ("channels.wecom.config:WeComConfig", "channels.wecom.channel:WeComChannel"),
}


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def config_model(name: str) -> type[ChannelConfig]:
    model: type[ChannelConfig] = _load(REGISTRY[name][0])
    return model


def channel_class(name: str) -> type[Channel]:
    cls: type[Channel] = _load(REGISTRY[name][1])
    return cls


__all__ = ["REGISTRY", "channel_class", "config_model"]
