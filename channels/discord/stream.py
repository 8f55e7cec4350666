"""Streaming replies by editing one message, the final never lost.

Open:   "typing…" at once (renewed every 8 s while the reply runs; it lasts 10 s), or a
        queued notice as a real message. In a server channel with thread replies the thread
        is started from the user's message first (its id is the thread's).
Update: the first text is sent as a message, then edited; the service paces the updates
        within the channel's "update" budget (Discord: 5 edits per 5 s per channel).
Final:  an edit of that message with the answer's first part (≤ 2,000 characters) and its
        buttons; a refused edit (the message was deleted) sends it as a new message. The
        service sends the other parts as continuation messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import discord

from channels.base import ChannelError, ChatRef, DeliveryRefused, InboundMessage, ReplyDoc
from channels.choices import ChoiceStore
from channels.discord import buttons, render
from channels.discord.api import THREAD_EXISTS, DiscordRefused, Sender, guarded

log = logging.getLogger("channels.discord")
TYPING_EVERY = 8.0
THREAD_NAME_LIMIT = 100


@dataclass(eq=False)
class DiscordReply:
    """One reply (the ReplyHandle): where it is sent and the message that shows it."""

    chat: ChatRef
    target: int
    reply_to: int | None = None
    message_id: int | None = None
    last_message_id: int | None = None  # the last continuation part's message (its buttons)
    shown: render.Shown | None = None
    finished: bool = False
    typing_task: asyncio.Task[None] | None = field(default=None, repr=False)


def target_of(chat: ChatRef) -> int:
    """The Discord channel a chat's messages go to: its thread, else the channel (or DM)."""
    return int(chat.topic_id or chat.chat_id)


class Replies:
    def __init__(self, client: discord.Client, sender: Sender, choices: ChoiceStore) -> None:
        self.client = client
        self.sender = sender
        self.choices = choices
        self.threads: set[int] = set()  # threads known to exist
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ a reply's life

    async def open(self, msg: InboundMessage, doc: ReplyDoc) -> DiscordReply:
        if msg.raw.get("start_thread") and msg.chat.topic_id:
            await self.ensure_thread(msg.chat, msg.text)
        quote = msg.message_id and not msg.is_button and not msg.chat.topic_id
        handle = DiscordReply(
            chat=msg.chat,
            target=target_of(msg.chat),
            reply_to=int(msg.message_id) if quote and msg.message_id else None,
        )
        if doc.status == "queued":
            await self._show(handle, render.shown(doc, preview=True))
        else:
            await self.typing(handle.chat)
            handle.typing_task = self._spawn(self._keep_typing(handle))
        return handle

    async def update(self, handle: DiscordReply, doc: ReplyDoc) -> None:
        if handle.finished:
            return
        if handle.typing_task is None and doc.status == "working":
            handle.typing_task = self._spawn(self._keep_typing(handle))  # a queued reply's turn
        await self._show(handle, render.shown(doc, preview=True))

    async def finish(self, handle: DiscordReply, doc: ReplyDoc) -> None:
        self._stop_typing(handle)
        final = render.shown(doc)
        if handle.message_id is not None:
            try:
                await self._edit(handle, final)
                handle.finished = True
                return
            except DeliveryRefused as exc:
                if exc.reason != "message not found":
                    raise
                log.info("final edit refused (%s); sending the answer as a new message", exc)
                handle.message_id = None
        handle.message_id = await self.post(handle.chat, handle.target, final, handle.reply_to)
        handle.shown = final
        handle.finished = True

    async def materialize(self, handle: DiscordReply, doc: ReplyDoc) -> None:
        if handle.finished or handle.message_id is not None:
            return
        await self._show(handle, render.shown(doc, preview=True))

    async def continuation(self, handle: DiscordReply, doc: ReplyDoc) -> None:
        handle.last_message_id = await self.post(
            handle.chat, handle.target, render.shown(doc), None
        )

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # ------------------------------------------------------------------ calls

    async def _show(self, handle: DiscordReply, shown: render.Shown) -> None:
        if shown == handle.shown:
            return
        if handle.message_id is None:
            handle.message_id = await self.post(handle.chat, handle.target, shown, handle.reply_to)
        else:
            await self._edit(handle, shown)
        handle.shown = shown

    async def post(
        self, chat: ChatRef, target: int, shown: render.Shown, reply_to: int | None
    ) -> int:
        view = await buttons.view(shown.buttons, self.choices)
        where = self.client.get_partial_messageable(target)
        kwargs: dict[str, Any] = {"content": shown.content}
        if view is not None:
            kwargs["view"] = view
        if reply_to is not None:
            kwargs["reference"] = discord.MessageReference(
                message_id=reply_to, channel_id=target, fail_if_not_exists=False
            )
        message = await self.sender.paced(chat, lambda: where.send(**kwargs), "send message")
        return message.id

    async def _edit(self, handle: DiscordReply, shown: render.Shown) -> None:
        assert handle.message_id is not None
        view = await buttons.view(shown.buttons, self.choices)
        message = self.client.get_partial_messageable(handle.target).get_partial_message(
            handle.message_id
        )
        await self.sender.unpaced(
            handle.chat, lambda: message.edit(content=shown.content, view=view), "edit message"
        )
        handle.shown = shown

    async def ensure_thread(self, chat: ChatRef, text: str) -> None:
        """Start the thread of a top-level message (thread id = message id), once."""
        assert chat.topic_id is not None
        thread = int(chat.topic_id)
        if thread in self.threads:
            return
        name = (text.strip().splitlines() or ["Antler"])[0][:THREAD_NAME_LIMIT] or "Antler"
        http = self.client.http
        try:
            await self.sender.paced(
                chat,
                lambda: http.start_thread_with_message(
                    int(chat.chat_id), thread, name=name, auto_archive_duration=1440
                ),
                "start thread",
            )
        except DiscordRefused as exc:
            if exc.code != THREAD_EXISTS:
                raise
        self.threads.add(thread)

    async def typing(self, chat: ChatRef) -> None:
        """Show "typing…"; skipped while the chat is blocked, failures only logged."""
        if self.sender.pacer.blocked_for(chat) > 0:
            return
        try:
            await guarded(lambda: self.client.http.send_typing(target_of(chat)), "typing")
        except ChannelError as exc:
            log.debug("typing failed: %s", exc)

    # ------------------------------------------------------------------ background

    async def _keep_typing(self, handle: DiscordReply) -> None:
        while not handle.finished:
            await asyncio.sleep(TYPING_EVERY)
            if handle.finished:
                return
            await self.typing(handle.chat)

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _stop_typing(self, handle: DiscordReply) -> None:
        if handle.typing_task is not None and not handle.typing_task.done():
            handle.typing_task.cancel()
        handle.typing_task = None


# ---------------------------------------------------------------------- surviving a restart


def reply_state(handle: DiscordReply) -> dict[str, Any]:
    state: dict[str, Any] = {
        "target": handle.target,
        "message_id": handle.message_id,
        "reply_to": handle.reply_to,
    }
    if handle.last_message_id is not None:  # the reply's last part, as a reply of its own
        state["last"] = {"target": handle.target, "message_id": handle.last_message_id}
    return state


def restore_reply(msg: InboundMessage, state: Mapping[str, Any]) -> DiscordReply | None:
    target = _int(state.get("target"))
    if target is None:
        return None
    return DiscordReply(
        chat=msg.chat,
        target=target,
        reply_to=_int(state.get("reply_to")),
        message_id=_int(state.get("message_id")),
    )


def _int(value: Any) -> int | None:
    with contextlib.suppress(TypeError, ValueError):
        return int(value) if value is not None else None
    return None
