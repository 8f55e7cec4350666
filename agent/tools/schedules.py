"""`schedule_task`: the agent schedules a task for later ("remind me tomorrow at 8").

The agent does not keep schedules itself: the service hands it a `SchedulePort` (a narrow
callback, wired in the service's composition root), and the tool passes the request on with the
thread and the person it runs for. The port answers with the confirmation (or why it could not),
which the agent reads back to the person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool

from agent.context import BuildContext, RunContext
from agent.tools.closure_tool import closure_tool

SCHEDULE_TOOL = "schedule_task"


@dataclass(frozen=True, slots=True)
class ScheduleRequest:
    thread_id: str
    user_id: str
    when: str
    task: str
    fresh_thread: bool = False


class SchedulePort(Protocol):
    async def schedule(self, request: ScheduleRequest) -> str:
        """Create the schedule; returns the confirmation or the reason it was not created."""
        ...


_DESCRIPTION = """Schedule a task to run later in this chat: at that time the task's text is \
given to you as a message, and your answer is posted here. Use it when someone asks for a \
reminder or for something later or repeatedly ("remind me in 2 hours…", "every weekday at 9 \
summarise…"). `when` is one of: "in 2h", "in 1h30m", "at 18:00", "tomorrow 8:00", \
"on 2026-12-24 09:00", "every weekday 09:00", "every monday, friday at 10:00", \
"every 2 hours", 'cron "0 9 * * 1-5"' — in the person's time zone. `task` is what to do \
then, written as an instruction to yourself (e.g. "Remind <name> to call Ann"). Set \
`fresh_thread` for repeated reports that should not build on earlier runs. Tell the person \
what was scheduled, using the tool's answer."""


def schedule_tool(port: SchedulePort) -> BaseTool:
    async def schedule_task(
        when: str, task: str, runtime: ToolRuntime[RunContext], fresh_thread: bool = False
    ) -> str:
        context = runtime.context
        if not isinstance(context, RunContext):
            return "Not scheduled: no conversation to schedule in."
        return await port.schedule(
            ScheduleRequest(
                thread_id=context.thread_id,
                user_id=context.user_id,
                when=when,
                task=task,
                fresh_thread=fresh_thread,
            )
        )

    return closure_tool(schedule_task, name=SCHEDULE_TOOL, description=_DESCRIPTION)


def schedule_tools(port: SchedulePort) -> Callable[[BuildContext], list[Any]]:
    """A tool provider (see agent.tools) offering `schedule_task` through `port`."""
    tool = schedule_tool(port)
    return lambda _ctx: [tool]
