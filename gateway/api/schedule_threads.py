"""Scheduled tasks of Gateway threads (DeerFlow's model): a task created without a chat runs in
a Gateway thread, its own (made at creation, titled after the task) or the one it names. The
scheduler hands each due run to `run_in_thread`, which starts it as an API run in that thread,
so the web UI shows its runs there; the task's run record keeps the run's id."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage

from agent.events import RunSettings, Turn
from agent.prompt import human_content, human_metadata
from bot.schedules.scheduler import THREAD_CHANNEL, RunInThread
from bot.stores.schedules import Run, RunState
from channels.base import ChatRef, InboundMessage, UserRef
from gateway.langgraph.run_manager import CALLER_PERSON, RunRefused, RunRequest

if TYPE_CHECKING:
    from gateway.service import Gateway

RUN_REASON = "gateway run "  # a Gateway thread's task run: "gateway run <run id>"
CREATOR = UserRef(id=CALLER_PERSON, name="Gateway")


def thread_chat(thread_id: str) -> ChatRef:
    return ChatRef(channel=THREAD_CHANNEL, chat_id=thread_id)


def thread_of(chat: ChatRef) -> str | None:
    """The Gateway thread a task runs in (None: a chat's task)."""
    return chat.chat_id if chat.channel == THREAD_CHANNEL else None


def run_id_of(run: Run) -> str | None:
    return run.reason.removeprefix(RUN_REASON) if run.reason.startswith(RUN_REASON) else None


async def task_thread(gw: Gateway, thread_id: str | None, title: str) -> str:
    """The thread a new task runs in: `thread_id` (it must exist), else a new one."""
    if thread_id:
        await gw.thread(thread_id)  # 404 when unknown
        return thread_id
    created = str(uuid.uuid4())
    await gw.threads.create(created, {"title": title, "scheduled_task": True})
    return created


def run_in_thread(gw: Gateway) -> RunInThread:
    """The scheduler's hook: start a due run of a Gateway thread's task as an API run."""

    async def start(msg: InboundMessage) -> tuple[RunState, str] | None:
        thread_id = msg.chat.chat_id
        if await gw.threads.get(thread_id) is None:
            return "failed", f"thread {thread_id} was deleted"
        turn = Turn(text=msg.text, user_id=CALLER_PERSON, context=msg.quoted_text or "")
        message = HumanMessage(
            content=human_content(turn), additional_kwargs={"antler": human_metadata(turn)}
        )
        request = RunRequest(
            thread_id=thread_id,
            assistant_id="lead_agent",
            messages=[message],
            settings=RunSettings(),
            modes=["values", "messages-tuple"],
            metadata={"scheduled_task_id": str(msg.raw.get("schedule_id", ""))},
            kwargs={},
            multitask_strategy="reject",
            on_disconnect="continue",
        )
        try:
            rec = await gw.runs.start(request)
        except RunRefused:  # the thread is busy: the next tick tries again
            return None
        return "delivered", RUN_REASON + rec.run_id

    return start
