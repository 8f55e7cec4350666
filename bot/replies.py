"""ReplyStreamer: agent events in, whole-document reply updates out, within the channel's budgets.

Updates are coalesced: whatever arrives while the channel's budget is spent is folded into the next
update, so a slow platform sees fewer, fuller updates and never more than its budget allows. The
final answer always goes out: rate limits are waited out as often as the platform asks (nothing
is sent to the blocked scope before the time is up) and the same document resent; only a
definitive refusal (`DeliveryRefused`) ends a delivery. A long answer is split into continuation
messages. Budgets and blocks live in the channel's own `Pacer` (channels/pacing.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from agent.events import (
    AgentEvent,
    ApprovalRequested,
    Artifact,
    Clarification,
    Failed,
    Final,
    Progress,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from bot import texts
from bot.approvals import card
from bot.delivery import DeliveryTrack, FinalPlan, final_parts
from bot.metrics import Metrics
from channels.backoff import Backoff, BackoffPolicy, describe
from channels.base import (
    Button,
    Channel,
    ChannelError,
    DeliveryRefused,
    InboundMessage,
    RateLimited,
    ReplyDoc,
    ReplyHandle,
    ReplyStatus,
    ToolStep,
)
from channels.held import Held
from channels.relay import OutcomeUnknown

log = logging.getLogger("bot.replies")

MAX_TRANSIENT_ATTEMPTS = 6
"""Attempts for a call that failed without an answer (network), with the one backoff
(channels/backoff.py) between them; rate limits are not counted."""


class ReplyStreamer:
    """One reply to one message, from placeholder to final."""

    def __init__(
        self,
        channel: Channel,
        msg: InboundMessage,
        handle: ReplyHandle | None = None,
        metrics: Metrics | None = None,
        track: DeliveryTrack | None = None,
    ) -> None:
        self.metrics = metrics or Metrics()
        self.track = track or DeliveryTrack(None, msg, channel)
        self._in_final = False
        self._started = time.monotonic()
        self._first_seen = False
        self.channel = channel
        self.msg = msg
        self.pacer = channel.pacer  # one pacer per channel, shared with its own calls
        self.handle = handle
        self.doc = ReplyDoc(status="working", labels=texts.labels())
        self.files: list[Path] = []
        self._key = f"{msg.chat.key}#{msg.event_id}"
        self._budgets = channel.capabilities.budgets_for(msg.chat)
        self._retry_policy = BackoffPolicy(base=0.5, cap=8.0, sleep=self.pacer.sleep)
        self._sending = asyncio.Lock()  # held while an update is on its way to the platform
        self._held: Held[ReplyDoc] = Held("update", log, lock=self._sending)
        self._streaming = False  # open() is done: updates go out
        self._final_seen = False
        self._finished = False  # the final is out: nothing left to materialize
        self._lead = ""  # text the answer follows (an approval's decision)
        self._card = ""  # an approval card's own text: a split final keeps it in its last part
        self.finishing = False  # finish() began: the final is on its way

    async def open(self, note: str = "") -> None:
        """Show the placeholder (or turn the queued notice, or the reply a restart interrupted,
        into one; `note` says why it starts again)."""
        working = ReplyDoc(status="working", note=note, labels=texts.labels())
        if self.handle is None:
            self.handle = await self._deliver(self.channel.open_reply, self.msg, working)
        else:  # what it shows already (an approval card) stays, with what leads the answer
            working = replace(self.doc, status="working", note=note)
            await self._deliver(self.channel.update_reply, self.handle, working)
        await self.track.seen(self.handle)
        self._streaming = True
        self._schedule()

    def on_event(self, event: AgentEvent) -> None:
        doc = self.doc
        if isinstance(event, TextDelta):
            doc = replace(doc, text=doc.text + event.text)
        elif isinstance(event, ToolStarted):
            step = ToolStep(id=event.call_id, label=event.label or event.name)
            doc = replace(doc, progress=(*doc.progress, step))
        elif isinstance(event, ToolFinished):
            doc = replace(doc, progress=_finish_step(doc.progress, event))
        elif isinstance(event, Progress):
            doc = replace(doc, progress=_upsert_step(doc.progress, event))
        elif isinstance(event, Clarification):
            doc = _clarify(doc, event, self.channel.capabilities.buttons)
            self._final_seen = True
        elif isinstance(event, ApprovalRequested):
            doc = card(doc, event, self.channel.capabilities.buttons)
            self._card = doc.text[len(self.doc.text) :].strip()
            self._final_seen = True
        elif isinstance(event, Artifact):
            self.files.append(event.path)
        elif isinstance(event, Final):
            if not self._final_seen:
                doc = replace(doc, text=self._lead + event.text if event.text else doc.text)
        elif isinstance(event, Failed):
            doc = replace(doc, status="failed", note=event.message)
        if doc is not self.doc:
            self.doc = doc
            self._held.hold(doc)
            self._schedule()

    def lead_with(self, text: str) -> None:
        """Start the answer with `text` (kept before the final answer's text)."""
        self._lead = f"{text}\n\n"
        self.on_event(TextDelta(self._lead))

    async def finish(
        self, status: ReplyStatus | None = None, note: str = "", *, record: bool = True
    ) -> ReplyStatus:
        """Deliver the final document, continuation parts and files; returns the final status.

        With `record` the final is written to the journal first and each part as it goes out;
        without (a reply cut short by shutdown) the message stays `running` for the restart.
        """
        self.finishing = True
        await self._stop_flusher()
        final_status = status or ("failed" if self.doc.status == "failed" else "done")
        doc = replace(self.doc, status=final_status, note=note or self.doc.note)
        if final_status == "done" and not doc.text.strip() and not doc.buttons:
            doc = replace(doc, text=texts.NO_ANSWER)
        parts = final_parts(doc.text, self._card, self.channel.capabilities.max_text_len)
        plan = FinalPlan(doc=doc, parts=tuple(parts), files=tuple(str(p) for p in self.files))
        async with self._sending:  # a materialize() meanwhile waits for the final's place
            if record:
                await self.track.delivering(plan)
            await self._send_plan(plan, 0, record)
            self._finished = True
        return final_status

    async def materialize(self) -> None:
        """Make the reply a message in the chat now (a no-op where it is one already), so what
        is sent next shows below it, and keep its ids in the journal before anything is."""
        async with self._sending:
            if self.handle is None or self._finished:
                return
            await self._deliver(self.channel.materialize_reply, self.handle, self.doc)
            await self.track.seen(self.handle)

    async def resume_final(self, plan: FinalPlan, steps_done: int, in_doubt: bool) -> None:
        """Send what a previous process did not finish of `plan`.

        A step that was on its way when the process died is sent again only when repeating it
        cannot show anything twice (the first part, as an edit of the reply); otherwise it is
        taken as delivered: at most once, never twice.
        """
        start = steps_done
        if in_doubt and not (
            start == 0
            and self.handle is not None
            and self.channel.finish_is_replayable(self.handle)
        ):
            start += 1
        if start == 0 and self.handle is None:
            self.handle = await self._deliver(
                self.channel.open_reply, self.msg, ReplyDoc(status="working", labels=texts.labels())
            )
        await self._send_plan(plan, start, True)

    async def _send_plan(self, plan: FinalPlan, start: int, record: bool) -> None:
        self._in_final = record
        for step in range(start, plan.steps):
            if step < len(plan.parts):
                send = self.channel.finish_reply if step == 0 else self.channel.send_continuation
                doc = plan.part_doc(step)
                await self._paced_deliver(send, self.handle, doc)
                self._visible(doc)
            else:
                await self._send_file(plan.file(step))
            if record:
                await self.track.done(step + 1, self.handle)
        if not record:  # a reply cut short: the restart continues in it, as it now is
            await self.track.seen(self.handle)
        self._in_final = False
        self.pacer.forget_reply(self._key)

    async def _send_file(self, path: Path) -> None:
        try:
            await self._paced_deliver(self.channel.send_file, self.handle, path)
        except ChannelError as exc:
            log.warning("file %s not delivered: %s", path.name, exc)
            await self._deliver(
                self.channel.send_text,
                self.msg.chat,
                texts.file_not_sent(path.name, exc),
                reply_to=self.msg.message_id,
            )

    def _schedule(self) -> None:
        """Coalesced updates (channels/held.py): the newest doc goes out when the budget allows."""
        if self._streaming and self._held.value is not None:
            self._held.schedule(self._send_update, self._ready)

    async def _ready(self) -> None:
        await self.pacer.acquire(self.msg.chat, self._budgets, self._key)

    async def _send_update(self, doc: ReplyDoc) -> None:
        """One update; a rate limit blocks its scope and the newest doc goes out after it."""
        try:
            await self.channel.update_reply(self.handle, doc)
            await self.track.seen(self.handle)
            self.metrics.updates_sent.labels(channel=self.channel.name).inc()
            self._visible(doc)
        except RateLimited as exc:
            self._block(exc)
            self._held.hold_again(doc)
        except ChannelError as exc:
            log.warning("update of %s skipped: %s", self._key, exc)

    async def abandon(self) -> None:
        """Stop updating this reply (the turn ends without a final from this streamer)."""
        await self._stop_flusher()

    async def _stop_flusher(self) -> None:
        """Stop updating, but never mid-call: a cancelled call loses what the platform answered
        (a new message's id, a stream's ts) after the platform acted on it."""
        self._streaming = False
        await self._held.stop()

    async def say(self, text: str) -> None:
        """A plain text answer to the message (a command's answer, a note about a file),
        delivered with the same patience as a reply: 429s waited out, no answer retried."""
        await self._deliver(
            self.channel.send_text, self.msg.chat, text, reply_to=self.msg.message_id
        )

    async def at_once(self, doc: ReplyDoc) -> None:
        """A reply opened and finished in one go (a command's answer with buttons)."""
        working = ReplyDoc(status="working", labels=texts.labels())
        self.handle = await self._deliver(self.channel.open_reply, self.msg, working)
        await self._deliver(self.channel.finish_reply, self.handle, doc)

    async def _paced_deliver(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        return await self._deliver(fn, *args, paced=True)

    async def _deliver(
        self, fn: Callable[..., Awaitable[Any]], *args: Any, paced: bool = False, **kw: Any
    ) -> Any:
        """Call the channel until it succeeds or is refused for good.

        Rate limits are waited out as often as the platform asks, and nothing is sent before
        the blocked scope opens again. Calls that got no answer are retried a few times with
        backoff. A `DeliveryRefused` (chat gone, bot blocked) ends the delivery at once.
        """
        backoff = Backoff(f"delivery to {self._key}", log, self._retry_policy)
        while True:
            if paced:
                await self.pacer.acquire(self.msg.chat, self._budgets, self._key)
            else:
                await self.pacer.wait_unblocked(self.msg.chat, self._key)
            try:
                if self._in_final:
                    await self.track.sending()
                result = await fn(*args, **kw)
            except RateLimited as exc:
                await self._not_sent()
                self._block(exc)
                await self.pacer.wait_unblocked(self.msg.chat, self._key, (exc.method,))
            except OutcomeUnknown:  # a relayed send whose runner died: in doubt
                raise
            except DeliveryRefused as exc:
                await self._not_sent()
                self._given_up(exc.reason, exc)
                raise
            except ChannelError as exc:
                if not exc.retryable:
                    await self._not_sent()
                    raise
                if backoff.attempts + 1 >= MAX_TRANSIENT_ATTEMPTS:
                    self._given_up("unreachable", exc)
                    raise
                backoff.failure(describe(exc))
                await backoff.wait()
            else:
                backoff.success()
                return result

    async def _not_sent(self) -> None:
        """The platform answered a step of the final with a refusal: it is not in doubt (a
        restart sends it, instead of taking it as delivered)."""
        if self._in_final:
            await self.track.sending(False)

    def _given_up(self, reason: str, exc: ChannelError) -> None:
        log.warning("delivery to %s given up (%s): %s", self._key, reason, exc)
        self.metrics.deliveries_given_up.labels(channel=self.channel.name, reason=reason).inc()

    def _visible(self, doc: ReplyDoc) -> None:
        """Record the time to the first update that shows the user something of the answer."""
        if not self._first_seen and (doc.text or doc.progress or doc.status != "working"):
            self._first_seen = True
            self.metrics.first_update.labels(channel=self.channel.name).observe(
                time.monotonic() - self._started
            )

    def _block(self, exc: RateLimited) -> None:
        self.metrics.rate_limited.labels(channel=self.channel.name).inc()
        self.pacer.block_for(exc, self.msg.chat, self._key)


def _finish_step(steps: tuple[ToolStep, ...], event: ToolFinished) -> tuple[ToolStep, ...]:
    state: Literal["done", "failed"] = "done" if event.ok else "failed"
    return tuple(replace(s, state=state) if s.id == event.call_id else s for s in steps)


def _upsert_step(steps: tuple[ToolStep, ...], event: Progress) -> tuple[ToolStep, ...]:
    state = event.state if event.state in ("running", "done", "failed") else "running"
    step = ToolStep(id=event.id, label=event.label, state=state)  # type: ignore[arg-type]
    if any(s.id == event.id for s in steps):
        return tuple(step if s.id == event.id else s for s in steps)
    return (*steps, step)


def _clarify(doc: ReplyDoc, event: Clarification, has_buttons: bool) -> ReplyDoc:
    if has_buttons and event.options:
        buttons = tuple(Button(label=o, value=o) for o in event.options)
        return replace(doc, text=event.question, buttons=buttons)
    numbered = "\n".join(f"{i}. {o}" for i, o in enumerate(event.options, start=1))
    text = f"{event.question}\n\n{numbered}" if numbered else event.question
    return replace(doc, text=text)
