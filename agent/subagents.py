"""The `task` tool: delegate a self-contained job to a subagent with a fresh context.

`general-purpose` gets every tool except `task`, `ask_clarification` and `present_files`;
`bash` (only when bash is enabled) gets bash and the file tools. A subagent runs without a
checkpointer, in a fresh context (its model tokens never mix into the lead's reply), under a
timeout; its tool steps are written to the custom stream as progress lines, and its final
answer becomes the `task` tool result.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool

from agent.config import SubagentsConfig
from agent.context import BuildContext, RunContext
from agent.relay import content_text, tool_label
from agent.tools.closure_tool import closure_tool

log = logging.getLogger(__name__)

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
        lines: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        job = asyncio.create_task(
            self._drive(graph, prompt, runtime.context, lines.put_nowait, pid),
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
        write(progress(pid, f"Subagent: {description}", "done"))
        return result or "(the subagent returned no text)"

    async def _drive(
        self,
        graph: Any,
        prompt: str,
        context: RunContext | None,
        write: Callable[[Any], None],
        pid: str,
    ) -> str:
        answer = ""
        labels: dict[str, str] = {}
        async for update in graph.astream(
            {"messages": [HumanMessage(prompt)]},
            config={"recursion_limit": self.cfg.recursion_limit},
            context=context,
            stream_mode="updates",
        ):
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
    job: asyncio.Task[str], lines: asyncio.Queue[dict[str, str]], write: Callable[[Any], None]
) -> str:
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


def _messages(update: Any) -> list[Any]:
    found: list[Any] = []
    if isinstance(update, dict):
        for value in update.values():
            if isinstance(value, dict):
                found.extend(value.get("messages") or [])
    return found
