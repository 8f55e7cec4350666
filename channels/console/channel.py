"""The terminal channel: one local conversation on stdin/stdout.

With a terminal it is interactive and shows the reply as it streams. With piped input every line
is one message; each final reply is printed, and `finished` is set at end of input.
"""

from __future__ import annotations

import asyncio
import getpass
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from channels.base import (
    Capabilities,
    Channel,
    ChannelContext,
    ChatRef,
    InboundMessage,
    RateBudget,
    ReplyDoc,
    UserRef,
)
from channels.console.config import ConsoleConfig

_STATE_MARK = {"running": "…", "done": "✓", "failed": "✗"}


@dataclass
class ConsoleReply:
    chat: ChatRef
    printed: int = 0
    steps_shown: set[str] = field(default_factory=set)


class ConsoleChannel(Channel):
    name = "console"
    capabilities = Capabilities(
        max_text_len=100_000,
        edit_budget=(RateBudget(scope="reply", per_second=20, burst=5),),
    )

    def __init__(
        self,
        config: ConsoleConfig,
        ctx: ChannelContext,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        super().__init__(config, ctx)
        self.cfg = config
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.interactive = self.stdin.isatty() and self.stdout.isatty()
        self.finished = asyncio.Event()
        self.chat = ChatRef(channel=self.name, chat_id="local", chat_type="dm")
        self._session = uuid.uuid4().hex[:12]
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._reader = asyncio.create_task(self._read_loop(), name="console reader")
        self.ctx.report(connected=True)

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        self.ctx.report(connected=False)

    async def _read_loop(self) -> None:
        user = UserRef(id=_os_user(), name=self.cfg.user)
        count = 0
        while True:
            if self.interactive:
                self._write("\nyou> ")
            line = await asyncio.to_thread(self.stdin.readline)
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            count += 1
            await self.ctx.publish(self._message(text, user, count))
        self.finished.set()

    def _message(self, text: str, user: UserRef, count: int) -> InboundMessage:
        return InboundMessage(
            event_id=f"{self._session}:{count}",
            chat=self.chat,
            sender=user,
            text=text,
            message_id=str(count),
            received_at=time.time(),
            mentions_bot=True,
        )

    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> ConsoleReply:
        reply = ConsoleReply(chat=msg.chat)
        if doc.status == "queued" and self.interactive:
            self._write("(queued behind the current reply)\n")
        return reply

    async def update_reply(self, handle: ConsoleReply, doc: ReplyDoc) -> None:
        if self.interactive:
            self._show_progress(handle, doc)
            self._write(doc.text[handle.printed :])
            handle.printed = len(doc.text)

    async def finish_reply(self, handle: ConsoleReply, doc: ReplyDoc) -> None:
        if self.interactive:
            self._show_progress(handle, doc)
            self._write(doc.text[handle.printed :] + "\n")
        else:
            self._write(doc.text.rstrip() + "\n")
        for i, button in enumerate(doc.buttons, start=1):
            self._write(f"  [{i}] {button.label}  ({button.value})\n")
        if doc.status != "done" and doc.note:
            self._write(f"[{doc.status}] {doc.note}\n")
        handle.printed = len(doc.text)

    async def send_continuation(self, handle: ConsoleReply, doc: ReplyDoc) -> None:
        self._write(doc.text.rstrip() + "\n")

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        self._write(text.rstrip() + "\n")

    async def send_file(self, handle: ConsoleReply, path: Path) -> None:
        self._write(f"[file] {path}\n")

    def _show_progress(self, handle: ConsoleReply, doc: ReplyDoc) -> None:
        if not self.cfg.show_progress:
            return
        for step in doc.progress:
            shown = f"{step.id}:{step.state}"
            if shown not in handle.steps_shown:
                handle.steps_shown.add(shown)
                self._write(f"\n  {_STATE_MARK[step.state]} {step.label}\n")

    def _write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "local"
