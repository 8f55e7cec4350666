"""The Gateway's durable records: the threads created over the API and their runs.

`GatewayRecords` is the interface the Gateway uses and its rules, once over a dialect
(agent/sql.py); sqlite.py keeps the records in the service's SQLite file (tables `api_threads`
and `api_runs`, bot/db.py), postgres.py on PostgreSQL; bot/stores/build.py picks.

Only records are kept: a run's live event stream is in the process that runs it
(gateway/langgraph/run_manager.py; with the Redis bus, also in Redis: bot/cluster/run_events.py).
A thread keeps its newest `KEEP_RUNS` runs; deleting the thread deletes them. A run still
`pending` or `running` when its process stopped (a crash, a kill) can never finish:
`settle_orphans()`, called when the stores open (and, on PostgreSQL, whenever a process
notices that another died), marks it `error` with `ORPHANED` as its message.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent.sql import Sql

KEEP_RUNS = 100
UNFINISHED = ("pending", "running")
ORPHANED = {
    "name": "ServiceStopped",
    "message": "the service stopped while this run was in progress; start it again",
}


@dataclass(frozen=True)
class ThreadRecord:
    thread_id: str
    created_at: float
    updated_at: float
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunRow:
    """A run as stored: what `GET /runs/{id}` shows, and the final values `/join` returns."""

    run_id: str
    thread_id: str
    assistant_id: str
    status: str
    created_at: float
    updated_at: float
    modes: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)
    multitask_strategy: str = "reject"
    error: dict[str, str] | None = None
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.status not in UNFINISHED


THREADS_TABLE = """
    thread_id TEXT PRIMARY KEY,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at $real NOT NULL,
    updated_at $real NOT NULL"""  # the columns of the tables, bot/stores/schema.py
RUNS_TABLE = """
    seq $id,
    run_id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    assistant_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at $real NOT NULL,
    updated_at $real NOT NULL,
    modes TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    kwargs TEXT NOT NULL DEFAULT '{}',
    multitask_strategy TEXT NOT NULL DEFAULT 'reject',
    error TEXT NOT NULL DEFAULT '',
    run_values TEXT NOT NULL DEFAULT '{}'"""
THREAD_COLUMNS = "thread_id, created_at, updated_at, metadata"
RUN_COLUMNS = (
    "run_id, thread_id, assistant_id, status, created_at, updated_at, modes, metadata,"
    " kwargs, multitask_strategy, error, run_values"
)


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def thread_from_row(row: tuple[Any, ...]) -> ThreadRecord:
    tid, created, updated, metadata = row
    return ThreadRecord(str(tid), float(created), float(updated), _load(metadata, {}))


def run_from_row(row: tuple[Any, ...]) -> RunRow:
    (
        rid,
        tid,
        assistant,
        status,
        created,
        updated,
        modes,
        metadata,
        kwargs,
        strategy,
        error,
        values,
    ) = row
    return RunRow(
        run_id=str(rid),
        thread_id=str(tid),
        assistant_id=str(assistant),
        status=str(status),
        created_at=float(created),
        updated_at=float(updated),
        modes=_load(modes, []),
        metadata=_load(metadata, {}),
        kwargs=_load(kwargs, {}),
        multitask_strategy=str(strategy),
        error=_load(error, None) if error else None,
        values=_load(values, {}),
    )


def run_args(run: RunRow) -> tuple[Any, ...]:
    """`run` as the values of `RUN_COLUMNS`, in order."""
    return (
        run.run_id,
        run.thread_id,
        run.assistant_id,
        run.status,
        run.created_at,
        run.updated_at,
        dump(run.modes),
        dump(run.metadata),
        dump(run.kwargs),
        run.multitask_strategy,
        dump(run.error) if run.error else "",
        dump(run.values),
    )


def _load(raw: Any, default: Any) -> Any:
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else default
    except ValueError:
        return default
    return value if isinstance(value, type(default)) or default is None else default


class GatewayRecords:
    """The records' interface and rules over a dialect (`Sql`); a backend names the tables by
    `prefix` and says which unfinished runs are orphans (`_orphans`) and what a run row carries
    besides."""

    prefix = ""

    def __init__(self, sql: Sql) -> None:
        self.sql = sql
        self.threads_table = f"{self.prefix}api_threads"
        self.runs_table = f"{self.prefix}api_runs"

    async def thread(self, thread_id: str) -> ThreadRecord | None:
        row = await self.sql.one(
            f"SELECT {THREAD_COLUMNS} FROM {self.threads_table} WHERE thread_id = ?", (thread_id,)
        )
        return thread_from_row(row) if row else None

    async def threads(self) -> list[ThreadRecord]:
        rows = await self.sql.all(f"SELECT {THREAD_COLUMNS} FROM {self.threads_table}")
        return [thread_from_row(row) for row in rows]

    async def create_thread(self, thread_id: str, metadata: dict[str, Any]) -> None:
        """Insert the thread unless it exists (then nothing changes)."""
        now = time.time()
        await self.sql.execute(
            f"INSERT INTO {self.threads_table}(thread_id, metadata, created_at, updated_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (thread_id) DO NOTHING",
            (thread_id, dump(metadata), now, now),
        )

    async def put_thread(self, thread_id: str, metadata: dict[str, Any], created_at: float) -> None:
        """Insert the thread or replace its metadata; `updated_at` becomes now."""
        await self.sql.execute(
            f"INSERT INTO {self.threads_table}(thread_id, metadata, created_at, updated_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (thread_id) DO UPDATE SET"
            " metadata = excluded.metadata, updated_at = excluded.updated_at",
            (thread_id, dump(metadata), created_at, time.time()),
        )

    async def touch_thread(self, thread_id: str) -> None:
        await self.sql.execute(
            f"UPDATE {self.threads_table} SET updated_at = ? WHERE thread_id = ?",
            (time.time(), thread_id),
        )

    async def delete_thread(self, thread_id: str) -> None:
        """The thread's record and all its runs."""

        async def work(tx: Sql) -> None:  # both go, or neither
            await tx.execute(f"DELETE FROM {self.runs_table} WHERE thread_id = ?", (thread_id,))
            await tx.execute(f"DELETE FROM {self.threads_table} WHERE thread_id = ?", (thread_id,))

        await self.sql.transaction(work)

    async def add_run(self, run: RunRow) -> None:
        """Record a new run; the thread's runs beyond the newest `KEEP_RUNS` go."""
        extra = self._run_extra()
        columns = RUN_COLUMNS + "".join(f", {c}" for c in extra)
        marks = ", ".join("?" * (len(RUN_COLUMNS.split(",")) + len(extra)))

        async def work(tx: Sql) -> None:
            await tx.execute(
                f"INSERT INTO {self.runs_table}({columns}) VALUES ({marks})"
                " ON CONFLICT (run_id) DO NOTHING",
                (*run_args(run), *extra.values()),
            )
            await tx.execute(
                f"DELETE FROM {self.runs_table} WHERE thread_id = ? AND seq <= (SELECT seq FROM"
                f" {self.runs_table} WHERE thread_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                (run.thread_id, run.thread_id, KEEP_RUNS),
            )

        await self._together(work)

    async def set_run(
        self,
        run_id: str,
        status: str,
        *,
        error: dict[str, str] | None = None,
        values: dict[str, Any] | None = None,
        at: float | None = None,
    ) -> None:
        sets, args = run_changes(status, error, values, at)
        await self.sql.execute(
            f"UPDATE {self.runs_table} SET {sets} WHERE run_id = ?", (*args, run_id)
        )

    async def run(self, thread_id: str, run_id: str) -> RunRow | None:
        row = await self.sql.one(
            f"SELECT {RUN_COLUMNS} FROM {self.runs_table} WHERE run_id = ? AND thread_id = ?",
            (run_id, thread_id),
        )
        return run_from_row(row) if row else None

    async def runs(self, thread_id: str, limit: int = KEEP_RUNS) -> list[RunRow]:
        """The thread's runs, newest first."""
        rows = await self.sql.all(
            f"SELECT {RUN_COLUMNS} FROM {self.runs_table}"
            " WHERE thread_id = ? ORDER BY seq DESC LIMIT ?",
            (thread_id, limit),
        )
        return [run_from_row(row) for row in rows]

    async def settle_orphans(self) -> int:
        """Mark the unfinished runs of processes that stopped `error`; returns how many."""
        orphans, args = self._orphans()
        return await self.sql.execute(
            f"UPDATE {self.runs_table} SET status = 'error', error = ?, updated_at = ?"
            f" WHERE status IN ('pending', 'running'){orphans}",
            (dump(ORPHANED), time.time(), *args),
        )

    # what the backends spell their own way (here: one process, every row its own) ----------

    def _run_extra(self) -> dict[str, Any]:
        """Extra columns (and values) a new run row carries."""
        return {}

    def _orphans(self) -> tuple[str, tuple[Any, ...]]:
        """A condition (and its values) narrowing the unfinished runs to orphans: none here,
        since at start every unfinished run is one."""
        return "", ()

    async def _together(self, work: Callable[[Sql], Awaitable[None]]) -> None:
        """Run `work`'s statements in one transaction."""
        await self.sql.transaction(work)


def run_changes(
    status: str, error: dict[str, str] | None, values: dict[str, Any] | None, at: float | None
) -> tuple[str, list[Any]]:
    """The `SET` list (with ? marks) and its values for a status change (`at`: now)."""
    sets, args = ["status = ?", "updated_at = ?"], [status, at or time.time()]
    if error is not None:
        sets.append("error = ?")
        args.append(dump(error))
    if values is not None:
        sets.append("run_values = ?")
        args.append(dump(values))
    return ", ".join(sets), args
