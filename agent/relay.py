"""Map LangGraph `astream(stream_mode=["messages", "updates"])` output to `AgentEvent`s.

Text comes only from AI message chunks of the model node (never tool, human or hidden
messages, never a model a tool calls internally). Tool steps come from node updates: the
model node's tool calls start them, the tools node's `ToolMessage`s finish them. An approval
interrupt (agent/middlewares/approval.py) becomes an `ApprovalRequested` event before `Final`; the
interrupts of one run (subagents pausing together) become one.
The deltas, concatenated, always equal `Final.text`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.approval import is_request, merged
from agent.events import (
    AgentEvent,
    ApprovalRequested,
    Artifact,
    Clarification,
    Final,
    Progress,
    TextDelta,
    ToolFinished,
    ToolStarted,
)

MODEL_NODE = "model"
TOOLS_NODE = "tools"
SEPARATOR = "\n\n"
CLARIFICATION = "ask_clarification"
INTERRUPT = "__interrupt__"
# Not shown as tool steps: todos become Progress lines, a clarification is the answer itself,
# presented files arrive as files.
HIDDEN_TOOLS = frozenset({"write_todos", "ask_clarification", "present_files"})
_TODO_STATES = {"in_progress": "running", "completed": "done"}


def content_text(content: Any) -> str:
    """The visible text of a message content: a string, or the `text` blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text")
        )
    return ""


class EventRelay:
    """Stateful translator for one run."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._message_id: str | None = None
        self._started: set[str] = set()
        self._todos: dict[str, Progress] = {}
        self._paused: list[tuple[str, dict[str, Any]]] = []  # approval interrupts, in order

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def feed(self, mode: str, payload: Any) -> list[AgentEvent]:
        if mode == "messages":
            chunk, metadata = payload
            return self._message(chunk, metadata)
        if mode == "updates" and isinstance(payload, dict):
            return self._updates(payload)
        if mode == "custom" and isinstance(payload, dict):
            return custom_event(payload)
        return []

    def final(self) -> list[AgentEvent]:
        """The run's last events: the approval it waits on (one request for every interrupt
        it raised: subagents of one answer pause in updates of their own), then `Final`."""
        paused: list[AgentEvent] = (
            [ApprovalRequested(*merged(self._paused))] if self._paused else []
        )
        return [*paused, Final(self.text)]

    def _message(self, chunk: Any, metadata: dict[str, Any]) -> list[AgentEvent]:
        if metadata.get("langgraph_node") != MODEL_NODE or getattr(chunk, "type", "") not in (
            "AIMessageChunk",
            "ai",
        ):
            return []
        text = content_text(chunk.content)
        if not text:
            return []
        events: list[AgentEvent] = []
        if chunk.id != self._message_id:
            self._message_id = chunk.id
            if self._parts and not self.text.endswith(SEPARATOR):
                events.append(self._add(SEPARATOR))
        events.append(self._add(text))
        return events

    def _add(self, text: str) -> TextDelta:
        self._parts.append(text)
        return TextDelta(text)

    def _updates(self, payload: dict[str, Any]) -> list[AgentEvent]:
        events: list[AgentEvent] = []
        for node, update in payload.items():
            if node == INTERRUPT:
                self._paused += _approvals(update)
                continue
            messages = update.get("messages", []) if isinstance(update, dict) else []
            if node == MODEL_NODE:
                events.extend(self._tool_starts(messages))
                events.extend(self._tool_ends(messages))  # calls a middleware answered
            elif node == TOOLS_NODE or node.endswith(".after_model"):  # calls refused there
                events.extend(self._tool_ends(messages))
            todos = update.get("todos") if isinstance(update, dict) else None
            if isinstance(todos, list):
                events.extend(self._todo_progress(todos))
        return events

    def _todo_progress(self, todos: list[Any]) -> list[AgentEvent]:
        """Items in progress or completed, as progress lines (pending ones are not shown)."""
        events: list[AgentEvent] = []
        for index, todo in enumerate(todos):
            state = _TODO_STATES.get(str(todo.get("status")) if isinstance(todo, dict) else "")
            if state is None:
                continue
            event = Progress(f"todo-{index}", str(todo.get("content", ""))[:200], state)
            if self._todos.get(event.id) != event:
                self._todos[event.id] = event
                events.append(event)
        return events

    def _tool_starts(self, messages: list[Any]) -> list[AgentEvent]:
        events: list[AgentEvent] = []
        for message in messages:
            for call in getattr(message, "tool_calls", None) or []:
                call_id = call.get("id") or ""
                if call_id in self._started or call["name"] in HIDDEN_TOOLS:
                    continue
                self._started.add(call_id)
                events.append(ToolStarted(call_id, call["name"], tool_label(call)))
        return events

    def _tool_ends(self, messages: list[Any]) -> list[AgentEvent]:
        events: list[AgentEvent] = []
        for message in messages:
            if getattr(message, "type", "") != "tool":
                continue
            if message.name == CLARIFICATION and isinstance(message.artifact, dict):
                events.append(_clarification(message.artifact))
            if message.name in HIDDEN_TOOLS:
                continue
            ok = getattr(message, "status", "success") != "error"
            summary = content_text(message.content).strip().splitlines()
            events.append(
                ToolFinished(
                    message.tool_call_id,
                    message.name or "",
                    ok,
                    (summary[0] if summary else "")[:200],
                )
            )
        return events


def custom_event(payload: dict[str, Any]) -> list[AgentEvent]:
    """Events tools write to the custom stream: `{"antler": "artifact" | "progress", ...}`."""
    kind = payload.get("antler")
    if kind == "artifact" and payload.get("path"):
        return [Artifact(Path(str(payload["path"])))]
    if kind == "progress" and payload.get("id"):
        state = str(payload.get("state") or "running")
        return [Progress(str(payload["id"]), str(payload.get("label", "")), state)]
    return []


def _approvals(interrupts: Any) -> list[tuple[str, dict[str, Any]]]:
    return [
        (str(getattr(i, "id", "")), dict(i.value))
        for i in interrupts or ()
        if is_request(getattr(i, "value", None))
    ]


def _clarification(artifact: dict[str, Any]) -> Clarification:
    options = tuple(str(o) for o in artifact.get("options") or ())
    return Clarification(str(artifact.get("question", "")), options)


def tool_label(call: Mapping[str, Any]) -> str:
    """A one-line label for a tool step: the name and a short view of its arguments."""
    args = call.get("args") or {}
    shown = ", ".join(f"{key}={value!r}" for key, value in list(args.items())[:3])
    label = f"{call['name']}({shown})"
    return label if len(label) <= 80 else label[:77] + "..."


def coalesce_deltas(
    event: AgentEvent, queue: asyncio.Queue[AgentEvent]
) -> tuple[AgentEvent, AgentEvent | None]:
    """Join the text deltas already waiting behind `event` into one (when the consumer is
    behind, it wakes once for them, not once per model chunk); the first other event waiting
    comes back as the next one. The text, concatenated, is unchanged."""
    if not isinstance(event, TextDelta) or queue.empty():
        return event, None
    parts = [event.text]
    while not queue.empty():
        following = queue.get_nowait()
        if not isinstance(following, TextDelta):
            return TextDelta("".join(parts)), following
        parts.append(following.text)
    return TextDelta("".join(parts)), None
