"""What the admin API's routes share: the service facade and the API's own stores."""

from __future__ import annotations

from dataclasses import dataclass

from bot.facade import ServiceFacade
from bot.stores.gateway import UNFINISHED
from gateway.errors import ApiError
from gateway.langgraph.run_manager import CALLER_PERSON, RunManager
from gateway.langgraph.serialize import interrupts_of
from gateway.langgraph.thread_store import ThreadRow, ThreadStore

__all__ = ["CALLER_PERSON", "Gateway", "chat_is_replying"]


@dataclass
class Gateway:
    service: ServiceFacade
    threads: ThreadStore
    runs: RunManager

    @classmethod
    def for_service(cls, service: ServiceFacade) -> Gateway:
        records = service.records  # thread and run records, on the configured backend
        threads = ThreadStore(records, service.conversations)
        runs = RunManager(
            service.runner,
            service.metrics,
            records,
            chat_running=lambda tid: chat_is_replying(service, tid),
        )
        if service.run_cancels is not None:  # several workers: cancel where the run runs
            runs.elsewhere = service.run_cancels.cancel_elsewhere
            service.run_cancels.answer_with(runs.cancel_local)
        runs.events = service.run_events
        return cls(service, threads, runs)

    async def thread(self, thread_id: str) -> ThreadRow:
        row = await self.threads.get(thread_id)
        if row is None:
            raise ApiError(404, f"thread {thread_id} not found")
        return row

    async def status(self, thread_id: str) -> str:
        if self.runs.is_busy(thread_id) or await chat_is_replying(self.service, thread_id):
            return "busy"
        runs = await self.runs.list(thread_id, limit=1)
        if runs and runs[0].status in UNFINISHED:  # run by another process on the database
            return "busy"
        if runs and runs[0].status == "error":
            return "error"
        if interrupts_of(await self.service.runner.checkpoint(thread_id)):
            return "interrupted"  # an approval waits (agent/approval.py)
        return "idle"


async def chat_is_replying(service: ServiceFacade, thread_id: str) -> bool:
    conv = await service.conversations.by_thread(thread_id)
    return conv is not None and service.is_replying(conv.key)
