"""DingTalkChannel: Stream-mode inbound, AI-card streaming or one markdown reply, files."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
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
    RateLimited,
    ReplyDoc,
    effective_limit,
)
from channels.dingtalk.api import DingTalkApi
from channels.dingtalk.buttons import ButtonCards
from channels.dingtalk.cards import CARD_STREAM, CardState, CardStreamer
from channels.dingtalk.config import DingTalkConfig
from channels.dingtalk.outbox import Outbox
from channels.dingtalk.parse import MalformedEvent, parse_message, webhook_of
from channels.dingtalk.render import adapt_markdown, card_text, markdown_text
from channels.dingtalk.stream import StreamLink
from channels.files import free_path, outgoing_size

CHOOSE = "Choose:"  # the label above the buttons of a reply shown in an AI card
UPLOAD_LIMIT = 20 * 1024 * 1024
APP_QPS = 15.0
"""Stay under DingTalk's ~20 QPS per app across every card of the bot."""


@dataclass(eq=False)
class DingTalkReply:
    """The handle of one reply: its chat and, when streaming, its AI card."""

    chat: ChatRef
    msg: InboundMessage
    card: CardState | None = None
    buttons_card: str | None = None  # the button card showing the reply's buttons
    last: dict[str, Any] | None = None  # the reply's last part, alone (an approval card's)


class DingTalkChannel(Channel):
    name = "dingtalk"

    config: DingTalkConfig

    def setup(self) -> None:
        config, ctx = self.config, self.ctx
        self.capabilities = capabilities_for(config)
        self.api = DingTalkApi(config)
        self.outbox = Outbox(self.api, config)
        self.cards = CardStreamer(self.api, config, self.pacer, self.capabilities.edit_budget)
        self.buttons = ButtonCards(self.api, config, self.pacer, ctx.choices)
        self.link = StreamLink(
            config,
            self._on_callback,
            self._on_state,
            self.backoff,
            self._on_press,
            lambda: self.may_receive(),
        )

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self.api.start()
        if self.receiving:
            await self.start_receiving()
        else:
            self.ctx.report(connected=True)  # sending works; another worker receives

    def exclusive_connection(self) -> str | None:
        """The Stream connection: one per app across the workers (named by its client id)."""
        return self.config.client_id

    async def start_receiving(self) -> None:
        if self.link.running:
            return
        if not await self.link.start(timeout=10.0):  # the link reports its retry state itself
            self.log.info("dingtalk stream not connected yet; retrying in the background")

    async def stop_receiving(self) -> None:
        await self._close_link()
        self.ctx.report(connected=True)  # sending still works

    async def _close_link(self) -> None:
        if not await self.link.stop():
            self.log.error("dingtalk stream thread did not stop in time")

    async def stop(self) -> None:
        await self._close_link()
        await self.api.close()

    async def _on_state(
        self, connected: bool, error: str | None, retry: RetryState | None = None
    ) -> None:
        self.ctx.report(connected=connected, error=error, retry=retry)

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
        if msg.text or msg.attachments or msg.unsupported:
            await self.ctx.publish(msg)

    def _session_of(self, msg: InboundMessage) -> None:
        """The message's own session webhook: the worker answering it (on Redis, the partition's
        owner) may not be the one that received it, so the reply still goes the webhook way."""
        self.outbox.remember_webhook(msg.chat, *webhook_of(msg.raw))

    async def _on_press(self, data: dict[str, Any]) -> None:
        """A press on a button card, on the service loop. Never raises."""
        try:
            msg = await self.buttons.press(data, received_at=time.time())
            if msg is not None:
                await self.ctx.publish(msg)
        except Exception:
            self.log.exception("dingtalk: failed to handle a card button press")

    # ------------------------------------------------------------------ replies

    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> DingTalkReply:
        """With a card template: create and deliver the AI card. Else nothing is shown yet."""
        self._session_of(msg)
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
        await self._close_buttons(handle, doc)
        if handle.card is not None:
            await self.cards.update(handle.card, card_text(doc))

    async def finish_reply(self, handle: DingTalkReply, doc: ReplyDoc) -> None:
        await self._close_buttons(handle, doc)
        if handle.buttons_card is not None:  # the button card is the reply: the final edits it
            await self.buttons.close(handle.buttons_card, card_text(doc) or " ")
            return
        if handle.card is not None:
            try:
                await self.cards.finish(handle.card, card_text(doc), failed=doc.status == "failed")
                if doc.buttons:
                    await self._button_card(handle, doc, CHOOSE)
                return
            except RateLimited:
                raise
            except ChannelError as exc:
                self.log.warning("dingtalk: final card update failed (%s); markdown", exc)
                handle.card = None
        if doc.buttons:
            await self._button_card(handle, doc, card_text(doc))
            return
        await self.outbox.send_markdown(handle.chat, markdown_text(doc))

    # ------------------------------------------------------------------ surviving a restart
    # Card updates replace the whole content, so a restored card is streamed and finalized again
    # in place; without a card, replies are markdown messages that cannot be edited.

    def handle_state(self, handle: DingTalkReply) -> dict[str, Any]:
        card = handle.card
        state: dict[str, Any] = (
            {"card_id": card.card_id, "sender_id": card.sender_id} if card else {}
        )
        if handle.last:  # the reply's last part (an approval card), as a reply of its own
            state["last"] = handle.last
        return state | ({"buttons_card": handle.buttons_card} if handle.buttons_card else {})

    def restore_handle(self, msg: InboundMessage, state: Mapping[str, Any]) -> DingTalkReply:
        self._session_of(msg)
        reply = DingTalkReply(chat=msg.chat, msg=msg)
        reply.buttons_card = str(state.get("buttons_card") or "") or None
        if state.get("card_id"):
            reply.card = CardState(
                chat=msg.chat,
                sender_id=str(state.get("sender_id") or ""),
                card_id=str(state["card_id"]),
            )
        return reply

    def finish_is_replayable(self, handle: DingTalkReply) -> bool:
        return handle.card is not None

    async def _button_card(self, handle: DingTalkReply, doc: ReplyDoc, text: str) -> None:
        """The buttons on an interactive card; if DingTalk refuses it, markdown with links."""
        try:
            sent = await self.buttons.send(handle.chat, handle.msg.sender.id, text, doc.buttons)
            handle.buttons_card = sent
        except RateLimited:
            raise
        except ChannelError as exc:
            self.log.warning("dingtalk: button card refused (%s); buttons as links", exc)
            await self.outbox.send_markdown(handle.chat, markdown_text(doc, links=True))

    async def _close_buttons(self, handle: DingTalkReply, doc: ReplyDoc) -> None:
        """A reply shown with a button card goes on (restored after the choice, e.g. an
        approval's decision): the card's buttons go. Where the card is the reply itself (no AI
        card) and the reply now has no buttons, the final shows in it instead (`finish_reply`)."""
        card_id = handle.buttons_card
        if card_id is None or (handle.card is None and not doc.buttons):
            return
        handle.buttons_card = None
        await self.buttons.close(card_id)

    async def send_continuation(self, handle: DingTalkReply, doc: ReplyDoc) -> None:
        if doc.buttons:  # the last part of a long reply (an approval card): a reply of its own
            last = await self.open_reply(handle.msg, replace(doc, status="working"))
            await self.finish_reply(last, doc)
            handle.last = self.handle_state(last)
            return
        await self.outbox.send_markdown(handle.chat, markdown_text(doc))

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        await self.outbox.send_markdown(chat, adapt_markdown(text))

    async def mark_queued(
        self, msg: InboundMessage, doc: ReplyDoc | None = None
    ) -> DingTalkReply | None:
        """Markdown replies cannot be edited, so only an AI card shows the queued state."""
        if not self.config.card_template_id:
            return None
        return await self.open_reply(msg, doc or ReplyDoc(status="queued"))

    # ------------------------------------------------------------------ files

    async def send_file(self, handle: DingTalkReply, path: Path) -> None:
        await outgoing_size(path, UPLOAD_LIMIT)
        await self.outbox.send_file(handle.chat, path)

    async def fetch_file(
        self, msg: InboundMessage, att: Attachment, dest_dir: Path, *, limit: int | None = None
    ) -> Path:
        dest = free_path(dest_dir, att.name)
        own = self.config.max_file_bytes
        return await self.api.download(att.ref, dest, effective_limit(own, limit))


def capabilities_for(config: DingTalkConfig) -> Capabilities:
    return Capabilities(
        max_text_len=4000,
        buttons=True,
        max_file_in=config.max_file_bytes,
        # The service paces the app's QPS; per card the channel coalesces to `stream_interval`
        # itself (a second per-reply bucket in the service would add up to one interval of lag).
        edit_budget=(
            RateBudget(scope="bot", per_second=APP_QPS, burst=20),
            RateBudget(scope="reply", method=CARD_STREAM, per_second=1 / config.stream_interval),
        ),
    )
