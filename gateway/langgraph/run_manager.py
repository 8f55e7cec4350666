"""API runs: admission (one active run per thread), the worker that drives AgentRunner's graph
stream, and the per-run event log that SSE streams, `/wait` and `/join` read.

A run's record (status, metadata, final values, error) is kept in `GatewayRecords` at every
transition, so `get`/`list` answer after a restart and from any process on a shared database;
its effect on the thread is in the checkpoints. A run's live events (the SSE replay buffer and
subscribers) are in the process that runs it, and with the Redis bus also in a Redis stream
(bot/cluster/run_events.py). A run of another process (or one that process left unfinished) is
followed by polling its record until it ends, so `/join` and `/wait` on it return; with the
Redis bus its events are relayed live meanwhile. Every run's events are `metadata` first and
`end` last.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from agent.approval import ApprovalPolicy
from agent.errors import describe_failure
from agent.events import RunSettings, Turn
from agent.runner import AgentRunner, RunCancelled, ThreadBusy
from bot.metrics import Metrics
from bot.stores.gateway import KEEP_RUNS, GatewayRecords
from gateway.langgraph.run_record import RunRecord
from gateway.langgraph.run_title import first_exchange
from gateway.langgraph.serialize import (
    INTERRUPT,
    interrupts_json,
    jsonable,
    message_chunk,
    state_values,
)

if TYPE_CHECKING:
    from bot.cluster.run_events import RunEvents

log = logging.getLogger("gateway.langgraph.runs")

MAX_RUNS_PER_THREAD = KEEP_RUNS  # kept in memory, with their replay buffers
FOLLOW_SECONDS = 0.5  # how often a run of another process is looked up until it ends
RELAY_GRACE = 2.0  # once its record ended, how long its last relayed events may take
API_CHANNEL = "api"
CALLER_PERSON = "api"
"""The Gateway caller's person: who Gateway runs speak as and whose memory the API edits when
no `?person=` is named. The Gateway has one principal (the admin token; on loopback without a
token, anyone who reaches it), so every caller is this one person."""


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
    resume: Any = None  # `command.resume`: a decision for the thread's pending approval
    approvals: ApprovalPolicy | None = None  # which calls wait for approval


async def _no_chat_running(thread_id: str) -> bool:
    return False


class RunManager:
    def __init__(
        self,
        runner: AgentRunner,
        metrics: Metrics,
        records: GatewayRecords,
        *,
        chat_running: Any = None,
        interrupt_timeout: float = 10.0,
    ) -> None:
        self.runner = runner
        self.metrics = metrics
        self.records = records
        self.chat_running = chat_running or _no_chat_running
        self.interrupt_timeout = interrupt_timeout
        self.heartbeat_seconds = 15.0
        self._runs: dict[str, RunRecord] = {}
        self._by_thread: dict[str, deque[str]] = {}
        self._active: dict[str, RunRecord] = {}
        self._followed: dict[str, RunRecord] = {}  # runs of other processes, until they end
        self._followers: set[asyncio.Task[None]] = set()
        self._cancels: set[asyncio.Task[bool]] = set()
        self.events: RunEvents | None = None  # runs' live events through Redis (several workers)
        self.elsewhere: Callable[[str], Awaitable[bool]] | None = None
        """Ask the worker running a run of another process to cancel it (None: one process)."""

    # ---------------------------------------------------------------- queries

    async def get(self, thread_id: str, run_id: str) -> RunRecord | None:
        rec = self._runs.get(run_id) or self._followed.get(run_id)
        if rec is not None:
            return rec if rec.thread_id == thread_id else None
        row = await self.records.run(thread_id, run_id)
        if row is None:
            return None
        rec = RunRecord.from_row(row)
        if rec.active:
            self._follow(rec)
        return rec

    async def list(self, thread_id: str, limit: int = KEEP_RUNS) -> list[RunRecord]:
        """The thread's runs, newest first (this process's own with their live state)."""
        rows = await self.records.runs(thread_id, limit)
        return [self._runs.get(row.run_id) or RunRecord.from_row(row) for row in rows]

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
        rec = RunRecord(
            run_id=str(uuid.uuid4()),
            thread_id=req.thread_id,
            assistant_id=req.assistant_id,
            modes=req.modes,
            metadata=req.metadata,
            kwargs=req.kwargs,
            multitask_strategy=req.multitask_strategy,
            on_disconnect=req.on_disconnect,
        )
        self._remember(rec)
        try:
            await self.records.add_run(rec.row())
        except BaseException:
            self._forget(rec)
            raise
        if self.events is not None:
            rec.sink = self.events.publisher(rec.run_id)
        rec.publish("metadata", {"run_id": rec.run_id, "thread_id": rec.thread_id})
        rec.task = asyncio.create_task(self._work(rec, req), name=f"api-run:{rec.run_id}")
        return rec

    async def _make_room(self, current: RunRecord, strategy: str) -> None:
        if strategy == "reject":
            raise RunRefused(
                409,
                f"thread {current.thread_id} already has an active run "
                f"({current.run_id}); multitask_strategy is 'reject'",
            )
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

    def _forget(self, rec: RunRecord) -> None:
        """Undo `_remember` (the record could not be stored)."""
        self._runs.pop(rec.run_id, None)
        if self._active.get(rec.thread_id) is rec:
            del self._active[rec.thread_id]
        with contextlib.suppress(ValueError):
            self._by_thread.get(rec.thread_id, deque()).remove(rec.run_id)

    def _follow(self, rec: RunRecord) -> None:
        self._followed[rec.run_id] = rec
        task = asyncio.create_task(self._poll(rec), name=f"api-run-follow:{rec.run_id}")
        self._followers.add(task)
        task.add_done_callback(self._followers.discard)

    async def _poll(self, rec: RunRecord) -> None:
        warned = False
        relay = self._relay(rec)
        try:
            while rec.active:
                await asyncio.sleep(FOLLOW_SECONDS)
                try:
                    row = await self.records.run(rec.thread_id, rec.run_id)
                except Exception as exc:  # the database is away: look again later
                    if not warned:
                        log.warning("following run %s: %s", rec.run_id, exc)
                    warned = True
                    continue
                if row is None:  # its thread was deleted
                    row = replace(
                        rec.row(),
                        status="error",
                        error={"name": "RunDeleted", "message": "the run's thread was deleted"},
                    )
                if row.finished and relay is not None:  # its last events first
                    await asyncio.wait({relay}, timeout=RELAY_GRACE)
                rec.settle(row)
        finally:
            self._followed.pop(rec.run_id, None)
            if relay is not None:
                relay.cancel()

    def _relay(self, rec: RunRecord) -> asyncio.Task[bool] | None:
        """Relay a run of another worker's live events to this process's joiners."""
        if self.events is None:
            return None

        def deliver(seq: int, event: str, data: Any) -> None:
            if rec.active and seq > rec.seq:
                rec.seq = seq - 1
                rec.publish(event, data)

        return asyncio.create_task(self.events.relay(rec.run_id, deliver), name="api-run-relay")

    # ---------------------------------------------------------------- control

    def cancel(self, rec: RunRecord) -> bool:
        if not rec.active or rec.task is None:
            return False
        if not rec.task.cancelling():  # once: a second cancel would cut its record's update
            rec.task.cancel()
        return True

    def cancel_local(self, run_id: str) -> bool:
        """Cancel run `run_id` if this process runs it (another worker's request)."""
        rec = self._runs.get(run_id)
        return rec is not None and self.cancel(rec)

    async def cancel_anywhere(self, rec: RunRecord) -> bool:
        """Cancel the run here, or ask the worker running it (a run of another process)."""
        if rec.task is not None or self.elsewhere is None or not rec.active:
            return self.cancel(rec)
        return await self.elsewhere(rec.run_id)

    def cancel_soon(self, rec: RunRecord) -> None:
        """`cancel_anywhere` from a callback (a stream's client left): asked in the background."""
        task = asyncio.create_task(self.cancel_anywhere(rec), name=f"api-run-cancel:{rec.run_id}")
        self._cancels.add(task)
        task.add_done_callback(self._cancels.discard)

    def forget_thread(self, thread_id: str) -> None:
        """Drop the thread's runs from memory (`ThreadStore.delete` deletes their records)."""
        for run_id in self._by_thread.pop(thread_id, deque()):
            self._runs.pop(run_id, None)

    async def shutdown(self) -> None:
        """Cancel the runs (each records `interrupted`) and stop following others' runs."""
        runs = list(self._active.values())
        for rec in runs:
            self.cancel(rec)
        for task in self._followers:
            task.cancel()
        tasks = [rec.task for rec in runs if rec.task is not None] + list(self._followers)
        asks = list(self._cancels)  # asks of other workers: answered within seconds
        await asyncio.gather(*tasks, *asks, return_exceptions=True)

    # ---------------------------------------------------------------- the worker

    async def _work(self, rec: RunRecord, req: RunRequest) -> None:
        started = time.monotonic()
        self.metrics.runs_started.labels(channel=API_CHANNEL).inc()
        outcome = "failed"
        try:
            rec.status = "running"
            await self.records.set_run(rec.run_id, "running")
            await self._drive(rec, req)
            rec.status, outcome = "success", "succeeded"
            self._title(rec, req)
        except (asyncio.CancelledError, RunCancelled):
            rec.status, outcome = "interrupted", "cancelled"
        except ThreadBusy:
            self._fail(rec, "ThreadBusy", "a chat is replying on this thread")
        except Exception as exc:
            self._fail(rec, type(exc).__name__, describe_failure(exc).message)
        finally:
            rec.updated_at = time.time()
            await self._record_end(rec)
            self.metrics.run_finished(API_CHANNEL, outcome, time.monotonic() - started)
            if self._active.get(rec.thread_id) is rec:
                del self._active[rec.thread_id]
            rec.publish("end", None)
            rec.subscribers.clear()
            rec.done.set()

    async def _record_end(self, rec: RunRecord) -> None:
        """Store how the run ended; a database that is away loses only the record's update
        (the run is settled `error` as an orphan when this process stops)."""
        try:
            await self.records.set_run(
                rec.run_id, rec.status, error=rec.error, values=rec.final_values, at=rec.updated_at
            )
            await self.records.touch_thread(rec.thread_id)
        except Exception as exc:
            log.warning("API run %s: its end was not recorded: %s", rec.run_id, exc)

    async def _drive(self, rec: RunRecord, req: RunRequest) -> None:
        graph_modes = ["values"]
        for mode in req.modes:
            graph_mode = "messages" if mode == "messages-tuple" else mode
            if graph_mode not in graph_modes:
                graph_modes.append(graph_mode)
        async for mode, payload in self.runner.stream_graph(
            req.thread_id,
            req.messages,
            req.settings,
            graph_modes,
            turn=Turn(text="", user_id=CALLER_PERSON, run_id=rec.run_id, approvals=req.approvals),
            checkpoint_id=req.checkpoint_id,
            resume=req.resume,
        ):
            if mode == "values" and INTERRUPT in payload:  # paused: the state and the interrupt
                paused = interrupts_json(payload[INTERRUPT])
                rec.final_values = {**rec.final_values, INTERRUPT: paused}
                if "values" in req.modes:
                    rec.publish("values", rec.final_values)
            elif mode == "values":
                rec.final_values = state_values(payload)
                if "values" in req.modes:
                    rec.publish("values", rec.final_values)
            elif mode == "messages":
                rec.publish("messages", message_chunk(payload))
            else:
                rec.publish(mode, jsonable(payload))

    def _title(self, rec: RunRecord, req: RunRequest) -> None:
        """Title the thread after its first exchange (in the background, as chats do)."""
        exchange = first_exchange(rec.final_values)
        if exchange is not None and not rec.final_values.get("title"):
            self.runner.title_later(rec.thread_id, *exchange, req.settings.model)

    def _fail(self, rec: RunRecord, name: str, message: str) -> None:
        rec.status = "error"
        rec.error = {"message": message, "name": name}
        rec.publish("error", rec.error)
        log.warning("API run %s on %s failed: %s: %s", rec.run_id, rec.thread_id, name, message)
