"""What people do with schedules: create (by command or the agent's tool), list, change, and
the time zone of a conversation. Answers are plain text from bot/texts.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bot import texts
from bot.schedules.config import SchedulesConfig
from bot.schedules.parse import ParsedSchedule, ScheduleSyntaxError, parse_schedule, parse_when
from bot.schedules.recurrence import local_text, next_fire, valid_zone
from bot.schedules.scheduler import EVENT_PREFIX, Clock, Scheduler
from bot.stores.schedules import NewSchedule, Schedule, ScheduleStore, chat_key
from channels.base import Button, ChatRef, InboundMessage, UserRef

if TYPE_CHECKING:
    from agent.tools.schedules import ScheduleRequest
    from bot.stores.conversations import Conversation

_ACTIONS = {
    "cancel": ("cancelled", "cancelled"),
    "pause": ("paused", "paused"),
    "resume": ("active", "resumed"),
}
_RECENT_TURNS = 1000


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    buttons: tuple[Button, ...] = ()


class Schedules:
    def __init__(
        self, store: ScheduleStore, scheduler: Scheduler, config: SchedulesConfig, clock: Clock
    ) -> None:
        self.store = store
        self.scheduler = scheduler
        self.config = config
        self.clock = clock
        self._turns: OrderedDict[str, InboundMessage] = OrderedDict()

    # ---------------------------------------------------------------- time zones

    def reconfigure(self, config: SchedulesConfig) -> None:
        """New settings (a config reload): limits at once, the scheduler from its next pass."""
        self.config = config
        self.scheduler.late_after = config.late_after_seconds
        self.scheduler.poll = config.poll_seconds

    async def timezone_for(self, chat: ChatRef) -> str:
        return await self.store.timezone(chat.key) or self.config.default_timezone

    async def timezone_command(self, chat: ChatRef, args: str) -> str:
        name = args.strip()
        if not name:
            return texts.timezone_is(await self.timezone_for(chat))
        if not valid_zone(name):
            return texts.timezone_unknown(name)
        await self.store.set_timezone(chat.key, name)
        return texts.timezone_set(name)

    # ---------------------------------------------------------------- creating

    async def create(self, chat: ChatRef, sender: UserRef, args: str) -> str:
        """`/schedule WHEN TASK`: the confirmation, or what was wrong, in plain words."""
        if not self.config.enabled:
            return texts.SCHEDULES_DISABLED
        tz = await self.timezone_for(chat)
        try:
            parsed = parse_schedule(args, tz, self.clock.now())
        except ScheduleSyntaxError as exc:
            return f"{exc}\n{texts.SCHEDULE_USAGE}"
        return await self._add(chat, sender, parsed, tz)

    async def schedule(self, request: ScheduleRequest) -> str:
        """The agent's tool: schedule `task` at `when` in the conversation of the running turn."""
        msg = self._turns.get(request.thread_id)
        if msg is None or f"{msg.chat.channel}:{msg.sender.id}" != request.user_id:
            return texts.SCHEDULE_FROM_UNKNOWN_CHAT
        if not self.config.enabled:
            return texts.SCHEDULES_DISABLED
        tz = await self.timezone_for(msg.chat)
        try:
            when, rest = parse_when(request.when.strip(), tz, self.clock.now())
        except ScheduleSyntaxError as exc:
            return texts.not_scheduled(str(exc))
        if rest.strip():
            return texts.not_scheduled_rest(rest.strip())
        parsed = ParsedSchedule(when, request.task.strip(), fresh_thread=request.fresh_thread)
        if not parsed.prompt:
            return texts.SCHEDULE_EMPTY_TASK
        return await self._add(msg.chat, msg.sender, parsed, tz)

    async def _add(self, chat: ChatRef, sender: UserRef, parsed: ParsedSchedule, tz: str) -> str:
        limit = await self.over_limit(chat, sender)
        if limit:
            return limit
        when = parsed.when
        new = NewSchedule(
            chat=chat,
            creator=sender,
            prompt=parsed.prompt,
            kind=when.kind,
            tz=tz,
            label=when.label,
            first_run=when.first_run,
            expr=when.expr,
            missed=parsed.missed or self.config.missed_policy,
            fresh_thread=bool(parsed.fresh_thread),
        )
        schedule = await self.store.add(new)
        self.scheduler.poke()
        return texts.schedule_created(
            schedule.id,
            schedule.label,
            local_text(when.first_run, tz),
            schedule.missed,
            schedule.fresh_thread,
        )

    async def over_limit(self, chat: ChatRef, sender: UserRef) -> str:
        """The refusal when `sender` or the chat has the most tasks allowed, else ""."""
        person = await self.store.count_live(creator_key=f"{chat.channel}:{sender.id}")
        if person >= self.config.max_per_person:
            return texts.schedule_limit("you", self.config.max_per_person)
        in_chat = await self.store.count_live(chat=chat_key(chat))
        if in_chat >= self.config.max_per_chat:
            return texts.schedule_limit("chat", self.config.max_per_chat)
        return ""

    # ---------------------------------------------------------------- managing

    async def listing(self, chat: ChatRef) -> Answer:
        schedules = await self.store.for_chat(chat_key(chat))
        if not schedules:
            return Answer(texts.NO_SCHEDULES)
        lines, buttons = [texts.SCHEDULES_HEADING], []
        for s in schedules:
            lines.append(self._line(s))
            toggle = "resume" if s.state == "paused" else "pause"
            buttons += [
                Button(
                    label=texts.schedule_button(toggle, s.id), value=f"/schedule {toggle} {s.id}"
                ),
                Button(
                    label=texts.schedule_button("cancel", s.id), value=f"/schedule cancel {s.id}"
                ),
            ]
        return Answer("\n".join(lines), tuple(buttons))

    async def change(self, chat: ChatRef, sender: UserRef, action: str, number: str) -> str:
        schedule = await self.store.get(int(number)) if number.isdigit() else None
        if (
            schedule is None
            or chat_key(schedule.chat) != chat_key(chat)
            or schedule.state not in ("active", "paused")
        ):
            return texts.schedule_not_here(number)
        if not self.may_change(schedule, sender):
            return texts.schedule_not_yours(schedule.id)
        state, done = _ACTIONS[action]
        next_run = None
        if action == "resume" and schedule.kind == "cron":
            next_run = next_fire(schedule.expr, schedule.tz, self.clock.now())
        await self.store.set_state(schedule.id, state, "", next_run)  # type: ignore[arg-type]
        if state == "active":
            self.scheduler.poke()
        return texts.schedule_changed(schedule.id, done)

    def may_change(self, schedule: Schedule, sender: UserRef) -> bool:
        """The creator, or someone named in `schedules.admins` (`channel:user_id`)."""
        who = f"{schedule.chat.channel}:{sender.id}"
        return sender.id == schedule.creator.id or who in self.config.admins

    async def status_line(self, chat: ChatRef) -> str | None:
        active = [
            s
            for s in await self.store.for_chat(chat_key(chat))
            if s.state == "active" and s.next_run is not None
        ]
        if not active:
            return None
        first = min(active, key=lambda s: s.next_run or 0.0)
        return texts.schedule_next(
            first.id, first.label, local_text(first.next_run or 0.0, first.tz)
        )

    def _line(self, s: Schedule) -> str:
        next_run = local_text(s.next_run, s.tz) if s.next_run is not None else "-"
        return texts.schedule_line(s.id, s.label, s.prompt, next_run, s.state, s.reason)

    # ---------------------------------------------------------------- turns

    def thread_for(self, msg: InboundMessage, conv: Conversation) -> Conversation:
        """TurnRunner's hook: a scheduled run with `--fresh` gets a thread of its own (the same
        one again after a restart); every turn is remembered so the agent's tool finds its chat."""
        if msg.event_id.startswith(EVENT_PREFIX) and msg.raw.get("fresh_thread"):
            conv = replace(conv, thread_id=str(uuid.uuid5(uuid.NAMESPACE_URL, msg.event_id)))
        self._turns[conv.thread_id] = msg
        self._turns.move_to_end(conv.thread_id)
        while len(self._turns) > _RECENT_TURNS:
            self._turns.popitem(last=False)
        return conv
