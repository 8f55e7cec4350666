"""Slash commands: a declared table of small handlers, recognised the same way on every channel."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from channels.base import Button, InboundMessage

if TYPE_CHECKING:
    from bot.conversations import Conversation
    from bot.dispatcher import Dispatcher

_LEADING_MENTIONS = re.compile(r"^(?:\s*(?:<@[\w|.-]+>|@\S+))+\s*")
_COMMAND = re.compile(r"^/([A-Za-z][\w-]*)(?:@\S+)?(?:\s+(.*))?$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    name: str
    args: str


def parse_command(text: str) -> ParsedCommand | None:
    """`/cmd args`, `/cmd@Bot args` or `@Bot /cmd args` -> ParsedCommand; anything else -> None.

    `/etc/hosts` is no command: a command word is followed by whitespace or the end.
    """
    stripped = _LEADING_MENTIONS.sub("", text.strip(), count=1)
    match = _COMMAND.match(stripped)
    if not match:
        return None
    return ParsedCommand(name=match.group(1).lower(), args=(match.group(2) or "").strip())


@dataclass(frozen=True, slots=True)
class CommandReply:
    text: str
    buttons: tuple[Button, ...] = ()


@dataclass
class CommandContext:
    msg: InboundMessage
    conversation: Conversation
    dispatcher: Dispatcher


Handler = Callable[[CommandContext, str], Awaitable[CommandReply]]


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    summary: str
    handler: Handler
    usage: str = ""
    hidden: bool = False
    ordered: bool = True


@dataclass
class CommandTable:
    commands: dict[str, Command] = field(default_factory=dict)

    def register(self, name: str, summary: str, usage: str = "", hidden: bool = False,
                 ordered: bool = True) -> Callable[[Handler], Handler]:
        """Add a command. `ordered` ones wait their turn behind the conversation's messages;
        the others (/stop, /status, /help) answer at once."""

        def add(handler: Handler) -> Handler:
            usage_text = usage or f"/{name}"
            self.commands[name] = Command(name, summary, handler, usage_text, hidden, ordered)
            return handler

        return add

    def get(self, name: str) -> Command | None:
        return self.commands.get(name)

    def help_text(self) -> str:
        lines = ["Commands:"]
        for cmd in self.commands.values():
            if not cmd.hidden:
                lines.append(f"{cmd.usage} — {cmd.summary}")
        lines.append("Anything else is a message to the agent.")
        return "\n".join(lines)


COMMANDS = CommandTable()


@COMMANDS.register("new", "start a new conversation (the agent forgets this chat's history)")
async def _new(ctx: CommandContext, args: str) -> CommandReply:
    ctx.dispatcher.conversations.new_thread(ctx.msg.chat)
    return CommandReply("New conversation started.")


@COMMANDS.register("stop", "stop the reply that is being written", ordered=False)
async def _stop(ctx: CommandContext, args: str) -> CommandReply:
    stopped = await ctx.dispatcher.stop_run(ctx.msg.chat.key)
    return CommandReply("Stopped the running reply." if stopped else "Nothing is running.")


@COMMANDS.register("status", "show this conversation's thread, model and activity",
                   ordered=False)
async def _status(ctx: CommandContext, args: str) -> CommandReply:
    d, conv = ctx.dispatcher, ctx.conversation
    model = d.runner.resolve_model(conv.model)
    running = "yes" if d.is_running(conv.key) else "no"
    lines = [
        f"Thread: {conv.thread_id}",
        f"Title: {conv.title or '(none yet)'}",
        f"Model: {model.label} ({model.name})",
        f"Thinking: {_on(conv.thinking)} · Plan mode: {_on(conv.plan_mode)}",
        f"Reply running: {running} · Queued messages: {d.queued(conv.key)}",
    ]
    lines += d.status_notes()
    return CommandReply("\n".join(lines))


def _on(flag: bool) -> str:
    return "on" if flag else "off"


@COMMANDS.register("models", "list models, or switch this conversation's model", "/models [NAME]")
async def _models(ctx: CommandContext, args: str) -> CommandReply:
    runner, conv = ctx.dispatcher.runner, ctx.conversation
    names = runner.model_names()
    if args:
        if args in names:
            ctx.dispatcher.conversations.update(conv.key, model=args)
            return CommandReply(f"Model for this conversation: {runner.resolve_model(args).label}.")
        return _model_list(ctx, f"Unknown model {args!r}. Choose one of:", conv.model)
    return _model_list(ctx, "Models (current marked with *):", conv.model)


def _model_list(ctx: CommandContext, heading: str, current: str | None) -> CommandReply:
    runner = ctx.dispatcher.runner
    active = runner.resolve_model(current).name
    lines, buttons = [heading], []
    for name in runner.model_names():
        model = runner.resolve_model(name)
        mark = "*" if name == active else " "
        lines.append(f"{mark} {name} — {model.label}")
        buttons.append(Button(label=("✓ " if name == active else "") + model.label,
                              value=f"/models {name}"))
    return CommandReply("\n".join(lines), tuple(buttons))


@COMMANDS.register("memory", "show what the agent remembers about you")
async def _memory(ctx: CommandContext, args: str) -> CommandReply:
    return CommandReply("Long-term memory is not enabled on this service, so nothing is remembered "
                        "about you between conversations.")


@COMMANDS.register("help", "show this help", ordered=False)
async def _help(ctx: CommandContext, args: str) -> CommandReply:
    return CommandReply(COMMANDS.help_text())


@COMMANDS.register("start", "greet", hidden=True)
async def _start(ctx: CommandContext, args: str) -> CommandReply:
    hello = f"Hi! I'm {ctx.dispatcher.bot_name}, an AI agent. Send me a message to get going."
    return CommandReply(f"{hello}\n\n{COMMANDS.help_text()}")
