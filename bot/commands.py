"""Slash commands: a declared table of small handlers, recognised the same way on every channel."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from channels.base import Button, InboundMessage

if TYPE_CHECKING:
    from agent.memory import MemoryView
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


@COMMANDS.register("memory", "show what the agent remembers about you; forget one fact or all",
                   "/memory [forget N | clear]")
async def _memory(ctx: CommandContext, args: str) -> CommandReply:
    memory = ctx.dispatcher.runner.memory
    if not memory.enabled:
        return CommandReply("Long-term memory is not enabled on this service, so nothing is "
                            "remembered about you between conversations.")
    user_id = f"{ctx.msg.chat.channel}:{ctx.msg.sender.id}"
    words = args.split()
    if words[:1] == ["clear"]:
        removed = memory.clear(user_id)
        return CommandReply(f"Done: I forgot everything I remembered about you ({removed} facts).")
    if words[:1] == ["forget"]:
        if len(words) != 2 or not words[1].isdigit():
            return CommandReply("Usage: /memory forget N (N is a number from /memory).")
        fact = memory.forget(user_id, int(words[1]))
        if fact is None:
            return CommandReply(f"There is no fact number {words[1]}; /memory lists them.")
        return CommandReply(f"Forgotten: {fact.content}")
    if words:
        return CommandReply("Usage: /memory, /memory forget N or /memory clear.")
    if ctx.msg.chat.chat_type != "dm":
        return CommandReply("What I remember about you is private: send /memory to me in a "
                            "direct message.")
    return CommandReply(_memory_text(memory.listing(user_id)))


_CONTEXT_LABELS = {"work": "Work", "personal": "Personal", "top_of_mind": "Current focus"}


def _memory_text(view: MemoryView) -> str:
    if not view.contexts and not view.facts:
        return "I don't remember anything about you yet."
    lines = ["What I remember about you:"]
    lines += [f"{_CONTEXT_LABELS[k]}: {v}" for k, v in view.contexts.items()]
    if view.facts:
        lines.append("Facts:")
        lines += [f"{i}. {f.content} ({f.category})" for i, f in enumerate(view.facts, start=1)]
        lines.append("/memory forget N removes one fact; /memory clear forgets everything.")
    return "\n".join(lines)


@COMMANDS.register("plan", "plan mode: the agent keeps a visible todo list for longer tasks",
                   "/plan on|off")
async def _plan(ctx: CommandContext, args: str) -> CommandReply:
    return _toggle(ctx, args, "plan_mode", "Plan mode")


@COMMANDS.register("think", "extended thinking on models that support it", "/think on|off")
async def _think(ctx: CommandContext, args: str) -> CommandReply:
    reply = _toggle(ctx, args, "thinking", "Thinking")
    model = ctx.dispatcher.runner.resolve_model(ctx.conversation.model)
    if args.strip().lower() == "on" and not model.supports_thinking:
        return CommandReply(f"{reply.text} ({model.label} does not support thinking; it applies "
                            "when you switch to a model that does.)")
    return reply


def _toggle(ctx: CommandContext, args: str, column: str, label: str) -> CommandReply:
    choice = args.strip().lower()
    if choice not in ("on", "off"):
        current = _on(bool(getattr(ctx.conversation, column)))
        return CommandReply(f"{label} is {current} for this conversation. Use on or off.")
    ctx.dispatcher.conversations.update(ctx.conversation.key, **{column: choice == "on"})
    return CommandReply(f"{label} {choice} for this conversation.")


@COMMANDS.register("help", "show this help", ordered=False)
async def _help(ctx: CommandContext, args: str) -> CommandReply:
    return CommandReply(COMMANDS.help_text())


@COMMANDS.register("start", "greet", hidden=True)
async def _start(ctx: CommandContext, args: str) -> CommandReply:
    hello = f"Hi! I'm {ctx.dispatcher.bot_name}, an AI agent. Send me a message to get going."
    return CommandReply(f"{hello}\n\n{COMMANDS.help_text()}")
