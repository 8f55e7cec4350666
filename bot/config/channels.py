"""The `channels:` section: what every channel shares, and one optional section per platform."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from bot import i18n
from bot.config.reload import CHANNEL, LIVE, RESTART
from channels import REGISTRY, config_model
from channels.base import BusyPolicy, ChannelConfig
from channels.bots import bot_channel


class ChannelsShared(BaseModel):
    """Settings shared by every channel; each platform adds its own section."""

    model_config = ConfigDict(extra="forbid")
    max_concurrent_runs: int = Field(default=16, ge=1, json_schema_extra=RESTART)
    busy_policy: BusyPolicy = Field(default=BusyPolicy.queue, json_schema_extra=LIVE)
    inbound_queue_size: int = Field(default=1000, ge=1, json_schema_extra=RESTART)
    dedupe_window_hours: float = Field(default=24, gt=0, json_schema_extra=RESTART)
    shutdown_grace_seconds: float = Field(default=10, ge=0, json_schema_extra=LIVE)
    max_upload_mb: float = Field(default=20, gt=0, json_schema_extra=LIVE)
    locale: str = Field(default="en", json_schema_extra=LIVE)  # the service's default language

    def platform(self, name: str) -> ChannelConfig | None:
        """A channel's config: a platform's section, or one of its bots (`telegram.support`)."""
        platform, _, bot = name.partition(".")
        section = getattr(self, platform, None) if platform in REGISTRY else None
        if not isinstance(section, ChannelConfig):
            return None
        return section.bot_configs().get(bot) if bot else section

    def enabled(self) -> dict[str, ChannelConfig]:
        """Every enabled channel: platforms' sections and their named bots."""
        found: dict[str, ChannelConfig | None] = {}
        for name in REGISTRY:
            section = found[name] = self.platform(name)
            bots = section.bot_configs() if section is not None else {}
            found |= {bot_channel(name, bot): cfg for bot, cfg in bots.items()}
        return {name: cfg for name, cfg in found.items() if cfg is not None and cfg.enabled}

    def agent_of(self, channel: str) -> str | None:
        """The agent profile a channel's bot talks as (`agent:`; None: lead_agent)."""
        cfg = self.platform(channel)
        return cfg.agent if cfg is not None else None

    def busy_policy_for(self, name: str) -> BusyPolicy:
        cfg = self.platform(name)
        return cfg.busy_policy if cfg is not None and cfg.busy_policy else self.busy_policy


@cache
def channels_model() -> type[ChannelsShared]:
    """ChannelsShared plus one optional section per registered platform."""
    fields: dict[str, Any] = {
        name: (config_model(name) | None, Field(default=None, json_schema_extra=CHANNEL))
        for name in REGISTRY
    }
    model: type[ChannelsShared] = create_model("ChannelsConfig", __base__=ChannelsShared, **fields)
    return model


def locale_checks(channels: ChannelsShared) -> list[str]:
    """Every `locale:` names a language the service has texts in (bot/locales/): the service's,
    each platform section's and each named bot's (`channels.telegram.bots[1].locale`)."""
    known = ", ".join(i18n.tag(loc) for loc in i18n.available())
    asked = {"channels.locale": channels.locale}
    for name in REGISTRY:
        cfg = channels.platform(name)
        if cfg is None:
            continue
        if cfg.locale is not None:
            asked[f"channels.{name}.locale"] = cfg.locale
        for i, bot in enumerate(cfg.bots):
            if isinstance(bot, dict) and bot.get("locale") is not None:
                asked[f"channels.{name}.bots[{i}].locale"] = str(bot["locale"])
    return [
        f"{path}: no texts in {value!r} (one of {known})"
        for path, value in asked.items()
        if i18n.supported(value) is None
    ]
