"""DiscordChannel: discord.py's Client on the service's event loop.

REST (replies, files, slash command registration) works from `start` on; the gateway (events)
is the bot's one receiving connection, held by one worker at a time (`exclusive_connection`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import discord
from discord.http import Route

from channels.base import (
    Attachment,
    Capabilities,
    ChannelError,
    ChatRef,
    InboundMessage,
    RateBudget,
    effective_limit,
)
from channels.delegated import DelegatedReplies
from channels.discord import files, render
from channels.discord.api import MAX_RATELIMIT_WAIT, POST, Sender, guarded
from channels.discord.config import DiscordConfig, bot_id
from channels.discord.gateway import Gateway, use_gateway
from channels.discord.inbound import Inbound, slash_commands
from channels.discord.stream import (
    DiscordReply,
    Replies,
    reply_state,
    restore_reply,
    target_of,
)

GLOBAL_PER_SECOND = 45.0  # Discord: 50 requests per second per bot


def capabilities_for(config: DiscordConfig) -> Capabilities:
    """Every Discord budget, once: the reply's edits per channel (5 per 5 s: a burst of 2 and
    `edits_per_second` after), new messages per channel (5 per 5 s: 3 + 0.4/s) and the bot's
    global limit on the channel's own calls."""
    budgets = (
        RateBudget(scope="chat", per_second=config.edits_per_second, burst=2),
        RateBudget(scope="chat", method=POST, per_second=0.4, burst=3),
        RateBudget(scope="bot", method=POST, per_second=GLOBAL_PER_SECOND, burst=10),
    )
    return Capabilities(
        max_text_len=render.MAX_TEXT_LEN,
        buttons=True,
        max_file_in=config.max_file_bytes,
        edit_budget=budgets,
    )


def intents() -> discord.Intents:
    """Server and DM messages with their content (a privileged intent: enable it in the
    developer portal)."""
    wanted = discord.Intents.none()
    wanted.guilds = True
    wanted.guild_messages = True
    wanted.dm_messages = True
    wanted.message_content = True
    return wanted


class DiscordChannel(DelegatedReplies[DiscordReply]):
    name = "discord"
    replies: Replies

    config: DiscordConfig

    def setup(self) -> None:
        config, ctx = self.config, self.ctx
        self.capabilities = capabilities_for(config)
        self.sender = Sender(self.pacer, self.capabilities.edit_budget)
        self.client = self._new_client()
        self.replies = Replies(self.client, self.sender, ctx.choices)
        self.gateway: Gateway | None = None
        self._session: aiohttp.ClientSession | None = None

    def _new_client(self) -> discord.Client:
        # voice is not used: no warning that its optional packages are missing
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
        return discord.Client(
            intents=intents(),
            max_ratelimit_timeout=MAX_RATELIMIT_WAIT,
            chunk_guilds_at_startup=False,
            member_cache_flags=discord.MemberCacheFlags.none(),
        )

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        Route.BASE = self.config.api_base
        if self.client.is_closed():  # a start retried after a failed one
            self.client = self._new_client()
            self.replies.client = self.client
        try:
            await self._login()
            await self._sync_commands()
            self._session = aiohttp.ClientSession()
            Inbound(self.config, self.ctx, self.client, lambda: self.may_receive()).register()
            if self.receiving:
                await self.start_receiving()
        except BaseException:
            await self._close()  # the retried start begins with a new client
            raise
        self.ctx.report(connected=True)
        user = self.client.user
        self.log.info("discord connected as %s", user.name if user else "?")

    async def _login(self) -> None:
        """users/@me and the application (discord.py's login), then the gateway's URL."""
        try:
            await self.client.login(self.config.token)
        except discord.LoginFailure as exc:
            raise ChannelError("discord rejected bot_token (401 on users/@me)") from exc
        except (discord.HTTPException, aiohttp.ClientError, OSError) as exc:
            raise ChannelError(f"discord login failed: {exc}", retryable=True) from exc
        if self.config.gateway_url:
            use_gateway(self.config.gateway_url)
            return
        try:
            _, url, _ = await self.client.http.get_bot_gateway()
        except (discord.GatewayNotFound, aiohttp.ClientError, OSError) as exc:
            raise ChannelError(f"discord gateway/bot failed: {exc}", retryable=True) from exc
        use_gateway(url)

    async def _sync_commands(self) -> None:
        """The command registry as global slash commands (one bulk PUT, replacing the old)."""
        app = self.client.application_id
        if not self.config.sync_commands or app is None:
            return
        payload = slash_commands(self.ctx.commands())
        try:
            await guarded(
                lambda: self.client.http.bulk_upsert_global_commands(app, payload), "commands"
            )
        except ChannelError as exc:
            self.log.warning("registering slash commands failed: %s", exc)

    def exclusive_connection(self) -> str | None:
        """One gateway session per bot across the workers (named by the bot's user id)."""
        return bot_id(self.config.token)

    async def start_receiving(self) -> None:
        if self.gateway is not None:
            return
        gateway = Gateway(self.client, self.ctx, self.backoff)
        self.gateway = gateway
        try:
            await gateway.open()
        except BaseException:
            self.gateway = None
            raise

    async def stop_receiving(self) -> None:
        gateway, self.gateway = self.gateway, None
        if gateway is not None:
            await gateway.close()

    async def stop(self) -> None:
        await self._close()
        self.ctx.report(connected=False)

    async def _close(self) -> None:
        await self.stop_receiving()
        await self.replies.close()
        if self._session is not None:
            await self._session.close()
            self._session = None
        with contextlib.suppress(Exception):
            await self.client.close()

    # ------------------------------------------------------------------ replies

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        target = target_of(chat)
        quote = int(reply_to) if reply_to and reply_to.isdigit() and not chat.topic_id else None
        if chat.topic_id and chat.topic_id == reply_to and target not in self.replies.threads:
            # the answer to a top-level message whose thread was never started (a command, a
            # notice): below the message in the channel, not a thread of its own
            target, quote = int(chat.chat_id), int(reply_to)
        for part in render.split(text):
            await self.replies.post(chat, target, render.Shown(part), quote)
            quote = None

    async def send_file(self, handle: DiscordReply, path: Path) -> None:
        await files.upload(
            self.client, self.sender, handle.chat, handle.target, path, self.config.max_file_bytes
        )

    async def fetch_file(
        self, msg: InboundMessage, att: Attachment, dest_dir: Path, *, limit: int | None = None
    ) -> Path:
        if self._session is None:
            raise ChannelError("discord channel is not started")
        own = self.config.max_file_bytes
        return await files.download(self._session, att, dest_dir, limit=effective_limit(own, limit))

    def handle_state(self, handle: DiscordReply) -> dict[str, Any]:
        return reply_state(handle)

    def restore_handle(self, msg: InboundMessage, state: Mapping[str, Any]) -> DiscordReply | None:
        return restore_reply(msg, state)

    def finish_is_replayable(self, handle: DiscordReply) -> bool:
        return handle.message_id is not None
