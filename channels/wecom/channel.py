"""WeComChannel: the intelligent robot's long connection (wecom-aibot-python-sdk) on the
service's event loop.

Everything travels on that one connection, messages in and replies out, and WeCom keeps one
per bot (a second subscription ends the first): with several workers the one holding the
bot's lease (`exclusive_connection`) connects; the others send through it (`Channel.relay`,
channels/wecom/relayed.py).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from channels.base import (
    Attachment,
    Capabilities,
    Channel,
    ChannelError,
    ChatRef,
    InboundMessage,
    RateBudget,
    ReplyDoc,
    effective_limit,
)
from channels.wecom import files, render
from channels.wecom.config import WeComConfig
from channels.wecom.connection import Connection, trust
from channels.wecom.inbound import Inbound
from channels.wecom.relayed import Link, RelayedLink, run_send
from channels.wecom.stream import SEND, Replies, WeComReply, reply_state, restore_reply


def capabilities_for(config: WeComConfig) -> Capabilities:
    """The stream's frames per reply (`stream_interval`) and new messages per conversation
    (WeCom: about 30 a minute: a burst of 5, then one every 2 s)."""
    budgets = (
        RateBudget(scope="reply", per_second=1 / config.stream_interval, burst=1),
        RateBudget(scope="chat", method=SEND, per_second=0.5, burst=5),
    )
    return Capabilities(
        max_text_len=render.MAX_TEXT_LEN,
        buttons=True,
        max_file_in=config.max_file_bytes,
        edit_budget=budgets,
    )


class WeComChannel(Channel):
    name = "wecom"

    config: WeComConfig

    def setup(self) -> None:
        config, ctx = self.config, self.ctx
        self.capabilities = capabilities_for(config)
        self.connection: Connection | None = None
        self._replies: Replies | None = None
        self.inbound = Inbound(ctx, self._held, lambda: self.may_receive(), self._answer_press)

    @property
    def replies(self) -> Replies:
        if self._replies is None:  # made on the running loop (its clock)
            self._replies = Replies(
                self._conn, self.pacer, self.capabilities.edit_budget, self.ctx.choices
            )
        return self._replies

    def _held(self) -> Connection:
        """The connection, on the worker holding it (the only one receiving)."""
        if self.connection is None:
            raise ChannelError(
                "wecom: this worker does not hold the bot's connection", retryable=True
            )
        return self.connection

    def _conn(self) -> Link:
        """The connection on the worker holding it, else the relay to that worker."""
        if self.connection is not None:
            return self.connection
        if self.relay is not None:
            return RelayedLink(self.relay)
        raise ChannelError("wecom: this worker does not hold the bot's connection", retryable=True)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        trust(self.config)
        if self.receiving:
            await self.start_receiving()
        else:
            self.log.info(
                "wecom: another worker holds bot %s's connection; this worker's replies are "
                "relayed to it",
                self.config.bot_id,
            )

    def exclusive_connection(self) -> str | None:
        """One connection per bot across the workers (named by the bot's id, not secret)."""
        return self.config.bot_id

    async def start_receiving(self) -> None:
        if self.connection is not None:
            return
        connection = Connection(self.config, self.ctx, self.inbound.on_frame, self.backoff)
        await connection.open()
        self.connection = connection
        if self.relay is not None:  # run the other workers' sends
            self.relay.serve(functools.partial(run_send, connection))
        self.log.info("wecom connected as bot %s", self.config.bot_id)

    async def stop_receiving(self) -> None:
        if self.relay is not None:
            await self.relay.stop_serving()
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()

    async def stop(self) -> None:
        await self.stop_receiving()
        await self.inbound.close()
        self.ctx.report(connected=False)

    # ------------------------------------------------------------------ replies

    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> WeComReply:
        return await self.replies.open(msg, doc)

    async def update_reply(self, handle: WeComReply, doc: ReplyDoc) -> None:
        await self.replies.update(handle, doc)

    async def finish_reply(self, handle: WeComReply, doc: ReplyDoc) -> None:
        await self.replies.finish(handle, doc)

    async def materialize_reply(self, handle: WeComReply, doc: ReplyDoc) -> None:
        await self.replies.materialize(handle, doc)

    async def send_continuation(self, handle: WeComReply, doc: ReplyDoc) -> None:
        await self.replies.continuation(handle, doc)

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        for part in render.split(text):
            await self.replies.push(chat, part)

    async def _answer_press(self, msg: InboundMessage, text: str) -> None:
        try:
            await self.send_text(msg.chat, text)
        except ChannelError as exc:
            self.log.info("answering a press failed: %s", exc)

    async def send_file(self, handle: WeComReply, path: Path) -> None:
        await files.upload(self._conn(), handle.chat, path, self.config.max_file_bytes)

    async def fetch_file(
        self, msg: InboundMessage, att: Attachment, dest_dir: Path, *, limit: int | None = None
    ) -> Path:
        own = self.config.max_file_bytes
        return await files.download(att, dest_dir, limit=effective_limit(own, limit))

    def handle_state(self, handle: WeComReply) -> dict[str, Any]:
        return reply_state(handle)

    def restore_handle(self, msg: InboundMessage, state: Mapping[str, Any]) -> WeComReply | None:
        return restore_reply(msg, state)
