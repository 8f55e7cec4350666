"""ReplyStreamer: agent events in, whole-document reply updates out, within the channel's budgets.

Updates are coalesced: whatever arrives while the channel's budget is spent is folded into the next
update, so a slow platform sees fewer, fuller updates and never more than its budget allows. The
final answer always goes out: rate limits are waited out and the same document resent; a long
answer is split into continuation messages.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent.events import (
    AgentEvent,
    Artifact,
    Clarification,
    Failed,
    Final,
    Progress,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from bot.metrics import Metrics
from bot.pacing import Pacer
from channels.base import (
    Button,
    Channel,
    ChannelError,
    InboundMessage,
    RateLimited,
    ReplyDoc,
    ReplyHandle,
    ReplyStatus,
    ToolStep,
)
from channels.text import split_text

log = logging.getLogger("bot.replies")

MAX_DELIVERY_ATTEMPTS = 6
MAX_RATE_WAIT = 300.0


class ReplyStreamer:
    """One reply to one message, from placeholder to final."""

    def __init__(self, channel: Channel, msg: InboundMessage, pacer: Pacer,
                 handle: ReplyHandle | None = None, metrics: Metrics | None = None) -> None:
        self.metrics = metrics or Metrics()
        self._started = time.monotonic()
        self._first_seen = False
        self.channel = channel
        self.msg = msg
        self.pacer = pacer
        self.handle = handle
        self.doc = ReplyDoc(status="working")
        self.files: list[Path] = []
        self._key = f"{msg.chat.key}#{msg.event_id}"
        self._budgets = channel.capabilities.budgets_for(msg.chat)
        self._dirty = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None
        self._sending = asyncio.Lock()  # held while an update is on its way to the platform
        self._final_seen = False

    async def open(self) -> None:
        """Show the placeholder (or turn the queued notice into one)."""
        working = ReplyDoc(status="working")
        if self.handle is None:
            self.handle = await self._deliver(self.channel.open_reply, self.msg, working)
        else:
            await self._deliver(self.channel.update_reply, self.handle, working)
        self._flusher = asyncio.create_task(self._flush_loop(), name=f"flush {self._key}")

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
        elif isinstance(event, Artifact):
            self.files.append(event.path)
        elif isinstance(event, Final):
            if not self._final_seen:
                doc = replace(doc, text=event.text or doc.text)
        elif isinstance(event, Failed):
            doc = replace(doc, status="failed", note=event.message)
        if doc is not self.doc:
            self.doc = doc
            self._dirty.set()

    async def finish(self, status: ReplyStatus | None = None, note: str = "") -> None:
        """Deliver the final document, continuation parts and files."""
        await self._stop_flusher()
        final_status = status or ("failed" if self.doc.status == "failed" else "done")
        doc = replace(self.doc, status=final_status, note=note or self.doc.note)
        if final_status == "done" and not doc.text.strip() and not doc.buttons:
            doc = replace(doc, text="(no answer)")
        parts = split_text(doc.text, self.channel.capabilities.max_text_len) if doc.text else [""]
        first = replace(doc, text=parts[0], buttons=doc.buttons if len(parts) == 1 else ())
        await self._paced_deliver(self.channel.finish_reply, self.handle, first)
        self._visible(first)
        for i, part in enumerate(parts[1:], start=2):
            last = i == len(parts)
            extra = replace(doc, text=part, progress=(), buttons=doc.buttons if last else ())
            await self._paced_deliver(self.channel.send_continuation, self.handle, extra)
        for path in self.files:
            await self._send_file(path)
        self.pacer.forget_reply(self.channel.name, self._key)

    async def _send_file(self, path: Path) -> None:
        try:
            await self._paced_deliver(self.channel.send_file, self.handle, path)
        except ChannelError as exc:
            log.warning("file %s not delivered: %s", path.name, exc)
            await self._deliver(self.channel.send_text, self.msg.chat,
                                f"Could not send {path.name}: {exc}", reply_to=self.msg.message_id)

    async def _flush_loop(self) -> None:
        while True:
            await self._dirty.wait()
            await self.pacer.acquire(self.channel.name, self.msg.chat, self._budgets, self._key)
            self._dirty.clear()
            async with self._sending:
                await self._send_update()

    async def _send_update(self) -> None:
        try:
            doc = self.doc
            await self.channel.update_reply(self.handle, doc)
            self.metrics.updates_sent.inc(channel=self.channel.name)
            self._visible(doc)
        except RateLimited as exc:
            self._block(exc)
            self._dirty.set()
        except ChannelError as exc:
            log.warning("update of %s skipped: %s", self._key, exc)

    async def _stop_flusher(self) -> None:
        """Stop updating, but never mid-call: a cancelled call loses what the platform answered
        (a new message's id, a stream's ts) after the platform acted on it."""
        if self._flusher is not None:
            async with self._sending:
                self._flusher.cancel()
            await asyncio.gather(self._flusher, return_exceptions=True)
            self._flusher = None

    async def _paced_deliver(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        await self.pacer.acquire(self.channel.name, self.msg.chat, self._budgets, self._key)
        return await self._deliver(fn, *args)

    async def _deliver(self, fn: Callable[..., Awaitable[Any]], *args: Any, **kw: Any) -> Any:
        """Call the channel until it succeeds: rate limits are waited out, not hammered."""
        for attempt in range(1, MAX_DELIVERY_ATTEMPTS + 1):
            try:
                return await fn(*args, **kw)
            except RateLimited as exc:
                self._block(exc)
                await asyncio.sleep(min(exc.retry_after, MAX_RATE_WAIT))
            except ChannelError as exc:
                if not exc.retryable or attempt == MAX_DELIVERY_ATTEMPTS:
                    raise
                await asyncio.sleep(min(2.0**attempt / 4, 8.0))
        raise ChannelError(f"gave up after {MAX_DELIVERY_ATTEMPTS} rate-limited attempts")

    def _visible(self, doc: ReplyDoc) -> None:
        """Record the time to the first update that shows the user something of the answer."""
        if not self._first_seen and (doc.text or doc.progress or doc.status != "working"):
            self._first_seen = True
            self.metrics.first_update.observe(time.monotonic() - self._started,
                                              channel=self.channel.name)

    def _block(self, exc: RateLimited) -> None:
        self.metrics.rate_limited.inc(channel=self.channel.name)
        self.pacer.block(self.channel.name, exc.scope, self.msg.chat, self._key, exc.retry_after)


def _finish_step(steps: tuple[ToolStep, ...], event: ToolFinished) -> tuple[ToolStep, ...]:
    state = "done" if event.ok else "failed"
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
