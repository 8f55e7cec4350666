"""One chat turn: from an accepted message to a settled entry in the delivery journal.

Fetches attachments into the thread's uploads, runs the agent, streams the reply, and settles
the message through its `Settle` (bot/settle.py, the one place that settles a message):
delivered, or failed with the reason and whether the user was told. A turn that fails
unexpectedly is tried once more; a message that failed twice (across restarts too) gets
a plain failure notice. When the service stops mid-answer the message stays `running`, and the
restart continues in the reply the user already sees.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from agent.approval import ApprovalPolicy
from agent.events import ApprovalRequested, Failed, RunSettings, Turn
from agent.grant import EVERYTHING, Grant
from agent.runner import AgentRunner
from bot import texts
from bot.access.people import People
from bot.approvals import Approvals, Resume, card_text, press_of
from bot.command_registry import CommandRegistry
from bot.commands import parse_command
from bot.config.speech import SpeechConfig
from bot.delivery import DeliveryTrack, FinalPlan, card_reply
from bot.metrics import Metrics
from bot.notices import RunningReply
from bot.replies import ReplyStreamer
from bot.run_choice import agent_for, model_for
from bot.settle import Settle
from bot.speech import Speech
from bot.stores.conversations import Conversation, ConversationStore
from bot.stores.journal import Entry, Journal
from bot.turn_input import message_turn, with_inputs
from bot.usage.gate import UsageGate
from channels.base import (
    Button,
    Channel,
    ChannelError,
    InboundMessage,
    ReplyDoc,
    ReplyHandle,
)

log = logging.getLogger("bot.turns")

MAX_ATTEMPTS = 2


class InstanceReplaced(Exception):
    """A reply failed on a channel instance a restart had replaced (its old credentials may be
    revoked): left unsettled, to be answered again on the current instance."""


@dataclass(frozen=True)
class Governed:
    """What governs a turn: the sender's grant, usage (budgets), approvals (calls that wait)."""

    access: People | None = None
    usage: UsageGate | None = None
    approvals: Approvals | None = None


class TurnRunner:
    def __init__(
        self,
        *,
        runner: AgentRunner,
        conversations: ConversationStore,
        journal: Journal,
        max_upload_bytes: int,
        commands: CommandRegistry,
        metrics: Metrics | None = None,
        thread_for: Callable[[InboundMessage, Conversation], Conversation] | None = None,
        governed: Governed | None = None,
    ) -> None:
        self.metrics = metrics or Metrics()
        self.runner = runner
        self.conversations = conversations
        self.journal = journal
        self.settle = Settle(journal, self.metrics)  # the one place that settles a message
        self.max_upload_bytes = max_upload_bytes
        self.speech = Speech()  # voice notes transcribed (unset: audio stays a file)
        self._keep_pending: set[asyncio.Task[None]] = set()
        self._taken_over: set[asyncio.Task[None]] = set()
        self.commands = commands  # `/<skill> TASK` is a skill turn for the agent
        # which thread a turn runs in (schedules give some runs a fresh one)
        self.thread_for = thread_for or _same_thread
        # whether a channel instance was replaced by a restart (set by the dispatcher)
        self.replaced: Callable[[str, Channel], bool] = lambda name, channel: False
        governed = governed or Governed()
        self.access = governed.access  # the sender's grant shapes the run (None: everything)
        self.usage = governed.usage  # counted, budgeted, a footer (None: not counted)
        self.approvals = governed.approvals  # approval cards and presses (None: none)
        self.bound_agent: Callable[[str], str | None] = lambda channel: None  # a bot's agent

    def hear_with(self, config: SpeechConfig) -> None:
        """Transcribe voice notes and audio with `config` (`speech` in the config)."""
        self.speech = Speech(config)

    def keep_pending(self, task: asyncio.Task[None]) -> None:
        """The run in `task` is cancelled by shutdown: leave its message `running` for restart."""
        self._keep_pending.add(task)

    def taken_over(self, task: asyncio.Task[None]) -> None:
        """The run in `task` is cancelled because another worker owns its conversation now:
        it stops without a word, since the new owner continues in the same reply and the
        journal entry is the new owner's (a "restarting" notice could land on its answer)."""
        self._taken_over.add(task)

    # ---------------------------------------------------------------- a turn

    async def run(
        self,
        channel: Channel,
        msg: InboundMessage,
        handle: ReplyHandle | None,
        stop_reason: Callable[[], str],
        *,
        resumed: bool = False,
        running: RunningReply | None = None,
    ) -> None:
        """`running` learns the reply once it is open (notices queued behind it need it)."""
        attempts = await self.journal.start(msg)
        if attempts > MAX_ATTEMPTS:
            await self.give_up(channel, msg, handle)
            return
        conv = self.thread_for(msg, await self.conversations.get_or_create(msg.chat))
        try:
            prepared = await self._prepare(channel, msg, conv)
        except Exception:  # no grant, no run: said in plain words, never run with everything
            log.exception("could not tell what %s may use", msg.chat.key)
            await self.give_up(channel, msg, handle)
            return
        if prepared is None:  # refused or answered in one line: answered already
            return
        conv, turn, decided = prepared
        streamer = await self._reply_for(channel, msg, decided, handle)
        try:
            edited = texts.EDIT_ANSWERED if msg.edit is not None else ""
            await streamer.open(texts.ANSWERING_AGAIN if resumed or attempts > 1 else edited)
            streamer.doc = replace(streamer.doc, note=edited)  # the final says so too
            if running is not None:
                running.opened(streamer)
            if handle is None and not channel.signs_at_acceptance:  # else shown before
                self._sign_of_life(msg)
            if decided is None:
                turn = await self._with_files(streamer, conv, turn)
            await self._stream(streamer, conv, turn, msg.chat.with_topic(None).key)
            status = await streamer.finish()
        except asyncio.CancelledError:
            await self._finish_cancelled(streamer, msg, stop_reason(), conv.thread_id)
            raise
        except ChannelError as exc:
            await streamer.abandon()
            await self._undeliverable(channel, msg, exc)
            return
        except Exception:
            log.exception("turn failed for %s (attempt %d)", msg.chat.key, attempts)
            await streamer.abandon()
            if attempts >= MAX_ATTEMPTS:
                await self.give_up(channel, msg, streamer.handle)
            else:
                await self.run(
                    channel, msg, streamer.handle, stop_reason, resumed=True, running=running
                )
            return
        await self.settle.answered(msg, status, streamer.doc.note)

    async def resume_delivery(
        self, channel: Channel, msg: InboundMessage, entry: Entry, handle: ReplyHandle | None
    ) -> None:
        """Finish sending a final that a previous process had started (journal `delivering`)."""
        plan = FinalPlan.from_json(entry.final or {})
        streamer = self._streamer(channel, msg, handle)
        try:
            await streamer.resume_final(plan, entry.parts_done, entry.sending)
        except ChannelError as exc:
            await self._undeliverable(channel, msg, exc)
            return
        await self.settle.answered(msg, plan.doc.status, plan.doc.note)

    async def give_up(
        self, channel: Channel, msg: InboundMessage, handle: ReplyHandle | None
    ) -> None:
        """A message that failed twice: say so in plain words and settle it."""
        log.warning("message %s:%s failed twice; giving up", msg.chat.channel, msg.event_id)
        told = True
        try:
            if handle is not None:
                await channel.finish_reply(
                    handle, ReplyDoc(status="failed", note=texts.TURN_FAILED, labels=texts.labels())
                )
            else:
                await self._streamer(channel, msg, None).say(texts.TURN_FAILED)
        except ChannelError as exc:
            log.warning("failure notice for %s not delivered: %s", msg.chat.key, exc)
            told = False
        await self.settle.gave_up(channel.name, msg, told=told)

    async def stopped_before_start(
        self, channel: Channel, msg: InboundMessage, handle: ReplyHandle | None, reason: str
    ) -> None:
        """A message stopped while it waited for a run slot: its queued notice says so."""
        if handle is not None:
            try:
                await channel.finish_reply(
                    handle, ReplyDoc(status="cancelled", note=reason, labels=texts.labels())
                )
            except ChannelError as exc:
                log.warning("stop notice for %s not delivered: %s", msg.chat.key, exc)
        await self.settle.stopped(msg)

    async def _undeliverable(
        self, channel: Channel, msg: InboundMessage, exc: ChannelError
    ) -> None:
        if self.replaced(msg.chat.channel, channel):
            log.warning("reply to %s failed on a replaced instance: %s", msg.chat.key, exc)
            raise InstanceReplaced(channel.name) from exc
        await self.settle.undeliverable(channel.name, msg, exc)

    def _streamer(
        self, channel: Channel, msg: InboundMessage, handle: ReplyHandle | None
    ) -> ReplyStreamer:
        track = DeliveryTrack(self.journal, msg, channel)
        return ReplyStreamer(channel, msg, handle=handle, metrics=self.metrics, track=track)

    async def _reply_for(
        self,
        channel: Channel,
        msg: InboundMessage,
        decided: Resume | None,
        handle: ReplyHandle | None,
    ) -> ReplyStreamer:
        """The reply; for a decision, the one showing its approval card (found again through
        the journal, on any worker, after a restart): the card is updated in place (its text,
        the decision, no buttons) and the answer continues in it."""
        said = decided.said if decided is not None else ""
        if decided is not None and handle is None and decided.card:
            found = await card_reply(self.journal, channel, msg, decided)
            if found is not None:
                handle, said = found[0], f"{found[1]}\n\n{said}".lstrip()
        streamer = self._streamer(channel, msg, handle)
        if said:  # the answer continues after it
            streamer.lead_with(said)
        return streamer

    async def _with_files(self, streamer: ReplyStreamer, conv: Conversation, turn: Turn) -> Turn:
        """The message's files fetched into the thread's uploads, voice notes heard."""
        if not streamer.msg.attachments:
            return turn
        uploads = self.runner.thread_dirs(conv.thread_id).uploads
        limit = min(self.max_upload_bytes, streamer.channel.capabilities.max_file_in)
        return await with_inputs(streamer, turn, uploads, limit, self.speech)

    async def _prepare(
        self, channel: Channel, msg: InboundMessage, conv: Conversation
    ) -> tuple[Conversation, Turn, Resume | None] | None:
        """The conversation and turn to run, and the approval decision it resumes; None when
        the message was answered in one line (a refused skill, an approval press that resumes
        nothing)."""
        press = press_of(msg.text) if self.approvals is not None else None
        if press is not None and self.approvals is not None:
            outcome = await self.approvals.decide(msg, *press)
            if isinstance(outcome, str):
                await self.send_command_reply(channel, msg, outcome, ())
                return None
            return replace(conv, thread_id=outcome.thread_id), outcome.turn, outcome
        if self.access is None:
            return conv, self._turn(msg, [], EVERYTHING, None), None
        who = await self.access.who(msg)
        command = parse_command(msg.text)
        if command is not None and self.commands.is_skill(command.name):
            denial = self.access.skill_denial(msg, who, command.name)
            if denial is not None:
                await self.send_command_reply(channel, msg, denial, ())
                return None
        return conv, self._turn(msg, [], who.grant, self.access.approvals(who, msg.chat)), None

    async def _stream(
        self, streamer: ReplyStreamer, conv: Conversation, turn: Turn, chat: str
    ) -> None:
        agent = agent_for(self.runner, conv.agent or self.bound_agent(conv.channel), turn.grant)
        model = model_for(self.runner, conv.model, turn.grant, agent)
        notes: tuple[str, ...] = ()
        if self.usage is not None:  # budgets: a refusal, or the fallback model, and warnings
            turn, verdict = await self.usage.before(turn, chat, conv.channel, model)
            if verdict.refusal:
                streamer.on_event(Failed("budget", verdict.refusal))
                return
            model, notes = verdict.model, verdict.notes
        try:
            await self._run_agent(streamer, conv, turn, RunSettings(
                agent=agent, model=model, thinking=conv.thinking, plan_mode=conv.plan_mode
            ))  # fmt: skip
        finally:
            footer = self.usage.after(turn.run_id, conv.channel) if self.usage else ""
            note = " · ".join(n for n in (streamer.doc.note, *notes, footer) if n)
            streamer.doc = replace(streamer.doc, note=note)

    async def _run_agent(
        self, streamer: ReplyStreamer, conv: Conversation, turn: Turn, settings: RunSettings
    ) -> None:
        channel, started = conv.channel, time.monotonic()
        outcome = "cancelled"
        self.metrics.runs_started.labels(channel=channel).inc()
        try:
            async for event in self.runner.stream(conv.thread_id, turn, settings):
                if isinstance(event, ApprovalRequested) and self.approvals is not None:
                    shown = card_text(streamer.doc, event)
                    await self.approvals.requested(streamer.msg, conv.thread_id, event, shown)
                streamer.on_event(event)
                if isinstance(event, Failed):
                    outcome = "cancelled" if event.code == "cancelled" else "failed"
                    break
            else:
                outcome = "succeeded"
        finally:
            self.metrics.run_finished(channel, outcome, time.monotonic() - started)

    async def _finish_cancelled(
        self, streamer: ReplyStreamer, msg: InboundMessage, reason: str, thread_id: str
    ) -> None:
        task = asyncio.current_task()
        if task in self._taken_over:
            self._taken_over.discard(task)
            await streamer.abandon()
            try:  # a pause, not a failure: it does not count
                await self.journal.give_back(msg)
            except Exception as exc:  # the database is away: the attempt stays counted
                log.warning("could not give back the attempt of %s: %s", msg.chat.key, exc)
            return
        restarting = task in self._keep_pending
        self._keep_pending.discard(task)
        try:
            await asyncio.wait_for(
                streamer.finish("cancelled", reason or texts.STOPPED, record=not restarting), 10
            )
        except (ChannelError, TimeoutError) as exc:
            log.warning("could not mark reply cancelled: %s", exc)
        if not restarting:
            await self._keep_stopped(thread_id, streamer.doc.text or reason or texts.STOPPED)
            await self.settle.stopped(msg)

    async def _keep_stopped(self, thread_id: str, shown: str) -> None:
        """The thread keeps what the user saw of a stopped reply (marked stopped)."""
        try:
            await self.runner.keep_stopped(thread_id, shown)
        except Exception as exc:  # the thread runs again already, or the database is away
            log.warning("could not keep the stopped reply of %s: %s", thread_id, exc)

    def _sign_of_life(self, msg: InboundMessage) -> None:
        """Admission → first visible sign (typing or placeholder), from the event's arrival."""
        if msg.received_at:
            self.metrics.first_visible.labels(channel=msg.chat.channel).observe(
                max(0.0, time.time() - msg.received_at)
            )

    # ---------------------------------------------------------------- commands and files

    async def send_command_reply(
        self, channel: Channel, msg: InboundMessage, text: str, buttons: tuple[Button, ...]
    ) -> None:
        """Answer a command: plain text, or a one-shot reply when there are buttons to show."""
        streamer = self._streamer(channel, msg, None)
        try:
            if buttons and channel.capabilities.buttons:
                await streamer.at_once(
                    ReplyDoc(text=text, buttons=buttons, status="done", labels=texts.labels())
                )
            else:
                await streamer.say(text)
        except ChannelError as exc:
            await self.settle.undeliverable(channel.name, msg, exc)
            return
        await self.settle.answered(msg, "done")

    def _turn(
        self,
        msg: InboundMessage,
        files: list[str],
        grant: Grant,
        approvals: ApprovalPolicy | None,
    ) -> Turn:
        """The agent's view of the message; `/<skill> task` becomes Turn(skill=..., text=task)."""
        command = parse_command(msg.text)
        limited = grant if self.access is not None else None
        if command is not None and self.commands.is_skill(command.name):
            turn = message_turn(msg, files, limited, text=command.args, skill=command.name)
        else:
            turn = message_turn(msg, files, limited)
        return replace(turn, approvals=approvals)


def _same_thread(msg: InboundMessage, conv: Conversation) -> Conversation:
    return conv
