"""DingTalkChannel: Stream-mode inbound, AI-card streaming or one markdown reply, files."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from channels.base import (
    Attachment,
    Capabilities,
    Channel,
    ChannelContext,
    ChannelError,
    ChatRef,
    FileTooLarge,
    InboundMessage,
    RateBudget,
    RateLimited,
    ReplyDoc,
)
from channels.dingtalk.api import DingTalkApi
from channels.dingtalk.cards import CardState, CardStreamer
from channels.dingtalk.config import DingTalkConfig
from channels.dingtalk.outbox import Outbox
from channels.dingtalk.parse import MalformedEvent, is_command, parse_message, webhook_of
from channels.dingtalk.render import adapt_markdown, card_text, markdown_text
from channels.dingtalk.stream import StreamLink
from channels.files import free_path

REFUSAL = "Sorry, you are not allowed to use this bot."
UPLOAD_LIMIT = 20 * 1024 * 1024
APP_QPS = 15.0
"""Stay under DingTalk's ~20 QPS per app across every card of the bot."""


@dataclass(eq=False)
class DingTalkReply:
    """The handle of one reply: its chat and, when streaming, its AI card."""

    chat: ChatRef
    msg: InboundMessage
    card: CardState | None = None


class DingTalkChannel(Channel):
    name = "dingtalk"

    def __init__(self, config: DingTalkConfig, ctx: ChannelContext) -> None:
        super().__init__(config, ctx)
        self.config: DingTalkConfig = config
        self.capabilities = capabilities_for(config)
        self.api = DingTalkApi(config)
        self.outbox = Outbox(self.api, config)
        self.cards = CardStreamer(self.api, config)
        self.link = StreamLink(config, self._on_callback, self._on_state)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self.api.start()
        if not await self.link.start(timeout=10.0):
            self.log.warning("dingtalk stream not connected yet; still trying in the background")
            self.ctx.report(connected=False, error="stream not connected")

    async def stop(self) -> None:
        if not await self.link.stop():
            self.log.error("dingtalk stream thread did not stop in time")
        await self.api.close()

    async def _on_state(self, connected: bool, error: str | None) -> None:
        self.ctx.report(connected=connected, error=error)

    # ------------------------------------------------------------------ inbound

    async def _on_callback(self, data: dict[str, Any]) -> None:
        """One acked chatbot callback, on the service loop. Never raises."""
        try:
            await self._handle_callback(data)
        except Exception:
            self.log.exception("dingtalk: failed to handle a chatbot message")

    async def _handle_callback(self, data: dict[str, Any]) -> None:
        try:
            msg = parse_message(data, channel=self.name, received_at=time.time())
        except MalformedEvent as exc:
            self.log.warning("dingtalk: skipped a malformed message: %s", exc)
            return
        self.outbox.remember_webhook(msg.chat, *webhook_of(data))
        if not self.config.allows(msg):
            self.log.info("dingtalk: refused %s in %s", msg.sender.id, msg.chat.key)
            await self.outbox.send_markdown(msg.chat, REFUSAL)
            return
        if not self._triggers(msg):
            return
        await self.ctx.publish(msg)

    def _triggers(self, msg: InboundMessage) -> bool:
        if not msg.text and not msg.attachments:
            return False
        if msg.chat.chat_type == "dm" or self.config.group_trigger == "all":
            return True
        return msg.mentions_bot or is_command(msg.text)

    # ------------------------------------------------------------------ replies

    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> DingTalkReply:
        """With a card template: create and deliver the AI card. Else nothing is shown yet."""
        reply = DingTalkReply(chat=msg.chat, msg=msg)
        if self.config.card_template_id:
            card = CardState(chat=msg.chat, sender_id=msg.sender.id)
            try:
                await self.cards.create(card, card_text(doc))
                reply.card = card
            except ChannelError as exc:
                self.log.warning("dingtalk: AI card failed (%s); replying in markdown", exc)
        return reply

    async def update_reply(self, handle: DingTalkReply, doc: ReplyDoc) -> None:
        if handle.card is not None:
            await self.cards.update(handle.card, card_text(doc))

    async def finish_reply(self, handle: DingTalkReply, doc: ReplyDoc) -> None:
        if handle.card is not None:
            try:
                await self.cards.finish(handle.card, card_text(doc), failed=doc.status == "failed")
                return
            except RateLimited:
                raise
            except ChannelError as exc:
                self.log.warning("dingtalk: final card update failed (%s); markdown", exc)
                handle.card = None
        await self.outbox.send_markdown(handle.chat, markdown_text(doc))

    async def send_continuation(self, handle: DingTalkReply, doc: ReplyDoc) -> None:
        await self.outbox.send_markdown(handle.chat, markdown_text(doc))

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        await self.outbox.send_markdown(chat, adapt_markdown(text))

    async def mark_queued(self, msg: InboundMessage) -> DingTalkReply | None:
        """Markdown replies cannot be edited, so only an AI card shows the queued state."""
        if not self.config.card_template_id:
            return None
        return await self.open_reply(msg, ReplyDoc(status="queued"))

    # ------------------------------------------------------------------ files

    async def send_file(self, handle: DingTalkReply, path: Path) -> None:
        size = file_size(path)
        if size > UPLOAD_LIMIT:
            raise FileTooLarge(path.name, size, UPLOAD_LIMIT)
        await self.outbox.send_file(handle.chat, path)

    async def fetch_file(self, msg: InboundMessage, att: Attachment, dest_dir: Path) -> Path:
        dest = free_path(dest_dir, att.name)
        return await self.api.download(att.ref, dest, self.config.max_file_bytes)


def capabilities_for(config: DingTalkConfig) -> Capabilities:
    streaming = bool(config.card_template_id)
    return Capabilities(
        max_text_len=4000,
        can_edit=streaming,
        cards=streaming,
        buttons=True,
        files_in=True,
        files_out=True,
        markdown="dingtalk",
        max_file_in=config.max_file_bytes,
        # Per card the channel itself coalesces to `stream_interval` (a second per-reply bucket
        # in the service would add up to one interval of lag); the service paces the app's QPS.
        edit_budget=(RateBudget(scope="bot", per_second=APP_QPS, burst=20),),
    )




def file_size(path: Path) -> int:
    return path.stat().st_size


