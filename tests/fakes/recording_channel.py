"""An in-process channel that records everything the service asks of it.

Registered under the name `test` by the `test_channel` fixture; tests inject messages with
`inject()` and assert on `calls`.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from channels.base import (
    Attachment,
    Capabilities,
    Channel,
    ChannelConfig,
    ChannelContext,
    ChatRef,
    FileTooLarge,
    InboundMessage,
    PublishResult,
    ReplyDoc,
    UserRef,
)


class RecordingConfig(ChannelConfig):
    pass


@dataclass
class Call:
    kind: str
    doc: ReplyDoc | None = None
    text: str = ""
    chat: ChatRef | None = None
    reply: int = 0
    at: float = field(default_factory=time.monotonic)


@dataclass
class Handle:
    id: int
    chat: ChatRef


class RecordingChannel(Channel):
    name = "test"
    capabilities = Capabilities(max_text_len=1000, buttons=True)

    def __init__(
        self, config: ChannelConfig, ctx: ChannelContext, capabilities: Capabilities | None = None
    ) -> None:
        super().__init__(config, ctx)
        if capabilities is not None:
            self.capabilities = capabilities
        self.calls: list[Call] = []
        self.failures: dict[str, list[Exception]] = {}
        self.files: dict[str, bytes] = {}
        self._ids = itertools.count(1)
        self._events = itertools.count(1)
        self.changed = asyncio.Event()

    async def start(self) -> None:
        self.ctx.report(connected=True)

    async def stop(self) -> None:
        self.ctx.report(connected=False)

    # ------------------------------------------------------------ inbound

    def message(
        self,
        text: str,
        chat_id: str = "c1",
        *,
        topic: str | None = None,
        user: str = "u1",
        event_id: str | None = None,
        chat_type: str = "dm",
        attachments: tuple[Attachment, ...] = (),
        **kw: Any,
    ) -> InboundMessage:
        chat = ChatRef(channel=self.name, chat_id=chat_id, topic_id=topic, chat_type=chat_type)  # type: ignore[arg-type]
        eid = event_id or f"e{next(self._events)}"
        return InboundMessage(
            event_id=eid,
            chat=chat,
            sender=UserRef(id=user, name=user),
            text=text,
            attachments=attachments,
            message_id=eid,
            received_at=time.time(),
            **kw,
        )

    async def inject(self, text: str, chat_id: str = "c1", **kw: Any) -> PublishResult:
        return await self.ctx.publish(self.message(text, chat_id, **kw))

    async def say(self, *texts: str, chat_id: str = "c1", **kw: Any) -> None:
        """The user sends `texts`, one message after the other, into one chat."""
        for text in texts:
            await self.inject(text, chat_id, **kw)

    # ------------------------------------------------------------ outbound

    def _record(self, call: Call) -> None:
        call.at = self.pacer.clock()  # the pacer's clock: virtual when a test injects one
        failures = self.failures.get(call.kind)
        self.calls.append(call)
        self.changed.set()
        if failures:
            raise failures.pop(0)

    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> Handle:
        handle = Handle(next(self._ids), msg.chat)
        self._record(
            Call(
                "queued" if doc.status == "queued" else "open", doc, chat=msg.chat, reply=handle.id
            )
        )
        return handle

    async def update_reply(self, handle: Handle, doc: ReplyDoc) -> None:
        self._record(Call("update", doc, doc.text, handle.chat, handle.id))

    async def finish_reply(self, handle: Handle, doc: ReplyDoc) -> None:
        self._record(Call("finish", doc, doc.text, handle.chat, handle.id))

    async def send_continuation(self, handle: Handle, doc: ReplyDoc) -> None:
        self._record(Call("continuation", doc, doc.text, handle.chat, handle.id))

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        self._record(Call("text", text=text, chat=chat))

    def handle_state(self, handle: Handle) -> dict[str, Any]:
        return {"id": handle.id}

    def restore_handle(self, msg: InboundMessage, state: Mapping[str, Any]) -> Handle:
        return Handle(int(state["id"]), msg.chat)

    def finish_is_replayable(self, handle: Handle) -> bool:
        return True

    async def send_file(self, handle: Handle, path: Path) -> None:
        self._record(Call("file", text=str(path), chat=handle.chat, reply=handle.id))

    async def fetch_file(
        self, msg: InboundMessage, att: Attachment, dest_dir: Path, *, limit: int | None = None
    ) -> Path:
        data = self.files[att.ref]
        cap = min(self.capabilities.max_file_in, limit or self.capabilities.max_file_in)
        if len(data) > cap:
            raise FileTooLarge(att.name, len(data), cap)
        dest_dir.mkdir(parents=True, exist_ok=True)
        path = dest_dir / att.name
        await asyncio.to_thread(path.write_bytes, data)
        return path

    # ------------------------------------------------------------ queries

    def of(self, kind: str, chat_id: str | None = None) -> list[Call]:
        return [
            c
            for c in self.calls
            if c.kind == kind and (chat_id is None or (c.chat and c.chat.chat_id == chat_id))
        ]

    def texts(self, chat_id: str | None = None) -> list[str]:
        """Final texts and plain texts, in order."""
        return [
            c.text
            for c in self.calls
            if c.kind in ("finish", "continuation", "text")
            and (chat_id is None or (c.chat and c.chat.chat_id == chat_id))
        ]

    async def wait_for(self, kind: str, count: int = 1, timeout: float = 10.0) -> list[Call]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self.of(kind)) < count:
            self.changed.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"waited for {count} {kind!r}; calls: {self.calls}")
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except TimeoutError:
                continue
        return self.of(kind)
