"""Streaming replies: drafts in DMs, an edited placeholder elsewhere, the final never lost.

Open:  "typing…" at once (renewed every 4.5 s while the reply runs).
DM:    sendMessageDraft with the growing text, then sendMessage with the final.
Group: the first text is sent as a message, then edited at most every `stream_interval_group`.
A message sent in the chat while a reply streams (a queued notice) would show above a draft's
final: the service first has the reply materialized as a message (its text so far, or "…"),
which then streams by editing, as in a group.
If Telegram refuses a draft that reply falls back to the placeholder path; only a server
without the method turns drafts off for the bot. A refused final edit is sent as a new message;
refused HTML is resent as its visible text (api.Sender.text): the user always gets the answer.
Intermediate updates are coalesced (channels/held.py): a doc that arrives before the chat's
slot is held and the newest one is shown when the slot opens (the update that creates the
reply's message waits for the slot instead, so the message's id is known when it returns).
Drafts have a budget of their own (channels/telegram/pacing.py), so the final message is not
held behind the last draft.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from telegram import InlineKeyboardMarkup, Message

from channels.base import (
    ChannelError,
    ChatRef,
    DeliveryRefused,
    InboundMessage,
    RateLimited,
    ReplyDoc,
)
from channels.held import Held
from channels.telegram.api import TYPED_FOR, Sender, where
from channels.telegram.buttons import ButtonTokens
from channels.telegram.pacing import DRAFT, MESSAGE
from channels.telegram.reactions import Reactions
from channels.telegram.render import Part, doc_markdown, render_parts, render_preview

log = logging.getLogger("channels.telegram")
TYPING_EVERY = 4.5


@dataclass(eq=False)
class TelegramReply:
    """One reply being streamed (the ReplyHandle)."""

    chat: ChatRef
    reply_to: int | None
    mode: Literal["draft", "edit"]
    draft_id: int = 0
    message_id: int | None = None
    shown: str = ""
    parts_sent: int = 0
    last_message_id: int | None = None  # the last continuation part's message (its buttons)
    pressed: int | None = None  # the keyboard message a command button was pressed on
    finished: bool = False
    working: bool = False  # the agent works on it (a queued reply's turn has come)
    held: Held[ReplyDoc] = field(default_factory=lambda: Held("deferred update", log))
    typing_task: asyncio.Task[None] | None = field(default=None, repr=False)


class Replies:
    """open / update / finish / continue replies through a `Sender`."""

    def __init__(
        self, sender: Sender, buttons: ButtonTokens, reactions: Reactions | None = None
    ) -> None:
        self.sender = sender
        self.buttons = buttons
        self.reactions = reactions or Reactions(sender, enabled=False)
        self.drafts_ok = True
        self._draft_ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ lifecycle of a reply

    async def open(self, msg: InboundMessage, doc: ReplyDoc) -> TelegramReply:
        """Typing at once; the first text (draft or message) comes with the first update.

        Nothing is sent as a placeholder: a fast answer then arrives as one message without
        waiting out the chat's interval, and a group's 20-per-minute budget is kept for text.
        A queued reply is a real message (drafts vanish after ~30 s).
        """
        reply_to = int(msg.message_id) if msg.message_id and not msg.is_button else None
        use_draft = msg.chat.chat_type == "dm" and self.drafts_ok and doc.status != "queued"
        handle = TelegramReply(
            chat=msg.chat,
            reply_to=reply_to,
            mode="draft" if use_draft else "edit",
            working=doc.status != "queued",
        )
        if use_draft:
            handle.draft_id = next(self._draft_ids)
        if msg.is_button and msg.message_id and msg.text.startswith("/"):
            handle.pressed = int(msg.message_id)
        if doc.status == "queued":
            try:
                await self._show(handle, doc)
            except RateLimited:
                pass  # the run's first update or the final creates the message
            handle.typing_task = self._spawn(self._keep_typing(handle))  # waiting: still alive
        else:
            await self.sender.typing(handle.chat, fresh=TYPED_FOR - TYPING_EVERY)  # at receipt?
            handle.typing_task = self._spawn(self._keep_typing(handle, first_after=TYPING_EVERY))
            self.reactions.working(handle.chat, handle.reply_to)
        return handle

    async def update(self, handle: TelegramReply, doc: ReplyDoc) -> None:
        if handle.finished:
            return
        handle.parts_sent = 0  # streaming (again, after a restart): none of its final is out
        if not handle.working and doc.status == "working":  # a queued or reopened reply's turn
            handle.working = True
            if handle.typing_task is None:
                handle.typing_task = self._spawn(self._keep_typing(handle))
            self.reactions.working(handle.chat, handle.reply_to)
        handle.held.hold(doc)
        if handle.held.waiting:
            return  # the scheduled flush will show the newest doc
        self.sender.gate.check()
        wait = self._ready_in(handle)
        if wait > 0 and not _first_message(handle):
            handle.held.schedule(
                lambda held: self._show_held(handle, held), lambda: self._ready(handle), self._spawn
            )
            return
        if wait > 0:  # a new message's id must be known when this returns (see _first_message)
            await self.sender.pacer.sleep(wait)
        await self._show_held(handle, handle.held.take())

    async def finish(self, handle: TelegramReply, doc: ReplyDoc) -> None:
        await handle.held.stop()  # never cuts a call off: it may still land
        self._stop_typing(handle)
        parts = render_parts(doc_markdown(doc))
        if handle.pressed and doc.buttons and len(parts) == 1 and not handle.shown:
            # a command button answered with a new keyboard: update the pressed message in
            # place, so no old keyboard keeps showing a stale choice (the ✓ moves)
            handle.mode, handle.message_id = "edit", handle.pressed
        for index in range(handle.parts_sent, len(parts)):
            keyboard = self._keyboard(doc) if index == len(parts) - 1 else None
            if index == 0:
                await self._deliver_first(handle, parts[0], keyboard)
            else:
                await self._send_new(handle.chat, parts[index], keyboard, None)
            handle.parts_sent = index + 1
        handle.finished = True
        self.reactions.finished(handle.chat, handle.reply_to, doc.status)

    async def materialize(self, handle: TelegramReply, doc: ReplyDoc) -> None:
        """The reply becomes a message now (a draft's current text, or "…" before any), so a
        message sent next shows below it; the reply then streams by editing it."""
        if handle.finished or handle.message_id is not None:
            return
        await handle.held.stop()  # a draft on its way lands first
        handle.mode = "edit"
        part = render_preview(doc_markdown(doc))
        handle.message_id = await self._send_new(
            handle.chat, part, self._keyboard(doc), handle.reply_to
        )
        handle.shown = part.html

    async def continuation(self, handle: TelegramReply, doc: ReplyDoc) -> None:
        parts = render_parts(doc_markdown(doc))
        for index, part in enumerate(parts):
            keyboard = self._keyboard(doc) if index == len(parts) - 1 else None
            handle.last_message_id = await self._send_new(handle.chat, part, keyboard, None)

    async def close(self) -> None:
        await self.reactions.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # ------------------------------------------------------------------ showing

    async def _show(self, handle: TelegramReply, doc: ReplyDoc) -> None:
        part = render_preview(doc_markdown(doc))
        if part.html == handle.shown:
            return
        if handle.mode == "draft":
            try:
                await self.sender.text(
                    handle.chat, part, lambda t, pm: self._draft(handle, t, pm), DRAFT
                )
            except ChannelError as exc:
                if exc.retryable or isinstance(exc, DeliveryRefused):
                    raise  # a blocked bot or a gone chat says nothing about drafts
                self._drafts_refused(handle, exc)
                await self._show(handle, doc)
                return
        elif handle.message_id is None:
            handle.message_id = await self._send_new(
                handle.chat, part, self._keyboard(doc), handle.reply_to
            )
        else:
            await self._edit(handle, part, self._keyboard(doc))
        handle.shown = part.html

    def _drafts_refused(self, handle: TelegramReply, exc: ChannelError) -> None:
        """This reply streams by editing a message instead. Only a server without the
        method (404 Not Found) switches drafts off for the bot; any other refusal is this
        draft's own and every other reply keeps its drafts."""
        handle.mode = "edit"
        if _method_missing(exc):
            log.info("drafts unavailable (%s); streaming by editing a placeholder", exc)
            self.drafts_ok = False
        else:
            log.info("a draft was refused (%s); this reply streams by editing", exc)

    async def _show_held(self, handle: TelegramReply, doc: ReplyDoc | None) -> None:
        if doc is not None and not handle.finished:
            await self._show(handle, doc)

    def _ready_in(self, handle: TelegramReply) -> float:
        return self.sender.ready_in(handle.chat, DRAFT if handle.mode == "draft" else MESSAGE)

    async def _ready(self, handle: TelegramReply) -> None:
        wait = self._ready_in(handle)
        if wait > 0:
            await self.sender.pacer.sleep(wait)

    async def _deliver_first(
        self, handle: TelegramReply, part: Part, keyboard: InlineKeyboardMarkup | None
    ) -> None:
        if handle.mode == "edit" and handle.message_id is not None:
            try:
                await self._edit(handle, part, keyboard)
                return
            except ChannelError as exc:
                if exc.retryable:
                    raise
                log.info("final edit refused (%s); sending the answer as a new message", exc)
            handle.message_id = await self._send_new(handle.chat, part, keyboard, None)
        else:
            handle.message_id = await self._send_new(handle.chat, part, keyboard, handle.reply_to)

    # ------------------------------------------------------------------ calls

    async def _draft(self, handle: TelegramReply, text: str, parse_mode: str | None) -> bool:
        return await self.sender.bot.send_message_draft(
            draft_id=handle.draft_id, text=text, parse_mode=parse_mode, **where(handle.chat)
        )

    async def _send_new(
        self,
        chat: ChatRef,
        part: Part,
        keyboard: InlineKeyboardMarkup | None,
        reply_to: int | None,
    ) -> int | None:
        async def call(text: str, parse_mode: str | None) -> Message:
            return await self.sender.bot.send_message(
                text=text,
                parse_mode=parse_mode,
                reply_markup=keyboard,
                reply_to_message_id=reply_to,
                allow_sending_without_reply=True,
                **where(chat),
            )

        message = await self.sender.text(chat, part, call)
        return message.message_id if message else None

    async def _edit(
        self, handle: TelegramReply, part: Part, keyboard: InlineKeyboardMarkup | None
    ) -> None:
        async def call(text: str, parse_mode: str | None) -> Any:
            return await self.sender.bot.edit_message_text(
                text=text,
                parse_mode=parse_mode,
                reply_markup=keyboard,
                chat_id=int(handle.chat.chat_id),
                message_id=handle.message_id,
            )

        await self.sender.text(handle.chat, part, call)

    def _keyboard(self, doc: ReplyDoc) -> InlineKeyboardMarkup | None:
        return self.buttons.keyboard(doc.buttons) if doc.buttons else None

    # ------------------------------------------------------------------ background tasks

    async def _keep_typing(self, handle: TelegramReply, first_after: float = 0.0) -> None:
        await asyncio.sleep(first_after)
        while not handle.finished:
            await self.sender.typing(handle.chat)
            await asyncio.sleep(TYPING_EVERY)

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _stop_typing(self, handle: TelegramReply) -> None:
        if handle.typing_task and not handle.typing_task.done():
            handle.typing_task.cancel()
        handle.typing_task = None


def _first_message(handle: TelegramReply) -> bool:
    """The next update creates the reply's message. It is sent within the update, never later
    in the background: the service keeps the message id after each update, and a restart that
    did not know it would post a second message beside the first."""
    return handle.mode == "edit" and handle.message_id is None


def _method_missing(exc: ChannelError) -> bool:
    text = str(exc).lower()
    return "not found" in text or "method" in text
