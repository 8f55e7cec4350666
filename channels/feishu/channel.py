"""FeishuChannel: lifecycle and the reply verbs. Inbound in `inbound.py`, cards in `stream.py`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from channels.backoff import RetryState
from channels.base import (
    Attachment,
    Capabilities,
    Channel,
    ChannelError,
    ChatRef,
    InboundMessage,
    RateBudget,
    ReplyDoc,
    ReplyHandle,
    effective_limit,
)
from channels.feishu import files, render, resume
from channels.feishu.api import FeishuApi, build_client
from channels.feishu.config import FeishuConfig
from channels.feishu.inbound import Inbound
from channels.feishu.parse import BotIdentity
from channels.feishu.reactions import BUDGET as REACTION_BUDGET
from channels.feishu.reactions import StatusReactions
from channels.feishu.stream import CARD_BUDGETS, CardStreamer, FeishuReply
from channels.feishu.webhook import webhook_route
from channels.feishu.ws import LongConnection

MAX_FILE_IN = 100 * 1024 * 1024


class FeishuChannel(Channel):
    name = "feishu"

    config: FeishuConfig

    def setup(self) -> None:
        config, ctx = self.config, self.ctx
        self.capabilities = Capabilities(
            max_text_len=render.CARD_MAX_CHARS,
            buttons=True,
            max_file_in=MAX_FILE_IN,
            edit_budget=(
                RateBudget(scope="reply", per_second=1 / config.stream_interval),
                *CARD_BUDGETS,
                REACTION_BUDGET,
            ),
        )
        self.api = FeishuApi(build_client(config))
        self.streamer = CardStreamer(
            self.api, self.pacer, config.card_mode, self.capabilities.edit_budget
        )
        self.inbound = Inbound(config, ctx, self.name)
        self.connection: LongConnection | None = None
        self.reactions = StatusReactions(self.api, self.pacer, enabled=config.status_reactions)

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.inbound.loop = loop
        self.inbound.bot = await self._identity()
        if self.config.mode == "webhook":
            handler = self.inbound.handler(verify=True)
            self.ctx.add_route("POST", self.config.webhook_path, webhook_route(handler))
            self.ctx.report(connected=True)
            return

        if self.receiving:
            await self.start_receiving()
        else:
            self.ctx.report(connected=True)  # sending works; another worker receives

    def exclusive_connection(self) -> str | None:
        """The long connection: one per app across the workers (named by the app id)."""
        return None if self.config.mode == "webhook" else self.config.app_id

    async def start_receiving(self) -> None:
        if self.connection is not None:
            return
        loop = asyncio.get_running_loop()

        def on_state(connected: bool, error: str | None, retry: RetryState | None) -> None:
            loop.call_soon_threadsafe(
                lambda: self.ctx.report(connected=connected, error=error, retry=retry)
            )

        # A failed connect does not fail the start: the connection keeps retrying with backoff.
        self.connection = LongConnection(
            self.config,
            self.inbound.handler(verify=False),
            on_state,
            self.backoff,
            lambda: self.may_receive(),
        )
        await self.connection.start()

    async def stop_receiving(self) -> None:
        await self._close_connection()
        loop = asyncio.get_running_loop()  # after the connection's own "disconnected" report:
        loop.call_soon(lambda: self.ctx.report(connected=True))  # sending still works

    async def _close_connection(self) -> None:
        if self.connection is not None:
            connection, self.connection = self.connection, None
            await connection.stop()

    async def stop(self) -> None:
        await self._close_connection()
        pending = [asyncio.wrap_future(f) for f in list(self.inbound.pending)]
        pending += self.reactions.calls.pending
        if pending:
            await asyncio.wait(pending, timeout=5)
        self.inbound.loop = None

    async def _identity(self) -> BotIdentity:
        try:
            info = await self.api.bot_info()
        except ChannelError as exc:
            self.log.warning("feishu: bot info unavailable (%s); matching mentions by name", exc)
            return BotIdentity(name=self.ctx.bot_name)
        return BotIdentity(
            open_id=str(info.get("open_id") or ""),
            name=str(info.get("app_name") or self.ctx.bot_name),
        )

    # ------------------------------------------------------------------ replies
    def _in_thread(self, chat: ChatRef) -> bool:
        return chat.chat_type == "group" and self.config.group_scope == "topic"

    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> ReplyHandle:
        if not msg.is_button:
            self.reactions.working(msg.chat, msg.message_id)  # beside the reply, not awaited
        reply = await self.streamer.open(
            msg.chat, msg.message_id, doc, in_thread=self._in_thread(msg.chat)
        )
        reply.main_chat = msg.in_main_chat
        self._remember(reply)
        return reply

    def _remember(self, reply: FeishuReply) -> None:
        for part in reply.parts:
            self.inbound.ours.add(part.message_id)

    async def update_reply(self, handle: ReplyHandle, doc: ReplyDoc) -> None:
        await self.streamer.update(handle, doc)
        self._remember(handle)

    async def finish_reply(self, handle: ReplyHandle, doc: ReplyDoc) -> None:
        await self.streamer.update(handle, doc)
        self._remember(handle)
        self.reactions.finished(handle.chat, handle.reply_to, doc.status)

    def handle_state(self, handle: FeishuReply) -> dict[str, Any]:
        return resume.reply_state(handle)

    def restore_handle(self, msg: InboundMessage, state: Mapping[str, Any]) -> FeishuReply | None:
        reply = resume.restore_reply(msg, state)
        return self.streamer.taken_over(reply) if reply is not None else None

    def finish_is_replayable(self, handle: FeishuReply) -> bool:
        return resume.finish_replayable(handle)

    async def send_continuation(self, handle: ReplyHandle, doc: ReplyDoc) -> None:
        await self.streamer.continuation(handle, doc)
        self._remember(handle)

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        target = reply_to or chat.topic_id
        for part in render.split_for_cards(text):
            content = render.dumps(render.text_card(part))
            if target:
                mid = await self.api.reply(
                    target, "interactive", content, in_thread=self._in_thread(chat)
                )
            else:
                mid = await self.api.send(chat.chat_id, "interactive", content)
            self.inbound.ours.add(mid)

    # ------------------------------------------------------------------ files
    async def send_file(self, handle: ReplyHandle, path: Path) -> None:
        reply: FeishuReply = handle
        msg_type, content = await files.upload(self.api, path)
        if reply.reply_to:
            mid = await self.api.reply(reply.reply_to, msg_type, content, in_thread=reply.in_thread)
        else:
            mid = await self.api.send(reply.chat.chat_id, msg_type, content)
        self.inbound.ours.add(mid)

    async def fetch_file(
        self, msg: InboundMessage, att: Attachment, dest_dir: Path, *, limit: int | None = None
    ) -> Path:
        own = self.capabilities.max_file_in
        return await files.fetch(self.api, msg, att, dest_dir, effective_limit(own, limit))
