"""TelegramChannel: python-telegram-bot's async `Bot` on the service's own event loop.

Polling drives `bot.get_updates` in a task of our own instead of PTB's Updater, because the
Updater confirms an update (by asking for the next offset) before our handler knows whether the
service durably accepted it; here the offset moves only after `ctx.publish` returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from telegram import Bot, BotCommand
from telegram.error import InvalidToken, TelegramError
from telegram.request import HTTPXRequest

from channels.base import (
    Attachment,
    Capabilities,
    ChannelError,
    ChatRef,
    InboundMessage,
    MenuCommand,
    ReplyDoc,
)
from channels.delegated import DelegatedReplies
from channels.telegram import files, pacing
from channels.telegram.actions import ActionLane
from channels.telegram.api import Sender, where
from channels.telegram.buttons import ButtonTokens
from channels.telegram.config import TelegramConfig
from channels.telegram.inbound import ALLOWED_UPDATES, Inbound, Poller, webhook_handler
from channels.telegram.pacing import FloodGate
from channels.telegram.parse import BotIdentity
from channels.telegram.reactions import Reactions
from channels.telegram.render import render_parts
from channels.telegram.resume import finish_replayable, reopen_reply, reply_state, restore_reply
from channels.telegram.stream import Replies, TelegramReply

# Telegram's rule for a menu command name; a skill named otherwise (`data-to-chart`) still works
# when typed, it is just not in the menu.
_MENU_NAME = re.compile(r"^[a-z0-9_]{1,32}$")


class TelegramChannel(DelegatedReplies[TelegramReply]):
    name = "telegram"
    replies: Replies

    config: TelegramConfig

    def setup(self) -> None:
        config, ctx = self.config, self.ctx
        self.capabilities = _capabilities(config)
        self.bot = Bot(
            config.bot_token.get_secret_value(),
            base_url=config.api_base,
            base_file_url=config.file_base,
            request=HTTPXRequest(
                connection_pool_size=128, read_timeout=15, write_timeout=30, pool_timeout=10
            ),
            get_updates_request=HTTPXRequest(connection_pool_size=2, read_timeout=10),
        )
        token, base = config.bot_token.get_secret_value(), config.api_base
        self.actions = ActionLane(token, base, FloodGate(self.pacer))  # "typing…", own lane
        self.sender = Sender(self.bot, self.pacer, self.capabilities.edit_budget, self.actions)
        self.buttons = ButtonTokens()
        reactions = Reactions(self.sender, enabled=config.status_reactions)
        self.replies = Replies(self.sender, self.buttons, reactions)
        self.inbound = Inbound(config, ctx, self.sender, self.buttons, self.name)
        self._poller: Poller | None = None
        self._poll_task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        # httpx logs request URLs at INFO, and Telegram URLs contain the bot token.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        try:
            await self.bot.initialize()
        except InvalidToken as exc:
            raise ChannelError("telegram rejected bot_token (getMe said unauthorized)") from exc
        except TelegramError as exc:
            raise ChannelError(f"telegram getMe failed: {exc.message}", retryable=True) from exc
        me = self.bot.bot
        self.inbound.me = BotIdentity(id=me.id, username=me.username or "")
        await self._register_commands()
        if self.config.mode == "webhook":
            await self._start_webhook()
        else:
            await self.bot.delete_webhook()
            if self.receiving:
                await self.start_receiving()
        self.ctx.report(connected=True)
        self.log.info("telegram connected as @%s (%s)", me.username, self.config.mode)

    async def _start_webhook(self) -> None:
        self.ctx.add_route(
            "POST", self.config.webhook_path, webhook_handler(self.config, self.inbound)
        )
        secret = self.config.webhook_secret.get_secret_value()
        if self.config.secret_generated:
            self.log.warning(
                "channels.telegram.webhook_secret is not set: generated one for this "
                "run and passed it to setWebhook (set it to keep it across restarts)"
            )
        await self.bot.set_webhook(
            url=self.config.webhook_url, secret_token=secret, allowed_updates=list(ALLOWED_UPDATES)
        )

    async def _register_commands(self) -> None:
        """The service's command registry as Telegram's command menu (setMyCommands): in the
        channel's language for everyone, and in each language the service speaks for people
        whose app is set to it (`language_code`)."""
        try:
            await self.bot.set_my_commands(menu(self.ctx.commands()))
            for language in self.ctx.languages:
                commands = menu(self.ctx.commands(language))
                await self.bot.set_my_commands(commands, language_code=language)
        except TelegramError as exc:
            self.log.warning("setMyCommands failed: %s", exc.message)

    def exclusive_connection(self) -> str | None:
        """Polling: one getUpdates per bot at a time (the bot id is the token's first part)."""
        if self.config.mode == "webhook":
            return None
        return self.config.bot_token.get_secret_value().split(":", 1)[0]

    async def start_receiving(self) -> None:
        if self._poll_task is not None:
            return
        self._poller = Poller(
            self.inbound,
            self.sender,
            self.ctx,
            self.config.poll_timeout,
            self.backoff,
            self.may_receive,
        )
        self._poll_task = asyncio.create_task(self._poller.run(), name="telegram-poll")

    async def stop_receiving(self) -> None:
        if self._poll_task is not None:
            self._poll_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poll_task
            self._poll_task = None
        if self._poller is not None:
            await self._poller.confirm()
            self._poller = None

    async def stop(self) -> None:
        await self.stop_receiving()
        await self.replies.close()
        with contextlib.suppress(TelegramError):
            await self.bot.shutdown()
        with contextlib.suppress(TelegramError):
            await self.actions.stop()
        self.ctx.report(connected=False)

    # ------------------------------------------------------------------ replies

    signs_at_acceptance = True

    async def sign_of_life(self, msg: InboundMessage) -> bool:
        """ "typing…" at once: Telegram counts chat actions against no message limit (a 429
        block still stops them)."""
        return await self.sender.typing(msg.chat)

    async def mark_queued(self, msg: InboundMessage, doc: ReplyDoc | None = None) -> TelegramReply:
        """A real message (drafts vanish after ~30 s) that the run later edits into its reply."""
        return await self.replies.open(msg, doc or ReplyDoc(status="queued"))

    def handle_state(self, handle: TelegramReply) -> dict[str, Any]:
        return reply_state(handle)

    def restore_handle(self, msg: InboundMessage, state: Mapping[str, Any]) -> TelegramReply | None:
        return restore_reply(msg, state)

    def reopen_reply(self, msg: InboundMessage, state: Mapping[str, Any]) -> TelegramReply | None:
        return reopen_reply(msg, state)

    def finish_is_replayable(self, handle: TelegramReply) -> bool:
        return finish_replayable(handle)

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        for index, part in enumerate(render_parts(text)):
            target = int(reply_to) if reply_to and index == 0 else None

            async def call(
                text: str, parse_mode: str | None, target: int | None = target
            ) -> object:
                return await self.bot.send_message(
                    text=text,
                    parse_mode=parse_mode,
                    reply_to_message_id=target,
                    allow_sending_without_reply=True,
                    **where(chat),
                )

            await self.sender.patiently(functools.partial(self.sender.text, chat, part, call))

    # ------------------------------------------------------------------ files

    async def fetch_file(
        self, msg: InboundMessage, att: Attachment, dest_dir: Path, *, limit: int | None = None
    ) -> Path:
        return await files.fetch(self.sender, att, dest_dir, limit)

    async def send_file(self, handle: TelegramReply, path: Path) -> None:
        await files.send(self.sender, handle.chat, path, handle.reply_to)


def _capabilities(config: TelegramConfig) -> Capabilities:
    return Capabilities(
        max_text_len=4000,
        buttons=True,
        max_file_in=files.DOWNLOAD_LIMIT,
        # No "update" budget: the channel coalesces updates itself, per call kind.
        edit_budget=pacing.budgets(
            config.stream_interval_dm, config.stream_interval_group, config.messages_per_second
        ),
    )


def menu(commands: tuple[MenuCommand, ...]) -> list[BotCommand]:
    """Telegram's menu: the commands whose names it accepts, summaries cut to its 256 chars."""
    return [
        BotCommand(c.name, c.summary[:256] if len(c.summary) >= 3 else c.usage)
        for c in commands
        if _MENU_NAME.match(c.name)
    ][:100]
