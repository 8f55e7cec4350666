"""Gateway events -> ctx.publish: messages, slash commands and button presses.

Discord pushes each event once per session (a RESUME replays what a dropped socket missed);
there is nothing to acknowledge, so a redelivery is recognised by its id in the service's
journal. While this worker's hold on the bot's one connection has lapsed (`may_receive`) it
publishes nothing: the worker that holds it now receives the same events.

An interaction must be answered within 3 seconds, so it is answered first: a slash command
with an echo of the command (the message its reply answers), a button press with a deferred
update (the pressed message stays as it is until its reply changes it).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

import discord

from channels.base import (
    ChannelContext,
    ChannelError,
    InboundMessage,
    MenuCommand,
)
from channels.discord import buttons, parse
from channels.discord.api import guarded
from channels.discord.config import DiscordConfig

log = logging.getLogger("channels.discord")
_NAME = re.compile(r"^[-_a-z0-9]{1,32}$")  # Discord's rule for a slash command name (ASCII)
DESCRIPTION_LIMIT = 100


class Inbound:
    def __init__(
        self,
        config: DiscordConfig,
        ctx: ChannelContext,
        client: discord.Client,
        may_receive: Callable[[], bool],
    ) -> None:
        self.config, self.ctx, self.client = config, ctx, client
        self.may_receive = may_receive

    def register(self) -> None:
        self.client.event(self.on_message)
        self.client.event(self.on_interaction)

    @property
    def me(self) -> int:
        user = self.client.user
        return user.id if user is not None else 0

    async def on_message(self, message: discord.Message) -> None:
        if not self.may_receive():
            return
        try:
            msg = parse.parse_message(message, self.me, thread_replies=self.config.thread_replies)
        except (AttributeError, KeyError, TypeError, ValueError):
            log.warning("malformed discord message %s skipped", getattr(message, "id", "?"))
            log.debug("parse failure", exc_info=True)
            return
        if msg is not None:
            await self._publish(msg)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if not self.may_receive():
            return
        try:
            if interaction.type == discord.InteractionType.application_command:
                await self._command(interaction)
            elif interaction.type == discord.InteractionType.component:
                await self._press(interaction)
        except ChannelError as exc:  # the 3-second answer failed: Discord tells the user
            log.warning("discord interaction %s not answered: %s", interaction.id, exc)

    async def _command(self, interaction: discord.Interaction) -> None:
        text = parse.command_text(interaction.data)
        if text is None:
            return
        response = await guarded(
            lambda: interaction.response.send_message(f"`{text}`"), "command echo"
        )
        anchor = response.message_id if response is not None else None
        await self._interaction(interaction, text, anchor)

    async def _press(self, interaction: discord.Interaction) -> None:
        data: Mapping[str, Any] = interaction.data or {}
        custom_id = str(data.get("custom_id") or "")
        value = await buttons.value_of(custom_id, self.ctx.choices)
        if value is None:
            log.info("a press on a button this bot does not know (%s) ignored", custom_id[:20])
            return
        await guarded(lambda: interaction.response.defer(), "press ack")
        pressed = interaction.message.id if interaction.message else None
        await self._interaction(interaction, value, pressed)

    async def _interaction(
        self, interaction: discord.Interaction, text: str, anchor: int | None
    ) -> None:
        msg = parse.parse_interaction(
            interaction, text, thread_replies=self.config.thread_replies, anchor=anchor
        )
        if msg is not None:
            await self._publish(msg)

    async def _publish(self, msg: InboundMessage) -> None:
        result = await self.ctx.publish(msg)
        if not result.done:
            log.info("discord message %s not accepted: %s", msg.event_id, result.value)


def slash_commands(menu: tuple[MenuCommand, ...]) -> list[dict[str, object]]:
    """The command registry as application commands, each with an optional text argument.
    A name Discord would refuse (upper case, dots) stays out of the menu (still typeable)."""
    out: list[dict[str, object]] = []
    for command in menu:
        if not _NAME.match(command.name):
            continue
        described = (command.summary or command.name)[:DESCRIPTION_LIMIT]
        option = {
            "type": 3,  # STRING
            "name": "text",
            "description": (command.usage or "what to pass")[:DESCRIPTION_LIMIT],
            "required": False,
        }
        out.append({"name": command.name, "description": described, "type": 1, "options": [option]})
    return out
