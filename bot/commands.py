"""Slash commands: a declared table of small handlers, recognised the same way on every channel.

The table holds the built-ins; `bot/command_registry.py` joins them with the enabled skills into
the one registry everything else reads.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from agent.grant import Grant
from bot import i18n, texts
from bot.access.people import account_of
from bot.agent_choice import AGENTS
from bot.command_context import CommandContext, CommandReply, CommandService
from bot.i18n import N_
from bot.setting_choice import Choice, answer
from channels.base import Button

if TYPE_CHECKING:
    from agent.memory import MemoryView
    from bot.access.links import Links
    from bot.schedules.service import Schedules

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


Handler = Callable[[CommandContext, str], Awaitable[CommandReply]]
P = TypeVar("P")
Permission = Callable[[str], str]
"""A command's arguments → the key a role's `commands` grant is matched against."""


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    summary: str
    handler: Handler
    usage: str = ""
    hidden: bool = False
    ordered: bool = True
    permission: Permission | None = None  # default: `/name` whatever the arguments

    def permission_key(self, args: str) -> str:
        """`/models NAME` for `/models smart`, `/memory clear`, else `/name`."""
        return self.permission(args) if self.permission else f"/{self.name}"


@dataclass
class CommandTable:
    commands: dict[str, Command] = field(default_factory=dict)

    def register(
        self,
        name: str,
        summary: str,
        usage: str = "",
        hidden: bool = False,
        ordered: bool = True,
        permission: Permission | None = None,
    ) -> Callable[[Handler], Handler]:
        """Add a command. `ordered` ones wait their turn behind the conversation's messages;
        the others (/stop, /status, /help) answer at once."""

        def add(handler: Handler) -> Handler:
            usage_text = usage or f"/{name}"
            self.commands[name] = Command(
                name, summary, handler, usage_text, hidden, ordered, permission
            )
            return handler

        return add

    def get(self, name: str) -> Command | None:
        return self.commands.get(name)


COMMANDS = CommandTable()


@COMMANDS.register("new", "start a new conversation (the agent forgets this chat's history)")
async def _new(ctx: CommandContext, args: str) -> CommandReply:
    if ctx.msg.in_main_chat:
        return CommandReply(texts.NEW_IN_MAIN_CHAT)
    await ctx.service.conversations.new_thread(ctx.msg.chat)
    return CommandReply(texts.NEW_STARTED)


@COMMANDS.register("stop", "stop the reply that is being written", ordered=False)
async def _stop(ctx: CommandContext, args: str) -> CommandReply:
    if ctx.msg.in_main_chat:
        return await _stop_in_chat(ctx, args.strip())
    stopped = await ctx.lanes.stop_anywhere(ctx.msg.chat)
    return CommandReply(texts.stopped(1) if stopped else texts.NOTHING_RUNNING)


async def _stop_in_chat(ctx: CommandContext, args: str) -> CommandReply:
    """In a main chat: the sender's running replies in any of the chat's threads."""
    lanes = ctx.lanes
    runs = await lanes.runs_in_chat_anywhere(ctx.msg.chat, ctx.msg.sender.id)
    if args and args != "all":
        runs = [m for m in runs if (m.chat.topic_id or _MAIN) == args]
    if not runs:
        return CommandReply(texts.NOTHING_RUNNING_IN_CHAT)
    if len(runs) > 1 and not args:
        buttons = [
            Button(label=texts.stop_label(m.text), value=f"/stop {m.chat.topic_id or _MAIN}")
            for m in runs
        ]
        buttons.append(Button(label=texts.STOP_ALL, value="/stop all"))
        return CommandReply(texts.choose_reply_to_stop(len(runs)), tuple(buttons))
    count = sum([await lanes.stop_anywhere(m.chat) for m in runs])
    return CommandReply(texts.stopped(count) if count else texts.NOTHING_RUNNING_IN_CHAT)


_MAIN = "main"  # /stop's name for the chat-level conversation of a main chat


@COMMANDS.register("status", "show this conversation's thread, model and activity", ordered=False)
async def _status(ctx: CommandContext, args: str) -> CommandReply:
    service, lanes, conv = ctx.service, ctx.lanes, ctx.conversation
    if ctx.msg.in_main_chat:  # the chat-level settings, and the sender's replies in the chat
        conv = await service.conversations.get_or_create(ctx.msg.chat.with_topic(None))
    profile = service.agent.profile(conv.agent or service.bound_agent(conv.channel))
    model = service.agent.resolve_model(conv.model or profile.model)
    running = texts.yes_no(lanes.is_running(conv.key))
    if ctx.msg.in_main_chat:
        running = str(len(await lanes.runs_in_chat_anywhere(ctx.msg.chat, ctx.msg.sender.id)))
    model_text = f"{model.label} ({model.name})"
    lines = texts.status_lines(
        conv.thread_id,
        conv.title,
        f"{profile.label} ({profile.name})",
        model_text,
        conv.thinking,
        conv.plan_mode,
        running,
        lanes.queued(conv.key),
    )
    schedules = service.schedules
    if schedules is not None and (line := await schedules.status_line(ctx.msg.chat)):
        lines.append(line)
    lines += service.status_notes()
    return CommandReply("\n".join(lines))


_MODELS = Choice(
    command="models",
    column="model",
    names=lambda ctx: ctx.service.agent.model_names(),
    line=lambda ctx, name, here: texts.model_line(
        name, ctx.service.agent.resolve_model(name).label, here
    ),
    heading=texts.model_list,
    named=lambda ctx, args: args if args in ctx.service.agent.model_names() else None,
    unknown=texts.unknown_model,
    allows=Grant.allows_model,
    denied=texts.model_denied,
    current=lambda ctx, conv: conv.model,
    active=lambda ctx, current: ctx.service.agent.resolve_model(current).name,
    label=lambda ctx, name: ctx.service.agent.resolve_model(name).label,
    switched=texts.model_switched,
    chat_default=texts.chat_default_model,
)


def _choice_command(choice: Choice, summary: str) -> None:
    """`/<name>` lists, `/<name> NAME` switches (bot/setting_choice.py); in a main chat the
    chat-level setting, the one new conversations there start with."""
    name = choice.command
    COMMANDS.register(
        name,
        summary,
        f"/{name} [NAME]",
        permission=lambda args: f"/{name} NAME" if args.strip() else f"/{name}",
    )(lambda ctx, args: answer(ctx, choice, args.strip()))


_choice_command(_MODELS, N_("list models, or switch this conversation's model"))
_choice_command(AGENTS, N_("list agents, or switch this conversation's agent"))


@COMMANDS.register(
    "memory",
    "show what the agent remembers about you; forget one fact or all",
    "/memory [forget N | clear]",
    permission=lambda args: (
        f"/memory {args.split()[0].lower()}"
        if args.split() and args.split()[0].lower() in ("forget", "clear")
        else "/memory"
    ),
)
async def _memory(ctx: CommandContext, args: str) -> CommandReply:
    memory = ctx.service.agent.memory
    if not memory.enabled:
        return CommandReply(texts.MEMORY_OFF)
    user_id = account_of(ctx.msg)
    words = args.split()
    if words[:1] == ["clear"]:
        removed = await memory.clear(user_id)
        return CommandReply(texts.memory_cleared(removed))
    if words[:1] == ["forget"]:
        if len(words) != 2 or not words[1].isdigit():
            return CommandReply(texts.MEMORY_FORGET_USAGE)
        fact = await memory.forget(user_id, int(words[1]))
        if fact is None:
            return CommandReply(texts.memory_no_fact(words[1]))
        return CommandReply(texts.memory_forgotten(fact.content))
    if words:
        return CommandReply(texts.MEMORY_USAGE)
    if ctx.msg.chat.chat_type != "dm":
        return CommandReply(texts.MEMORY_PRIVATE)
    return CommandReply(_memory_text(await memory.listing(user_id)))


def _memory_text(view: MemoryView) -> str:
    if not view.contexts and not view.facts:
        return texts.MEMORY_EMPTY
    lines = [texts.MEMORY_HEADING]
    lines += [texts.memory_context(k, v) for k, v in view.contexts.items()]
    if view.facts:
        lines.append(texts.MEMORY_FACTS)
        lines += [f"{i}. {f.content} ({f.category})" for i, f in enumerate(view.facts, start=1)]
        lines.append(texts.MEMORY_HOWTO)
    return "\n".join(lines)


@COMMANDS.register(
    "plan", "plan mode: the agent keeps a visible todo list for longer tasks", "/plan on|off"
)
async def _plan(ctx: CommandContext, args: str) -> CommandReply:
    return await _toggle(ctx, args, "plan_mode")


@COMMANDS.register("think", "extended thinking on models that support it", "/think on|off")
async def _think(ctx: CommandContext, args: str) -> CommandReply:
    reply = await _toggle(ctx, args, "thinking")
    model = ctx.service.agent.resolve_model(ctx.conversation.model)
    if args.strip().lower() == "on" and not model.supports_thinking:
        return CommandReply(texts.no_thinking(reply.text, model.label))
    return reply


async def _toggle(ctx: CommandContext, args: str, column: str) -> CommandReply:
    choice = args.strip().lower()
    if choice not in ("on", "off"):
        return CommandReply(texts.switch_is(column, bool(getattr(ctx.conversation, column))))
    await ctx.service.conversations.update(ctx.conversation.key, **{column: choice == "on"})
    return CommandReply(texts.switched(column, choice == "on"))


async def _schedule(schedules: Schedules, ctx: CommandContext, args: str) -> CommandReply:
    chat, sender = ctx.msg.chat, ctx.msg.sender
    words = args.split()
    action = words[0].lower() if words else ""
    if action == "list" and len(words) == 1:
        answer = await schedules.listing(chat)
        return CommandReply(answer.text, answer.buttons)
    if action in ("cancel", "pause", "resume") and len(words) == 2:
        return CommandReply(await schedules.change(chat, sender, action, words[1].lstrip("#")))
    if not words or action in ("list", "cancel", "pause", "resume"):
        return CommandReply(texts.SCHEDULE_USAGE)
    return CommandReply(await schedules.create(chat, sender, args))


async def _timezone(schedules: Schedules, ctx: CommandContext, args: str) -> CommandReply:
    return CommandReply(await schedules.timezone_command(ctx.msg.chat, args))


async def _link(links: Links, ctx: CommandContext, args: str) -> CommandReply:
    return CommandReply(await links.command(ctx.msg, args))


async def _unlink(links: Links, ctx: CommandContext, args: str) -> CommandReply:
    return CommandReply(await links.unlink_command(ctx.msg))


def _given(
    part: Callable[[CommandService], P | None],
    off: str,
    answer: Callable[[P, CommandContext, str], Awaitable[CommandReply]],
) -> Handler:
    """A command of an optional part of the service: `texts.<off>` while the part is off."""

    async def handler(ctx: CommandContext, args: str) -> CommandReply:
        got = part(ctx.service)
        return CommandReply(getattr(texts, off)) if got is None else await answer(got, ctx, args)

    return handler


def _schedules(service: CommandService) -> Schedules | None:
    return service.schedules


def _links(service: CommandService) -> Links | None:
    return service.links


for _word, _about, _how, _answer in (
    (
        "schedule",
        N_("run a task later or repeatedly; list, pause or cancel them"),
        "/schedule WHEN TASK | list | cancel N | pause N | resume N",
        _given(_schedules, "SCHEDULES_DISABLED", _schedule),
    ),
    (
        "timezone",
        N_("show or set this conversation's time zone for schedules"),
        "/timezone [Area/City]",
        _given(_schedules, "SCHEDULES_DISABLED", _timezone),
    ),
    (
        "link",
        N_("link this account to your account on another platform (same memory and role)"),
        "/link [CODE]",
        _given(_links, "LINK_DISABLED", _link),
    ),
    ("unlink", N_("undo /link for this account"), "", _given(_links, "LINK_DISABLED", _unlink)),
):
    COMMANDS.register(_word, _about, _how, ordered=False)(_answer)


@COMMANDS.register(
    "usage", "your tokens and cost today and this month", "/usage [PERSON]", ordered=False
)
async def _usage(ctx: CommandContext, args: str) -> CommandReply:
    from bot.usage.command import usage_command

    return CommandReply(await usage_command(ctx, args))


@COMMANDS.register(
    "lang", "show or set the language I answer you in", "/lang [en|zh|auto]", ordered=False
)
async def _lang(ctx: CommandContext, args: str) -> CommandReply:
    languages, choice = ctx.service.languages, args.strip().lower()
    if languages is None or (choice and choice != "auto" and i18n.supported(choice) is None):
        return CommandReply(texts.LANG_USAGE)
    if not choice:
        return CommandReply(texts.lang_is(i18n.name_of(i18n.current())))
    await languages.choose(ctx.msg, None if choice == "auto" else i18n.supported(choice))
    await languages.speak(ctx.msg)  # this answer already in the new language
    return CommandReply(texts.lang_set(i18n.name_of(i18n.current())))


@COMMANDS.register("help", "show this help", ordered=False)
async def _help(ctx: CommandContext, args: str) -> CommandReply:
    return CommandReply(ctx.service.help.help_text())


@COMMANDS.register("start", "greet", hidden=True)
async def _start(ctx: CommandContext, args: str) -> CommandReply:
    return CommandReply(ctx.service.help.greeting())
