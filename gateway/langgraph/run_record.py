"""One API run as the Gateway holds it: its record (status, metadata, final values, error, as
kept in `GatewayRecords`) and, in the process that runs it, its event log: a replay buffer that
SSE streams, `/wait` and `/join` read from any point, and the subscribers' queues.
Every run's events are `metadata` first and `end` last."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.stores.gateway import RunRow
from gateway.langgraph.serialize import iso

REPLAY_BUFFER = 256

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
    sink: Callable[[int, str, Any], None] | None = None  # the events to other workers

    @property
    def active(self) -> bool:
        return not self.done.is_set()

    def publish(self, event: str, data: Any) -> None:
        self.seq += 1
        item = (self.seq, event, data)
        self.buffer.append(item)
        if self.sink is not None:
            self.sink(*item)
        for queue in self.subscribers:
            queue.put_nowait(item)

    def subscribe(self, after: int | None = None) -> asyncio.Queue[Event]:
        """A queue of this run's events: those buffered after `after` (if given), then live.
        When the buffer no longer holds the event after `after`, the queue holds DeerFlow's
        `gap` frame alone (the client reloads the thread's state and rejoins after it)."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        if after is not None and self.buffer and self.buffer[0][0] > after + 1:
            queue.put_nowait((0, "gap", self._gap(after)))
            return queue
        if after is not None:
            for item in self.buffer:
                if item[0] > after:
                    queue.put_nowait(item)
        if self.active:
            self.subscribers.add(queue)
        elif after is None or not any(e == "end" and n > after for n, e, _ in self.buffer):
            self._replay_end(queue)  # (a record read back from the store has no buffer)
        return queue

    def _gap(self, after: int) -> dict[str, Any]:
        return {
            "code": "stream_replay_gap",
            "run_id": self.run_id,
            "requested_event_id": str(after) if after else None,
            "earliest_available_event_id": str(self.buffer[0][0]),
            "latest_available_event_id": str(self.buffer[-1][0]),
            "recovery": "reload_durable_state",
        }

    def _replay_end(self, queue: asyncio.Queue[Event]) -> None:
        """A joiner of a finished run gets its final values (or error) and `end`."""
        if self.error is not None:
            queue.put_nowait((self.seq, "error", self.error))
        elif "values" in self.modes:
            queue.put_nowait((self.seq, "values", self.final_values))
        queue.put_nowait((self.seq, "end", None))

    def unsubscribe(self, queue: asyncio.Queue[Event]) -> None:
        self.subscribers.discard(queue)

    def row(self) -> RunRow:
        return RunRow(
            run_id=self.run_id,
            thread_id=self.thread_id,
            assistant_id=self.assistant_id,
            status=self.status,
            created_at=self.created_at,
            updated_at=self.updated_at,
            modes=self.modes,
            metadata=self.metadata,
            kwargs=self.kwargs,
            multitask_strategy=self.multitask_strategy,
            error=self.error,
            values=self.final_values,
        )

    @classmethod
    def from_row(cls, row: RunRow) -> RunRecord:
        """A run this process does not run: finished (`done` set) unless its row says not."""
        rec = cls(
            run_id=row.run_id,
            thread_id=row.thread_id,
            assistant_id=row.assistant_id,
            modes=row.modes,
            metadata=row.metadata,
            kwargs=row.kwargs,
            multitask_strategy=row.multitask_strategy,
            created_at=row.created_at,
        )
        rec.settle(row)
        return rec

    def settle(self, row: RunRow) -> None:
        """Take the stored state of a run of another process; when it ended, end it here."""
        self.status, self.updated_at = row.status, row.updated_at
        self.error, self.final_values = row.error, row.values
        if row.finished and self.active:
            for queue in self.subscribers:
                self._replay_end(queue)
            self.subscribers.clear()
            self.done.set()

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "thread_id": self.thread_id,
            "assistant_id": self.assistant_id,
            "status": self.status,
            "metadata": self.metadata,
            "kwargs": self.kwargs,
            "multitask_strategy": self.multitask_strategy,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "error": self.error["message"] if self.error else None,
        }
