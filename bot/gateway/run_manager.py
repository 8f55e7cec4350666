"""API runs: admission (one active run per thread), the worker that drives AgentRunner's graph
stream, and the per-run event log that SSE streams, `/wait` and `/join` read.

Runs live in memory (the newest `MAX_RUNS_PER_THREAD` per thread); their effect on the thread
is in the checkpoints. Every run's events are `metadata` first and `end` last.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from agent.errors import describe_failure
from agent.events import RunSettings
from agent.runner import AgentRunner, RunCancelled, ThreadBusy
from bot.gateway.serialize import iso, jsonable, message_chunk, state_values
from bot.metrics import Metrics

log = logging.getLogger("bot.gateway.runs")

MAX_RUNS_PER_THREAD = 100
REPLAY_BUFFER = 256
API_CHANNEL = "api"

Event = tuple[int, str, Any]  # (sequence number, SSE event name, data)


@dataclass
class RunRecord:
    run_id: str
    thread_id: str
    assistant_id: str
    modes: list[str]
    metadata: dict[str, Any] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)
    multitask_strategy: str = "reject"
    on_disconnect: str = "cancel"
    status: str = "pending"
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    final_values: dict[str, Any] = field(default_factory=dict)
    error: dict[str, str] | None = None
    task: asyncio.Task[None] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    buffer: deque[Event] = field(default_factory=lambda: deque(maxlen=REPLAY_BUFFER))
    subscribers: set[asyncio.Queue[Event]] = field(default_factory=set)
    seq: int = 0

    @property
    def active(self) -> bool:
        return not self.done.is_set()

    def publish(self, event: str, data: Any) -> None:
        self.seq += 1
        item = (self.seq, event, data)
        self.buffer.append(item)
        for queue in self.subscribers:
            queue.put_nowait(item)

    def subscribe(self, after: int | None = None) -> asyncio.Queue[Event]:
        """A queue of this run's events: those buffered after `after` (if given), then live."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        if after is not None:
            for item in self.buffer:
                if item[0] > after:
                    queue.put_nowait(item)
        if self.active:
            self.subscribers.add(queue)
        elif after is None:
            self._replay_end(queue)
        return queue

    def _replay_end(self, queue: asyncio.Queue[Event]) -> None:
        """A joiner of a finished run gets its final values (or error) and `end`."""
        if self.error is not None:
            queue.put_nowait((self.seq, "error", self.error))
        elif "values" in self.modes:
            queue.put_nowait((self.seq, "values", self.final_values))
        queue.put_nowait((self.seq, "end", None))

    def unsubscribe(self, queue: asyncio.Queue[Event]) -> None:
        self.subscribers.discard(queue)

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "thread_id": self.thread_id,
            "assistant_id": self.assistant_id, "status": self.status,
            "metadata": self.metadata, "kwargs": self.kwargs,
            "multitask_strategy": self.multitask_strategy,
            "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
            "error": self.error["message"] if self.error else None,
        }


class RunRefused(Exception):
    """The run cannot start: `status` says why (409 busy, 501 unsupported)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass(frozen=True)
class RunRequest:
    thread_id: str
    assistant_id: str
    messages: list[Any]
    settings: RunSettings
    modes: list[str]
    metadata: dict[str, Any]
    kwargs: dict[str, Any]
    multitask_strategy: str
    on_disconnect: str
    checkpoint_id: str | None = None  # fork from this checkpoint (None: the thread's head)


async def _no_chat_running(thread_id: str) -> bool:
    return False


class RunManager:
    def __init__(self, runner: AgentRunner, metrics: Metrics, *,
                 chat_running: Any = None, interrupt_timeout: float = 10.0) -> None:
        self.runner = runner
        self.metrics = metrics
        self.chat_running = chat_running or _no_chat_running
        self.interrupt_timeout = interrupt_timeout
        self.heartbeat_seconds = 15.0
        self._runs: dict[str, RunRecord] = {}
        self._by_thread: dict[str, deque[str]] = {}
        self._active: dict[str, RunRecord] = {}
        self.on_finish: list[Any] = []

    # ---------------------------------------------------------------- queries

    def get(self, thread_id: str, run_id: str) -> RunRecord | None:
        rec = self._runs.get(run_id)
        return rec if rec is not None and rec.thread_id == thread_id else None

    def list(self, thread_id: str) -> list[RunRecord]:
        ids = self._by_thread.get(thread_id, deque())
        return [self._runs[i] for i in reversed(ids)]

    def active(self, thread_id: str) -> RunRecord | None:
        return self._active.get(thread_id)

    def is_busy(self, thread_id: str) -> bool:
        return thread_id in self._active or self.runner.is_running(thread_id)

    # ---------------------------------------------------------------- admission

    async def start(self, req: RunRequest) -> RunRecord:
        if await self.chat_running(req.thread_id):
            raise RunRefused(409, "a chat is replying on this thread; try again when it is done")
        current = self._active.get(req.thread_id)
        if current is not None:
            await self._make_room(current, req.multitask_strategy)
        elif self.runner.is_running(req.thread_id):
            raise RunRefused(409, f"thread {req.thread_id} already has an active run")
        rec = RunRecord(run_id=str(uuid.uuid4()), thread_id=req.thread_id,
                        assistant_id=req.assistant_id, modes=req.modes, metadata=req.metadata,
                        kwargs=req.kwargs, multitask_strategy=req.multitask_strategy,
                        on_disconnect=req.on_disconnect)
        self._remember(rec)
        rec.publish("metadata", {"run_id": rec.run_id, "thread_id": rec.thread_id})
        rec.task = asyncio.create_task(self._work(rec, req), name=f"api-run:{rec.run_id}")
        return rec

    async def _make_room(self, current: RunRecord, strategy: str) -> None:
        if strategy == "reject":
            raise RunRefused(409, f"thread {current.thread_id} already has an active run "
                                  f"({current.run_id}); multitask_strategy is 'reject'")
        if strategy != "interrupt":
            raise RunRefused(501, f"multitask_strategy {strategy!r} is not implemented")
        self.cancel(current)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(current.done.wait(), self.interrupt_timeout)
        if current.active:
            raise RunRefused(409, f"the active run {current.run_id} did not stop in time")

    def _remember(self, rec: RunRecord) -> None:
        self._runs[rec.run_id] = rec
        self._active[rec.thread_id] = rec
        ids = self._by_thread.setdefault(rec.thread_id, deque())
        ids.append(rec.run_id)
        while len(ids) > MAX_RUNS_PER_THREAD:
            self._runs.pop(ids.popleft(), None)

    # ---------------------------------------------------------------- control

    def cancel(self, rec: RunRecord) -> bool:
        if not rec.active or rec.task is None:
            return False
        rec.task.cancel()
        return True

    def forget_thread(self, thread_id: str) -> None:
        for run_id in self._by_thread.pop(thread_id, deque()):
            self._runs.pop(run_id, None)

    async def shutdown(self) -> None:
        tasks = [rec.task for rec in self._active.values() if rec.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ---------------------------------------------------------------- the worker

    async def _work(self, rec: RunRecord, req: RunRequest) -> None:
        started = time.monotonic()
        rec.status = "running"
        self.metrics.runs_started.labels(channel=API_CHANNEL).inc()
        outcome = "failed"
        try:
            await self._drive(rec, req)
            rec.status, outcome = "success", "succeeded"
        except (asyncio.CancelledError, RunCancelled):
            rec.status, outcome = "interrupted", "cancelled"
        except ThreadBusy:
            self._fail(rec, "ThreadBusy", "a chat is replying on this thread")
        except Exception as exc:
            self._fail(rec, type(exc).__name__, describe_failure(exc).message)
        finally:
            rec.updated_at = time.time()
            self.metrics.run_finished(API_CHANNEL, outcome, time.monotonic() - started)
            if self._active.get(rec.thread_id) is rec:
                del self._active[rec.thread_id]
            rec.publish("end", None)
            rec.subscribers.clear()
            rec.done.set()
            for callback in self.on_finish:
                callback(rec)

    async def _drive(self, rec: RunRecord, req: RunRequest) -> None:
        graph_modes = ["values"]
        for mode in req.modes:
            graph_mode = "messages" if mode == "messages-tuple" else mode
            if graph_mode not in graph_modes:
                graph_modes.append(graph_mode)
        async for mode, payload in self.runner.stream_graph(
                req.thread_id, req.messages, req.settings, graph_modes, user_id="api",
                checkpoint_id=req.checkpoint_id):
            if mode == "values":
                rec.final_values = state_values(payload)
                if "values" in req.modes:
                    rec.publish("values", rec.final_values)
            elif mode == "messages":
                rec.publish("messages", message_chunk(payload))
            else:
                rec.publish(mode, jsonable(payload))

    def _fail(self, rec: RunRecord, name: str, message: str) -> None:
        rec.status = "error"
        rec.error = {"message": message, "name": name}
        rec.publish("error", rec.error)
        log.warning("API run %s on %s failed: %s: %s", rec.run_id, rec.thread_id, name, message)
