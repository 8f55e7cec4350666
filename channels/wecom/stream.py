"""Replies: a streaming message answering the person's message, pushes for everything else.

Stream: a reply to a message goes with the message's request id as WeCom's stream message: the
first frame (at once: "…", or the queued notice) shows it, each further frame replaces its
text, the frame with `finish` ends it. No frame may follow the finish, nor come more than six
minutes after the first (`STREAM_WINDOW` keeps a margin): a reply that runs longer stops
updating and its final is pushed as a new message. A final the stream refuses is pushed too.
Push: `aibot_send_msg` to the chat (the person's userid or the group's chatid): command
answers, notices, the parts after the first of a long answer, the reply to a button press
(an event's request id takes no stream), files, and the template cards with buttons, sent
after the text they belong to.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from channels.base import (
    ChannelError,
    ChatRef,
    InboundMessage,
    RateBudget,
    RateLimited,
    ReplyDoc,
)
from channels.choices import ChoiceStore
from channels.pacing import Pacer
from channels.relay import OutcomeUnknown
from channels.wecom import cards, render
from channels.wecom.relayed import Link

log = logging.getLogger("channels.wecom")
STREAM_WINDOW = 330.0  # WeCom: no stream frame later than 6 minutes after the first
SEND = "send"
Clock = Callable[[], float]


@dataclass(eq=False)
class WeComReply:
    """One reply (the ReplyHandle): the request id its stream answers, what it shows."""

    chat: ChatRef
    req_id: str | None
    stream_id: str = field(default_factory=lambda: f"s-{secrets.token_hex(8)}")
    started: float | None = None
    shown: str | None = None
    finished: bool = False
    text_done: bool = False
    cards_done: bool = False
    split_cards: bool = False  # a long reply's last part came with buttons (an approval card)


class Replies:
    def __init__(
        self,
        conn: Callable[[], Link],
        pacer: Pacer,
        budgets: tuple[RateBudget, ...],
        choices: ChoiceStore,
        clock: Clock | None = None,
    ) -> None:
        self.conn, self.pacer, self.choices = conn, pacer, choices
        self._budgets = budgets
        self.clock = clock or asyncio.get_running_loop().time

    # ------------------------------------------------------------------ a reply's life

    async def open(self, msg: InboundMessage, doc: ReplyDoc) -> WeComReply:
        req_id = None if msg.is_button else msg.raw.get("req_id")
        handle = WeComReply(chat=msg.chat, req_id=str(req_id) if req_id else None)
        if handle.req_id is not None:
            await self._preview(handle, doc)
        elif doc.status == "queued":
            await self.push(handle.chat, render.body(doc))
        return handle

    async def update(self, handle: WeComReply, doc: ReplyDoc) -> None:
        if handle.finished or not self._streaming(handle):
            return
        await self._preview(handle, doc)

    async def materialize(self, handle: WeComReply, doc: ReplyDoc) -> None:
        if handle.shown is None and self._streaming(handle):
            await self._preview(handle, doc)

    async def _preview(self, handle: WeComReply, doc: ReplyDoc) -> None:
        """A frame of the stream; a stream WeCom refuses (ended, expired, unknown after a
        restart) is given up: the reply goes on without updates and its final is pushed."""
        try:
            await self._frame(handle, render.body(doc, preview=True))
        except (RateLimited, OutcomeUnknown):  # (OutcomeUnknown: it may be shown already)
            raise
        except ChannelError as exc:
            if exc.retryable:
                raise
            log.info("stream of a reply refused (%s); its final will be pushed", exc)
            handle.req_id = None

    async def finish(self, handle: WeComReply, doc: ReplyDoc) -> None:
        """The final text (the stream's last frame, else a push), then the buttons' cards; a
        retried finish skips what was already delivered."""
        content = render.body(doc)
        if not handle.text_done:
            await self._final_text(handle, content)
            handle.text_done = True
        if doc.buttons and not handle.cards_done:
            await self._cards(handle.chat, doc, content)
            handle.cards_done = True
        handle.finished = True

    async def continuation(self, handle: WeComReply, doc: ReplyDoc) -> None:
        """A further part of a long final; the last one's buttons (an approval card's) follow
        it as cards, as after a final."""
        content = render.body(doc)
        await self.push(handle.chat, content)
        if doc.buttons:
            await self._cards(handle.chat, doc, content)
            handle.split_cards = True

    async def _cards(self, chat: ChatRef, doc: ReplyDoc, content: str) -> None:
        for card in await cards.cards_for(doc.buttons, cards.title_of(content), self.choices):
            await self._send(chat, {"msgtype": "template_card", "template_card": card})

    async def _final_text(self, handle: WeComReply, content: str) -> None:
        if self._streaming(handle):
            try:
                await self._frame(handle, content, finish=True)
                return
            except (RateLimited, OutcomeUnknown):
                raise
            except ChannelError as exc:
                if exc.retryable:
                    raise
                log.info("final stream frame refused (%s); pushing the answer instead", exc)
        await self.push(handle.chat, content)

    # ------------------------------------------------------------------ calls

    def _streaming(self, handle: WeComReply) -> bool:
        if handle.req_id is None:
            return False
        return handle.started is None or self.clock() - handle.started < STREAM_WINDOW

    async def _frame(self, handle: WeComReply, content: str, *, finish: bool = False) -> None:
        """One frame of the stream (paced by the service as reply updates)."""
        if content == handle.shown and not finish:
            return
        assert handle.req_id is not None
        await self.pacer.wait_unblocked(handle.chat)
        started = handle.started is None
        handle.started = self.clock() if started else handle.started
        try:
            await self.conn().stream(handle.req_id, handle.stream_id, content, finish=finish)
        except ChannelError:
            handle.started = None if started else handle.started
            raise
        handle.shown = content

    async def push(self, chat: ChatRef, content: str) -> None:
        await self._send(chat, {"msgtype": "markdown", "markdown": {"content": content}})

    async def _send(self, chat: ChatRef, body: dict[str, Any]) -> None:
        """A new message in `chat`, within WeCom's messages per conversation."""
        budgets = tuple(
            b for b in self._budgets if b.method == SEND and b.chat_type in (None, chat.chat_type)
        )
        async with self.pacer.slot(chat, budgets):
            await self.conn().push(chat.chat_id, body)


# ---------------------------------------------------------------------- surviving a restart


def reply_state(handle: WeComReply) -> dict[str, Any]:
    """A stream whose final frame went out (e.g. the notice of a restart) takes no more: the
    restored reply is pushed."""
    req_id = None if handle.text_done else handle.req_id
    state: dict[str, Any] = {"req_id": req_id, "stream_id": handle.stream_id, "shown": handle.shown}
    if handle.split_cards:  # its last part is an approval card alone: what follows it is pushed
        state["last"] = dict(state)
    return state


def restore_reply(msg: InboundMessage, state: Mapping[str, Any]) -> WeComReply | None:
    """The stream is taken up again where it was (a frame WeCom refuses sends the final as a
    push); its six minutes are counted from the restart."""
    stream_id = state.get("stream_id")
    if not isinstance(stream_id, str) or not stream_id:
        return None
    req_id = state.get("req_id")
    shown = state.get("shown")
    return WeComReply(
        chat=msg.chat,
        req_id=str(req_id) if req_id else None,
        stream_id=stream_id,
        shown=shown if isinstance(shown, str) else None,
    )
