"""A conversation's lane in the dispatcher: its queued jobs, its running reply, what waits for
a run slot; and the replies other workers write (with several workers on Redis)."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.commands import ParsedCommand
from bot.notices import RunningReply
from bot.stores.journal import Entry, State
from channels.base import Channel, ChatRef, InboundMessage, ReplyHandle


class RunsElsewhere(Protocol):
    """Replies written by other workers (bot/cluster/control.py), when there are any."""

    async def started(self, msg: InboundMessage) -> None: ...

    async def ended(self, msg: InboundMessage) -> None: ...

    async def in_chat(self, chat: ChatRef, sender_id: str) -> list[InboundMessage]: ...

    async def stop(self, chat: ChatRef) -> bool: ...


@dataclass
class Job:
    msg: InboundMessage
    handle: ReplyHandle | None = None
    command: ParsedCommand | None = None
    entry: Entry | None = None  # set when a restart resumes the message
    notice: asyncio.Task[ReplyHandle | None] | None = None  # the queued notice on its way
    taken_over: bool = False  # another worker owns its conversation now: not ours to answer
    reopen: InboundMessage | None = None  # the message it edits: its reply is rewritten
    locale: str = ""  # the language its sender is answered in ("": asked when it runs)


@dataclass
class Lane:
    jobs: deque[Job] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    run: asyncio.Task[None] | None = None
    stop_reason: str = ""
    running: InboundMessage | None = None  # the message whose reply is being written
    reply: RunningReply | None = None  # ... and that reply, for notices queued behind it
    waiting: Job | None = None  # the job waiting for a run slot ...
    slot_wait: asyncio.Future[Any] | None = None  # ... and its wait, which /stop may cancel
    channel: Channel | None = None  # the channel instance writing the running reply
    cut: bool = False  # a channel restart cut the run: its message is answered again next


def current_message(lane: Lane) -> InboundMessage | None:
    """The message a lane is answering or about to answer (waiting for a run slot)."""
    if lane.run is not None and lane.running is not None:
        return lane.running
    return lane.waiting.msg if lane.waiting is not None else None


def stop_waiting(lane: Lane, reason: str) -> bool:
    """Stop a message still waiting for a run slot; False when none is (or it is a final
    a previous process had started: that one is delivered, not stopped)."""
    job, wait = lane.waiting, lane.slot_wait
    if job is None or wait is None or wait.done():
        return False
    if job.entry is not None and job.entry.state is State.delivering:
        return False
    lane.stop_reason = reason
    wait.cancel()
    return True
