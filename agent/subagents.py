"""The `task` tool: delegate a self-contained job to a subagent with a fresh context.

`general-purpose` gets every tool except `task`, `ask_clarification` and `present_files`;
`bash` (only when bash is enabled) gets bash and the file tools. A subagent runs in a fresh
context (its model tokens never mix into the lead's reply), under a timeout; its tool steps are
written to the custom stream as progress lines, and its final answer becomes the `task` tool
result.

A call of the subagent's that needs approval pauses it the way it pauses the lead: the subagent's
run is kept in the lead's saver (thread `<lead thread>:task:<call id>`) and the `task` tool
interrupts the lead with the same request, so the card, the decision and the resume are the
lead's. Resumed, the `task` call runs again, finds its subagent waiting and resumes it with the
decision. A subagent pauses once per `task` call; a further call that needs approval is refused
(the lead may delegate again).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command, interrupt

from agent.approval import is_request
from agent.config import SubagentsConfig
from agent.context import BuildContext, RunContext
from agent.relay import content_text, tool_label
from agent.tools.closure_tool import closure_tool

log = logging.getLogger(__name__)
INTERRUPT = "__interrupt__"
DURABILITY = "exit"  # as the lead's runs (agent/runner.py): a pause is written when it happens

GENERAL = "general-purpose"
BASH = "bash"
LEAD_ONLY = {"task", "ask_clarification", "present_files"}
BASH_TOOLS = {"bash", "python", "ls", "read_file", "write_file", "str_replace"}

SUBAGENT_PROMPT = """\
You are a subagent of Antler, an assistant in a team messenger. You were given one task by the \
lead agent; the user does not see your messages, only the lead does. Do the task with your tools, \
then reply with a concise, complete report of the result (facts, file paths you wrote, open \
problems). Do not ask questions: make reasonable assumptions and state them."""

GraphBuilder = Callable[[BuildContext, list[BaseTool], str], Any]


def progress(pid: str, label: str, state: str = "running") -> dict[str, str]:
    return {"antler": "progress", "id": pid, "label": label, "state": state}


class Subagents:
    def __init__(self, cfg: SubagentsConfig, *, bash_enabled: bool, build: GraphBuilder) -> None:
        self.cfg = cfg
        self.bash_enabled = bash_enabled
        self.build = build

    def types(self) -> list[str]:
        return [GENERAL, BASH] if self.bash_enabled else [GENERAL]

    def task_tool(self, ctx: BuildContext, lead_tools: list[BaseTool]) -> BaseTool:
        graphs: dict[str, Any] = {}
        types = self.types()

        def graph_for(kind: str) -> Any:
            if kind not in graphs:
                allowed = [
                    t
                    for t in lead_tools
                    if t.name not in LEAD_ONLY and (kind == GENERAL or t.name in BASH_TOOLS)
                ]
                graphs[kind] = self.build(ctx, allowed, SUBAGENT_PROMPT)
            return graphs[kind]

        @closure_tool
        async def task(
            description: str,
            prompt: str,
            runtime: ToolRuntime[RunContext],
            subagent_type: str = GENERAL,
        ) -> str:
            """Delegate a self-contained piece of work to a subagent, which works with its own
            tools and returns a report. description: 3-8 words shown to the user. prompt: the
            full task with all context it needs (it cannot see this conversation).
            subagent_type: general-purpose (default) or bash (shell work, when available).
            Several task calls in one response run in parallel (at most 3)."""
            if subagent_type not in types:
                return f"Error: unknown subagent_type {subagent_type!r}; use one of {types}"
            return await self._run(graph_for(subagent_type), description, prompt, runtime)

        return task

    async def _run(
        self, graph: Any, description: str, prompt: str, runtime: ToolRuntime[RunContext]
    ) -> str:
        pid = f"task:{runtime.tool_call_id}"
        write = runtime.stream_writer
        write(progress(pid, f"Subagent: {description}"))
        config: dict[str, Any] = {"recursion_limit": self.cfg.recursion_limit}
        start: Any = {"messages": [HumanMessage(prompt)]}
        context = runtime.context
        if graph.checkpointer is not None and context is not None:
            thread = f"{context.thread_id}:task:{runtime.tool_call_id}"
            config["configurable"] = {"thread_id": thread}
            waiting = await _waiting(graph, config)
            if waiting is not None:  # the lead was resumed with the decision: pass it on
                start = Command(resume=interrupt(waiting))
                context = replace(context, may_ask=False)
        lines: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        job = asyncio.create_task(
            self._drive(graph, start, config, context, lines.put_nowait, pid),
            context=contextvars.Context(),
        )
        try:
            result = await asyncio.wait_for(_relay(job, lines, write), self.cfg.timeout_seconds)
        except TimeoutError:
            write(progress(pid, f"Subagent: {description} (timed out)", "failed"))
            return f"Error: the subagent timed out after {self.cfg.timeout_seconds:g} s."
        except Exception as exc:
            log.warning("subagent failed: %s", exc, exc_info=True)
            write(progress(pid, f"Subagent: {description}", "failed"))
            return f"Error: the subagent failed: {type(exc).__name__}: {exc}"
        finally:
            job.cancel()
        if isinstance(result, dict):  # paused for approval: the lead pauses with the request
            write(progress(pid, f"Subagent: {description} (waiting for approval)"))
            interrupt(result)  # raises (GraphInterrupt); resumed, this call runs again
            return "Error: the subagent's approval was not answered."
        write(progress(pid, f"Subagent: {description}", "done"))
        return result or "(the subagent returned no text)"

    async def _drive(
        self,
        graph: Any,
        start: Any,
        config: dict[str, Any],
        context: RunContext | None,
        write: Callable[[Any], None],
        pid: str,
    ) -> str | dict[str, Any]:
        """The subagent's answer, or the approval request it paused with."""
        answer: str | dict[str, Any] = ""
        labels: dict[str, str] = {}
        async for update in graph.astream(
            start, config=config, context=context, stream_mode="updates", durability=DURABILITY
        ):  # read to its end: the pause is written as the run stops
            for paused in update.get(INTERRUPT) or () if isinstance(update, dict) else ():
                if is_request(paused.value):
                    answer = dict(paused.value)
            for message in _messages(update):
                if isinstance(message, AIMessage):
                    for call in message.tool_calls:
                        labels[call["id"] or ""] = f"  ↳ {tool_label(call)}"
                        write(progress(f"{pid}:{call['id']}", labels[call["id"] or ""]))
                    if not message.tool_calls:
                        answer = content_text(message.content)
                elif isinstance(message, ToolMessage):
                    state = "failed" if message.status == "error" else "done"
                    label = labels.get(message.tool_call_id, "")
                    write(progress(f"{pid}:{message.tool_call_id}", label, state))
        return answer


async def _relay(
    job: asyncio.Task[str | dict[str, Any]],
    lines: asyncio.Queue[dict[str, str]],
    write: Callable[[Any], None],
) -> str | dict[str, Any]:
    """Write the subagent's progress lines (from the lead's context) until it finishes."""
    while True:
        getter = asyncio.ensure_future(lines.get())
        await asyncio.wait({job, getter}, return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            write(getter.result())
            continue
        getter.cancel()
        while not lines.empty():
            write(lines.get_nowait())
        return job.result()


async def _waiting(graph: Any, config: dict[str, Any]) -> dict[str, Any] | None:
    """The approval request the subagent of this `task` call waits on (in the saver), if any."""
    state = await graph.aget_state(config)
    found = [i.value for i in state.interrupts if is_request(i.value)]
    return dict(found[0]) if found else None


def _messages(update: Any) -> list[Any]:
    found: list[Any] = []
    if isinstance(update, dict):
        for value in update.values():
            if isinstance(value, dict):
                found.extend(value.get("messages") or [])
    return found
