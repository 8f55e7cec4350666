"""One chat turn: from an accepted message to a delivered answer.

Fetches attachments into the thread's uploads, runs the agent, streams the reply and marks the
message answered in the ledger — or, when the service stops mid-answer, leaves it pending so it
is answered after restart.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

from agent.events import Failed, RunSettings, Title, Turn
from agent.runner import AgentRunner
from bot.commands import parse_command
from bot.conversations import Conversation, ConversationStore
from bot.ledger import Ledger
from bot.metrics import Metrics
from bot.pacing import Pacer
from bot.replies import ReplyStreamer
from channels.base import (
    Button,
    Channel,
    ChannelError,
    FileTooLarge,
    InboundMessage,
    ReplyDoc,
    ReplyHandle,
)

log = logging.getLogger("bot.turns")

AGENT_UPLOADS = "/mnt/user-data/uploads"


class TurnRunner:
    def __init__(self, *, runner: AgentRunner, conversations: ConversationStore, ledger: Ledger,
                 pacer: Pacer, max_upload_bytes: int, metrics: Metrics | None = None) -> None:
        self.metrics = metrics or Metrics()
        self.runner = runner
        self.conversations = conversations
        self.ledger = ledger
        self.pacer = pacer
        self.max_upload_bytes = max_upload_bytes
        self._keep_pending: set[asyncio.Task[None]] = set()
        self.chat_commands: Callable[[str], bool] = lambda name: False

    def is_chat_command(self, name: str) -> bool:
        """True when `/name` is meant for the agent (a skill), not the command table."""
        return self.chat_commands(name)

    def keep_pending(self, task: asyncio.Task[None]) -> None:
        """The run in `task` is cancelled by shutdown: leave its message pending in the ledger."""
        self._keep_pending.add(task)

    async def run(self, channel: Channel, msg: InboundMessage, handle: ReplyHandle | None,
                  stop_reason: Callable[[], str]) -> None:
        conv = self.conversations.get_or_create(msg.chat)
        streamer = ReplyStreamer(channel, msg, self.pacer, handle, metrics=self.metrics)
        try:
            await streamer.open()
            files, notes = await self._fetch_files(channel, msg, conv)
            for note in notes:
                await channel.send_text(msg.chat, note, reply_to=msg.message_id)
            await self._stream(streamer, conv, self._turn(msg, files))
            await streamer.finish()
        except asyncio.CancelledError:
            await self._finish_cancelled(streamer, stop_reason())
            self._settle(msg)
            raise
        except ChannelError as exc:
            log.warning("reply to %s not delivered: %s", msg.chat.key, exc)
        self._settle(msg)

    async def _stream(self, streamer: ReplyStreamer, conv: Conversation, turn: Turn) -> None:
        settings = RunSettings(model=conv.model, thinking=conv.thinking, plan_mode=conv.plan_mode)
        channel, started = conv.channel, time.monotonic()
        outcome = "cancelled"
        self.metrics.runs_started.inc(channel=channel)
        try:
            async for event in self.runner.stream(conv.thread_id, turn, settings):
                if isinstance(event, Title):
                    self.conversations.update(conv.key, title=event.text[:60])
                streamer.on_event(event)
                if isinstance(event, Failed):
                    outcome = "cancelled" if event.code == "cancelled" else "failed"
                    break
            else:
                outcome = "succeeded"
        finally:
            self.metrics.run_finished(channel, outcome, time.monotonic() - started)

    async def _finish_cancelled(self, streamer: ReplyStreamer, reason: str) -> None:
        try:
            await asyncio.wait_for(streamer.finish("cancelled", reason or "Stopped."), 10)
        except (ChannelError, TimeoutError) as exc:
            log.warning("could not mark reply cancelled: %s", exc)

    def _settle(self, msg: InboundMessage) -> None:
        task = asyncio.current_task()
        if task in self._keep_pending:
            self._keep_pending.discard(task)  # type: ignore[arg-type]
            return
        self.ledger.done(msg)

    async def _fetch_files(self, channel: Channel, msg: InboundMessage,
                           conv: Conversation) -> tuple[list[str], list[str]]:
        if not msg.attachments:
            return [], []
        uploads = self.runner.thread_dirs(conv.thread_id).uploads
        files, notes = [], []
        for att in msg.attachments:
            try:
                if att.size is not None and att.size > self.max_upload_bytes:
                    raise FileTooLarge(att.name, att.size, self.max_upload_bytes)
                path = await channel.fetch_file(msg, att, uploads)
                files.append(_agent_path(path, uploads))
            except FileTooLarge as exc:
                notes.append(f"{att.name} was not read: {exc}.")
            except ChannelError as exc:
                notes.append(f"{att.name} could not be downloaded: {exc}.")
        return files, notes

    async def send_command_reply(self, channel: Channel, msg: InboundMessage, text: str,
                                 buttons: tuple[Button, ...]) -> None:
        """Answer a command: plain text, or a one-shot reply when there are buttons to show."""
        try:
            if buttons and channel.capabilities.buttons:
                handle = await channel.open_reply(msg, ReplyDoc(status="working"))
                await channel.finish_reply(handle, ReplyDoc(text=text, buttons=buttons,
                                                            status="done"))
            else:
                await channel.send_text(msg.chat, text, reply_to=msg.message_id)
        except ChannelError as exc:
            log.warning("command reply on %s failed: %s", channel.name, exc)
        finally:
            self.ledger.done(msg)

    def _turn(self, msg: InboundMessage, files: list[str]) -> Turn:
        """The agent's view of the message; `/<skill> task` becomes Turn(skill=..., text=task)."""
        command = parse_command(msg.text)
        if command is not None and self.is_chat_command(command.name):
            return _turn(msg, files, text=command.args, skill=command.name)
        return _turn(msg, files)


def _turn(msg: InboundMessage, files: list[str], text: str | None = None,
          skill: str | None = None) -> Turn:
    return Turn(
        text=msg.text if text is None else text,
        skill=skill,
        user_id=f"{msg.chat.channel}:{msg.sender.id}",
        user_name=msg.sender.name,
        files=tuple(files),
        context=msg.quoted_text or "",
        chat_type=msg.chat.chat_type,
    )


def _agent_path(path: Path, uploads: Path) -> str:
    try:
        return f"{AGENT_UPLOADS}/{path.relative_to(uploads).as_posix()}"
    except ValueError:
        return str(path)
