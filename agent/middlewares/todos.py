"""Plan mode: a `write_todos` tool (LangChain's todo middleware) that allows one item in progress.

The relay turns the todo list into `Progress` events, so the steps show as progress lines.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import TodoListMiddleware
from langchain.agents.middleware.todo import Todo, WriteTodosInput
from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.types import Command

PLAN_PROMPT = """\
## Plan mode: `write_todos`

The user turned on plan mode: for work of 3 or more steps, first write a todo list with \
`write_todos`, then keep it current: exactly one item `in_progress` at a time, mark each item \
`completed` as soon as it is done, and never call `write_todos` twice in one response. The \
user sees the list as progress lines. For simple requests, skip the list and just answer. \
When all items are done, give the answer itself in your next message."""

TOOL_DESCRIPTION = """\
Write the whole todo list for the current task (it replaces the previous list). Items have \
`content` and `status` (pending, in_progress or completed); at most one may be in_progress."""


def _write_todos(runtime: ToolRuntime, todos: list[Todo]) -> Command[Any]:
    running = [t for t in todos if t.get("status") == "in_progress"]
    if len(running) > 1:
        error = (
            f"Error: {len(running)} items are in_progress; exactly one may be. "
            "Send the list again with one item in progress."
        )
        message = ToolMessage(error, tool_call_id=runtime.tool_call_id, status="error")
        return Command(update={"messages": [message]})
    done = sum(t.get("status") == "completed" for t in todos)
    text = f"Todo list updated ({done}/{len(todos)} completed)."
    return Command(
        update={"todos": todos, "messages": [ToolMessage(text, tool_call_id=runtime.tool_call_id)]}
    )


async def _awrite_todos(runtime: ToolRuntime, todos: list[Todo]) -> Command[Any]:
    return _write_todos(runtime, todos)


class PlanTodos(TodoListMiddleware):
    def __init__(self) -> None:
        super().__init__(system_prompt=PLAN_PROMPT, tool_description=TOOL_DESCRIPTION)
        self.tools = [
            StructuredTool.from_function(
                name="write_todos",
                description=TOOL_DESCRIPTION,
                func=_write_todos,
                coroutine=_awrite_todos,
                args_schema=WriteTodosInput,
                infer_schema=False,
            )
        ]
