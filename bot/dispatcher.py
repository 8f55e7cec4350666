"""The dispatcher: commands at once, chat messages in per-conversation lanes.

Each conversation has a lane that handles its messages strictly in order. Lanes run concurrently
up to `max_concurrent_runs`; a lane waiting for a slot is just a suspended task, so queued
messages hold no worker. A message arriving while its conversation is busy is queued (the user
sees so) or interrupts the running reply, by the channel's busy policy; a message that has to
wait for a free slot gets a queued notice at admission, so every message shows a sign of life
at once whatever the load.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any

from bot import i18n, texts
from bot.answer_again import AnswerAgain
from bot.approvals import press_of
from bot.command_context import CommandContext, CommandService
from bot.command_registry import CommandRegistry
from bot.commands import parse_command
from bot.edits import Edits
from bot.lane_views import LaneViews
from bot.lanes import Job, Lane, RunsElsewhere, stop_waiting
from bot.notices import QueuedNotices, RunningReply
from bot.stores.conversations import ConversationStore
from bot.stores.journal import Entry, State
from bot.turns import InstanceReplaced, TurnRunner
from channels.base import BusyPolicy, Channel, ChatRef, InboundMessage, ReplyDoc, ReplyHandle

log = logging.getLogger("bot.dispatcher")


class Dispatcher(LaneViews):
    def __init__(
        self,
        *,
        channels: dict[str, Channel],
        turns: TurnRunner,
        conversations: ConversationStore,
        max_concurrent_runs: int,
        busy_policy: Callable[[str], BusyPolicy],
        commands: CommandRegistry,
        command_service: CommandService,
    ) -> None:
        self.channels = channels
        self.turns = turns
        self.conversations = conversations
        self.commands = commands
        self.command_service = command_service  # what commands may use besides the lanes
        self.busy_policy = busy_policy
        self.slots = asyncio.Semaphore(max_concurrent_runs)
        self.max_runs = max_concurrent_runs
        self.waiting = self.admitting = 0  # lanes waiting for a slot; messages in dispatch
        self.working_lanes = 0  # lanes with a job admitted and not done (known at admission)
        self.lanes: dict[str, Lane] = {}
        self._side_tasks: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self.elsewhere: RunsElsewhere | None = None  # set by the app with several workers
        self.notices = QueuedNotices(turns.journal, turns.metrics)
        self.retiring: dict[str, Channel] = {}  # switched off, still finishing its replies
        self.again = AnswerAgain(turns.journal)  # what a channel restart cut or left
        self.edits = Edits(turns.journal, turns.settle)  # edited messages (bot/edits.py)
        self._closing = False
        turns.replaced = lambda name, channel: self.channels.get(name) is not channel

    # ---------------------------------------------------------------- intake

    async def dispatch(self, msg: InboundMessage) -> None:
        """All it starts speaks its sender's language; in flight while that is looked up."""
        self.admitting += 1
        self._idle.clear()
        try:
            languages = self.command_service.languages
            with i18n.use(await languages.of(msg) if languages else i18n.current()):
                await self._dispatch(msg)
        finally:
            self.admitting -= 1
            self._check_idle()

    async def _dispatch(self, msg: InboundMessage) -> None:
        channel = self.channels.get(msg.chat.channel)
        if channel is None:
            log.warning("message for unknown channel %s settled unanswered", msg.chat.channel)
            await self.turns.settle.unanswered(msg, "channel not running")
            return
        if msg.edit is not None:
            lane = self.lanes.get(msg.chat.key)
            busy = bool(lane and (lane.run or lane.jobs)) or self.working_lanes >= self.max_runs
            if await self.edits.take(channel, msg, lane, self._enqueue, busy=busy) is None:
                return  # answered in its place (bot/edits.py)
        if msg.unsupported:  # a sticker, a poll ...: say what we can read instead
            self._spawn(self._reply(channel, msg, texts.cannot_read(msg.unsupported)))
            return
        command = parse_command(msg.text) if not msg.attachments else None
        if command is not None and (cmd := self.commands.builtin(command.name)):
            if cmd.ordered:
                self._enqueue(Job(msg, command=command, locale=i18n.current()))
            else:
                self._spawn(self._run_command(channel, msg, cmd.name, command.args))
        elif command is not None and not self.commands.is_skill(command.name):
            self._spawn(self._reply(channel, msg, self.commands.help_text()))
        elif press_of(msg.text) is not None:  # waits its turn, never interrupts a run
            self._enqueue(Job(msg, locale=i18n.current()))
        else:
            await self._enqueue_chat(channel, msg)

    async def _enqueue_chat(self, channel: Channel, msg: InboundMessage) -> None:
        lane = self.lanes.get(msg.chat.key)
        job = Job(msg, locale=i18n.current())
        self.edits.remember(msg)
        if lane is not None and (lane.run is not None or lane.jobs):
            if self.busy_policy(msg.chat.channel) is BusyPolicy.interrupt:
                self._interrupt(lane)
            else:
                behind = lane.reply if lane.run is not None else None
                job.notice = self.notices.send(channel, msg, None, behind)
        elif self.working_lanes >= self.max_runs:
            ahead = self.working_lanes - self.max_runs + 1
            doc = ReplyDoc(status="queued", text=texts.queued_behind(ahead), labels=texts.labels())
            job.notice = self.notices.send(channel, msg, doc)
        self._enqueue(job)

    def resume(self, entry: Entry, handle: ReplyHandle | None) -> None:
        """Continue a message a previous process left `running` or `delivering`."""
        assert entry.msg is not None
        self._enqueue(Job(entry.msg, handle=handle, entry=entry))

    def _enqueue(self, job: Job) -> None:
        key = job.msg.chat.key
        lane = self.lanes.setdefault(key, Lane())
        self._idle.clear()
        lane.jobs.append(job)
        if lane.task is None:
            self.working_lanes += 1
            lane.task = asyncio.create_task(self._drain(key, lane), name=f"lane {key}")

    def _interrupt(self, lane: Lane) -> None:
        if lane.run is not None and not lane.run.done():
            lane.stop_reason = texts.INTERRUPTED_BY_NEWER
            lane.run.cancel()

    # ---------------------------------------------------------------- lanes

    async def _drain(self, key: str, lane: Lane) -> None:
        try:
            while lane.jobs:
                job = await self._next(lane)
                if job.command is not None:
                    channel = self.channels[job.msg.chat.channel]
                    await self._run_command(channel, job.msg, job.command.name, job.command.args)
                    continue
                if not await self._take_slot(lane, job):
                    if not job.taken_over:
                        await self._stopped_waiting(job, lane.stop_reason)
                    continue
                if job.taken_over:
                    self.slots.release()
                    continue
                try:
                    lane.stop_reason, lane.reply = "", RunningReply()
                    lane.run = asyncio.create_task(self._run_job(job, lane), name=f"run {key}")
                    lane.running = job.msg
                    if self.elsewhere is not None:
                        await self.elsewhere.started(job.msg)
                    await asyncio.wait({lane.run})
                    lane.run = lane.running = lane.channel = None
                    if self.elsewhere is not None:
                        await self.elsewhere.ended(job.msg)
                finally:
                    self.slots.release()
                    if lane.reply is not None:  # a notice waiting for it goes out now
                        lane.reply.ended()
                        lane.reply = None
                if lane.cut:
                    lane.cut = False
                    await self._answer_again(lane, job.msg)
        finally:
            lane.task = None
            self.working_lanes -= 1
            if not lane.jobs:
                self.lanes.pop(key, None)
            self._check_idle()

    async def _next(self, lane: Lane) -> Job:
        """The lane's next job; the lane speaks its sender's language until the one after."""
        job, languages = lane.jobs.popleft(), self.command_service.languages
        i18n.set_current(job.locale or (await languages.of(job.msg) if languages else ""))
        return job

    async def _take_slot(self, lane: Lane, job: Job) -> bool:
        """Wait for a run slot; False when the wait was stopped (/stop, a newer message)."""
        acquire = asyncio.ensure_future(self.slots.acquire())
        self.waiting += 1
        lane.waiting, lane.slot_wait = job, acquire
        try:
            await asyncio.wait({acquire})
        except asyncio.CancelledError:  # shutdown: give back a slot taken meanwhile
            if acquire.done() and not acquire.cancelled():
                self.slots.release()
            acquire.cancel()
            raise
        finally:
            self.waiting -= 1
            lane.waiting = lane.slot_wait = None
        return not acquire.cancelled()

    async def _stopped_waiting(self, job: Job, reason: str) -> None:
        channel = self.channels[job.msg.chat.channel]
        handle = (await job.notice) if job.notice is not None else job.handle
        await self.turns.stopped_before_start(channel, job.msg, handle, reason or texts.STOPPED)

    async def _run_job(self, job: Job, lane: Lane) -> None:
        name = job.msg.chat.channel
        channel = self.channels.get(name) or self.retiring.get(name)
        if channel is None:  # switched off meanwhile
            self.again.park(job.msg)
            return
        lane.channel = channel
        try:
            if job.notice is not None:
                job.handle = await job.notice
            if job.reopen is not None:
                job.handle = await self.edits.reopen(channel, job)
            if job.entry is not None and job.entry.state is State.delivering:
                await self.turns.resume_delivery(channel, job.msg, job.entry, job.handle)
            else:
                await self.turns.run(
                    channel,
                    job.msg,
                    job.handle,
                    lambda: lane.stop_reason,
                    resumed=job.entry is not None,
                    running=lane.reply,
                )
        except asyncio.CancelledError:
            pass
        except InstanceReplaced:  # its old instance could not finish it: the new one answers
            lane.cut = True
        except Exception:  # logged once and settled: never re-run at every restart
            log.exception("turn failed for %s", job.msg.chat.key)
            await self.turns.settle.unanswered(job.msg, "failed unexpectedly")

    # ---------------------------------------------------------------- channel restarts

    async def _answer_again(self, lane: Lane, msg: InboundMessage) -> None:
        """A run a channel restart cut (bot/channel_restarts.py, bot/answer_again.py): answered
        again on the channel's current instance, before what is queued behind it."""
        if self._closing:
            return  # it stays unsettled: the next start answers it
        if again := await self.again.cut(self.channels.get(msg.chat.channel), msg):
            lane.jobs.appendleft(Job(again.msg, handle=again.handle, entry=again.entry))

    async def take_up(self, name: str) -> None:
        """The channel `name` is switched on again: answer what waited for it."""
        for again in await self.again.unpark(name, self.channels[name]):
            self._enqueue(Job(again.msg, handle=again.handle, entry=again.entry))

    # ---------------------------------------------------------------- commands

    async def _run_command(
        self, channel: Channel, msg: InboundMessage, name: str, args: str
    ) -> None:
        cmd = self.commands.builtin(name)
        assert cmd is not None
        conv = await self.conversations.get_or_create(msg.chat)
        try:
            context = CommandContext(msg, conv, lanes=self, service=self.command_service)
            access = self.command_service.access
            if access is not None:  # the sender's grant decides, and commands read it
                who = await access.who(msg)
                denial = access.command_denial(msg, who, cmd.permission_key(args))
                if denial is not None:
                    await self.turns.send_command_reply(channel, msg, denial, ())
                    return
                context = replace(context, grant=who.grant, person=who.person)
            reply = await cmd.handler(context, args)
        except Exception:
            log.exception("command /%s failed", name)
            await self._reply(channel, msg, texts.command_failed(name))
            return
        await self.turns.send_command_reply(channel, msg, reply.text, reply.buttons)

    async def _reply(self, channel: Channel, msg: InboundMessage, text: str) -> None:
        await self.turns.send_command_reply(channel, msg, text, ())

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._side_tasks.add(task)
        self._idle.clear()
        task.add_done_callback(self._side_done)

    def _side_done(self, task: asyncio.Task[None]) -> None:
        self._side_tasks.discard(task)
        self._check_idle()

    # ---------------------------------------------------------------- control

    async def stop_run(self, key: str) -> bool:
        lane = self.lanes.get(key)
        if lane is not None and stop_waiting(lane, texts.STOPPED):
            return True  # its message had not started: the lane settles it as stopped
        if lane is None or lane.run is None or lane.run.done():
            return False
        lane.stop_reason = texts.STOPPED
        lane.run.cancel()
        await asyncio.wait({lane.run}, timeout=5)
        return True

    async def stop_anywhere(self, chat: ChatRef) -> bool:
        """Stop the reply of conversation `chat` on whichever worker writes it."""
        if await self.stop_run(chat.key):
            return True
        return self.elsewhere is not None and await self.elsewhere.stop(chat)

    async def runs_in_chat_anywhere(self, chat: ChatRef, sender_id: str) -> list[InboundMessage]:
        """`runs_in_chat`, with the replies other workers write."""
        runs = self.runs_in_chat(chat, sender_id)
        if self.elsewhere is not None:
            runs += await self.elsewhere.in_chat(chat, sender_id)
        return runs

    def _check_idle(self) -> None:
        if not self.lanes and not self._side_tasks and not self.admitting:
            self._idle.set()

    async def wait_idle(self, timeout: float | None = None) -> bool:
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def abandon(self, keys: set[str]) -> None:
        """Another worker took these conversations over (this one lost their partition while
        paused): drop their queued jobs, cancel their runs without a word and leave the
        messages to the new owner, which continues each in the reply the user sees."""
        runs = []
        for key in keys:
            lane = self.lanes.get(key)
            if lane is None:
                continue
            lane.jobs.clear()
            if lane.waiting is not None and lane.slot_wait is not None:
                lane.waiting.taken_over = True
                lane.slot_wait.cancel()
            if lane.run is not None and not lane.run.done():
                self.turns.taken_over(lane.run)
                lane.run.cancel()
                runs.append(lane.run)
        await asyncio.gather(*runs, return_exceptions=True)

    async def shutdown(self, grace: float) -> None:
        """Let running replies finish for `grace` seconds, then cancel what is left.

        Messages that never finished stay `running` in the journal and are answered after
        restart, in the reply the user already sees.
        """
        self._closing = True
        for lane in self.lanes.values():
            lane.jobs.clear()
        await self.wait_idle(grace)
        runs = []
        for lane in list(self.lanes.values()):
            if lane.run is not None:
                lane.stop_reason = texts.RESTARTING
                self.turns.keep_pending(lane.run)
                lane.run.cancel()
                runs.append(lane.run)  # awaited below: each still marks its reply cancelled
            if lane.task is not None:
                lane.task.cancel()
        for task in list(self._side_tasks):
            task.cancel()
        tasks = [lane.task for lane in self.lanes.values() if lane.task] + list(self._side_tasks)
        await asyncio.gather(*runs, *tasks, return_exceptions=True)
