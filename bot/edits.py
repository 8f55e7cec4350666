"""Edited messages: what a person's edit of a message they sent does (docs/channels/README.md,
"Edited messages").

A channel delivers an edit as an `InboundMessage` whose `edit` names the edited message and the
edit's version; its `event_id` includes the version, so the delivery journal takes each edit
once (a redelivered edit is one edit, a second edit another). By the channel's `edits` policy:

- `reanswer` (default): an edit of a message still queued replaces it (its queued notice
  answers the new text); an edit of the message being answered stops that run and answers the
  new text in the same reply; an edit of an answered message within `edit_window_minutes`
  answers again by rewriting the bot's reply in place (the earlier answer stays in the thread's
  history). An older edit is passed over; one whose original the service does not know (sent
  before a restart, on a platform whose edits do not name the original's event) is answered as
  a new message.
- `requeue`: every edit is answered as a new message, in order.
- `ignore`: edits are settled without an answer.

Every edit answer is marked as answering the edit (texts.EDIT_ANSWERED).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from bot import texts
from bot.lanes import Job, Lane
from bot.settle import Settle
from bot.stores.journal import Journal
from channels.base import Channel, ChannelError, EditPolicy, InboundMessage, ReplyDoc, ReplyHandle

log = logging.getLogger("bot.edits")

REMEMBERED = 10_000  # answered messages whose edits can find their reply from memory
PASSED_OVER = "an edit past the edit window"
IGNORED = "an edit (edits: ignore)"
REPLACED = "replaced by its edit before its turn"


class Edits:
    def __init__(self, journal: Journal, settle: Settle) -> None:
        self.journal = journal
        self.settle = settle
        self._recent: OrderedDict[tuple[str, str], InboundMessage] = OrderedDict()

    def remember(self, msg: InboundMessage) -> None:
        """`msg` is to be answered: an edit of it later finds its journal entry (its reply)."""
        if msg.message_id and not msg.is_button:
            key = (msg.chat.key, msg.message_id)
            self._recent[key] = msg
            self._recent.move_to_end(key)
            while len(self._recent) > REMEMBERED:
                self._recent.popitem(last=False)

    async def take(
        self,
        channel: Channel,
        msg: InboundMessage,
        lane: Lane | None,
        enqueue: Callable[[Job], None],
        *,
        busy: bool = False,
    ) -> InboundMessage | None:
        """Handle the edit `msg`; returns it when it is to be answered as a new message.
        `busy`: a new job of its conversation would wait (the reply it rewrites says so)."""
        assert msg.edit is not None
        policy = channel.config.edits
        if policy is EditPolicy.requeue:
            return msg
        if policy is EditPolicy.ignore:
            await self.settle.passed_over(msg, IGNORED)
            return None
        if lane is not None and await self._in_lane(msg, lane):
            return None
        if self._too_old(channel, msg):
            await self.settle.passed_over(msg, PASSED_OVER)
            return None
        original = await self._original(msg)
        if original is None:
            return msg
        self.remember(msg)
        job = Job(msg, reopen=original)
        if busy:  # its sign of life: the reply it rewrites shows it queued
            job.notice = asyncio.create_task(self._queued(channel, job), name="edit queued")
        enqueue(job)
        return None

    async def reopen(self, channel: Channel, job: Job) -> ReplyHandle | None:
        """The reply of the message `job` edits, ready to be rewritten (None: a new reply)."""
        assert job.reopen is not None
        entry = await self.journal.entry(job.reopen)
        if entry is None or not entry.handle:
            return None
        return channel.reopen_reply(job.msg, entry.handle)

    async def _queued(self, channel: Channel, job: Job) -> ReplyHandle | None:
        handle = await self.reopen(channel, job)
        job.reopen = None  # reopened once, here
        if handle is None:
            return None
        try:
            await channel.update_reply(handle, ReplyDoc(status="queued", note=texts.EDIT_ANSWERED))
        except ChannelError as exc:  # the answer still rewrites it when its turn comes
            log.warning("queued edit not shown on %s: %s", channel.name, exc)
        if (state := channel.handle_state(handle)) is not None:
            await self.journal.keep_handle(job.msg, state)
        return handle

    async def _in_lane(self, msg: InboundMessage, lane: Lane) -> bool:
        """The edited message is queued (replaced) or being answered (stopped, answered again
        in its reply); False when it is neither."""
        edited = _edited(msg)
        waiting = [lane.waiting] if lane.waiting is not None else []
        for job in [*waiting, *lane.jobs]:
            if job.command is None and job.entry is None and _edited(job.msg) == edited:
                old, job.msg = job.msg, msg
                self.remember(msg)
                await self.settle.passed_over(old, REPLACED)
                return True
        running = lane.running
        if lane.run is None or running is None or _edited(running) != edited:
            return False
        finishing = lane.reply is not None and lane.reply.finishing
        if not lane.run.done() and not finishing:  # a final on its way is rewritten after
            lane.stop_reason = texts.STOPPED_FOR_EDIT
            lane.run.cancel()
        self.remember(msg)
        lane.jobs.appendleft(Job(msg, reopen=running))
        return True

    def _too_old(self, channel: Channel, msg: InboundMessage) -> bool:
        assert msg.edit is not None
        sent = msg.edit.sent_at or msg.received_at
        window = channel.config.edit_window_minutes * 60
        return bool(sent) and time.time() - sent > window

    async def _original(self, msg: InboundMessage) -> InboundMessage | None:
        """The message the edit changes (its latest version answered), from memory or, where
        the channel names the original's event, from the journal."""
        assert msg.edit is not None
        known = self._recent.get((msg.chat.key, msg.edit.message_id))
        if known is not None:
            return known
        if not msg.edit.original_event_id:
            return None
        probe = replace(msg, event_id=msg.edit.original_event_id, edit=None)
        entry = await self.journal.entry(probe)
        return probe if entry is not None and entry.handle else None


def _edited(msg: InboundMessage) -> tuple[str, str | None]:
    """Which message of which conversation `msg` is (an edit names the message it edits)."""
    message_id = msg.edit.message_id if msg.edit is not None else msg.message_id
    return msg.chat.key, message_id
