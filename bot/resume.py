"""Taking up messages a previous process (or a worker that died) accepted but did not settle.

Each journal entry is continued by its state (see bot/journal.py): a message never started goes
back on the bus; one that was running or delivering goes to its conversation's lane with the
reply the user already sees (its handle restored by the channel), so the answer continues there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from bot.settle import Settle
from bot.stores.journal import Entry, State
from channels.base import Channel, InboundMessage, ReplyHandle

log = logging.getLogger("bot.resume")


async def resume_entries(
    entries: list[Entry],
    channels: Mapping[str, Channel],
    requeue: Callable[[InboundMessage], None],
    resume: Callable[[Entry, ReplyHandle | None], None],
    settle: Settle,
) -> None:
    for entry in entries:
        msg = entry.msg
        assert msg is not None
        channel = channels.get(msg.chat.channel)
        if channel is None:
            log.warning("message for disabled channel %s settled unanswered", msg.chat.channel)
            await settle.unanswered(msg, "channel not enabled")
            continue
        log.info("taking up %s:%s (%s before restart)", msg.chat.channel, msg.event_id, entry.state)
        if entry.state is State.accepted and not entry.handle:
            try:
                requeue(msg)
            except asyncio.QueueFull:
                log.warning("queue full; %s stays pending until next start", msg.event_id)
            continue
        resume(entry, restored_handle(channel, entry))


def restored_handle(channel: Channel, entry: Entry) -> Any:
    """The reply of `entry` as the channel can find it again, or None to start afresh."""
    if not entry.handle or entry.msg is None:
        return None
    try:
        return channel.restore_handle(entry.msg, entry.handle)
    except Exception as exc:  # an old handle the channel cannot read: start afresh
        log.warning("reply of %s not restored: %s", entry.key, exc)
        return None
