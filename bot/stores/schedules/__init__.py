"""Where schedules, their runs and each conversation's time zone are kept.

`ScheduleStore` is the async interface the service uses and its rules, once over a dialect
(agent/sql.py); the backends are sqlite.py (the service's database) and postgres.py
(bot/stores/build.py picks one). A due run is claimed in one transaction that moves the schedule
on only if it still stands at that due time and records the run (keyed by schedule and due
time): of two processes that see the same due run, exactly one claims it.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import Any, Literal

from agent.sql import Sql, put
from channels.base import ChatRef, UserRef

ScheduleState = Literal["active", "paused", "done", "cancelled"]
RunState = Literal["claimed", "queued", "delivered", "failed", "skipped"]
LIVE = ("active", "paused")
_LIVE = "('active', 'paused')"
MissedPolicy = Literal["run_once", "skip"]


@dataclass(frozen=True, slots=True)
class ScheduleSpec:
    """What a task is asked to do, for whom, where and on which schedule: a new one's and a
    stored one's."""

    chat: ChatRef
    creator: UserRef
    prompt: str
    kind: Literal["once", "cron"]
    tz: str
    label: str


@dataclass(frozen=True, slots=True)
class Schedule(ScheduleSpec):
    id: int
    next_run: float | None
    state: ScheduleState = "active"
    expr: str = ""
    missed: MissedPolicy = "run_once"
    fresh_thread: bool = False
    reason: str = ""
    last_run: float | None = None
    created_at: float = 0.0

    @property
    def creator_key(self) -> str:
        return f"{self.chat.channel}:{self.creator.id}"


@dataclass(frozen=True, slots=True)
class NewSchedule(ScheduleSpec):
    first_run: float
    expr: str = ""
    missed: MissedPolicy = "run_once"
    fresh_thread: bool = False


@dataclass(frozen=True, slots=True)
class Run:
    schedule_id: int
    due_at: float
    state: RunState
    late: bool = False
    reason: str = ""


def chat_key(chat: ChatRef) -> str:
    """The whole chat a conversation belongs to (its topic left out): limits and lists use it."""
    return chat.with_topic(None).key


def insert_values(new: NewSchedule, now: float) -> tuple[Any, ...]:
    """The values of a new schedule's row, in the column order both stores insert."""
    creator_key = f"{new.chat.channel}:{new.creator.id}"
    chat, creator = json.dumps(asdict(new.chat)), json.dumps(asdict(new.creator))
    where = (new.chat.key, chat_key(new.chat), chat, creator_key, creator)
    what = (new.prompt, new.kind, new.expr, new.tz, new.label, new.first_run, new.missed)
    return (*where, *what, new.fresh_thread, now, now)


SCHEDULES_TABLE = """
    id $id,
    conv_key TEXT NOT NULL,
    chat_key TEXT NOT NULL,
    chat TEXT NOT NULL,
    creator_key TEXT NOT NULL,
    creator TEXT NOT NULL,
    prompt TEXT NOT NULL,
    kind TEXT NOT NULL,
    expr TEXT NOT NULL DEFAULT '',
    tz TEXT NOT NULL,
    label TEXT NOT NULL,
    next_run $real,
    last_run $real,
    state TEXT NOT NULL,
    missed TEXT NOT NULL,
    fresh_thread $bool NOT NULL DEFAULT $false,
    reason TEXT NOT NULL DEFAULT '',
    created_at $real NOT NULL,
    updated_at $real NOT NULL"""  # the columns of the tables, bot/stores/schema.py
RUNS_TABLE = """
    schedule_id $bigint NOT NULL,
    due_at $real NOT NULL,
    state TEXT NOT NULL,
    late $bool NOT NULL DEFAULT $false,
    reason TEXT NOT NULL DEFAULT '',
    created_at $real NOT NULL,
    updated_at $real NOT NULL,
    PRIMARY KEY (schedule_id, due_at)"""
ZONES_TABLE = """
    conv_key TEXT PRIMARY KEY,
    tz TEXT NOT NULL,
    updated_at $real NOT NULL"""
UPDATABLE = {"prompt", "kind", "expr", "tz", "label", "next_run", "missed", "fresh_thread"}
COLUMNS = (
    "id, chat, creator, prompt, kind, tz, label, next_run, state, expr, missed,"
    " fresh_thread, reason, last_run, created_at"
)


RUN_COLUMNS = "schedule_id, due_at, state, late, reason"


class ScheduleStore:
    """The schedule store: its interface and its rules, over a dialect (`Sql`); a backend
    (sqlite.py, postgres.py) names the tables by `prefix`."""

    prefix = ""

    def __init__(self, sql: Sql) -> None:
        self.sql = sql
        self.table = f"{self.prefix}schedules"
        self.runs_table = f"{self.prefix}schedule_runs"
        self.zones = f"{self.prefix}chat_timezones"

    async def add(self, new: NewSchedule) -> Schedule:
        row = await self.sql.one(
            f"INSERT INTO {self.table}(conv_key, chat_key, chat, creator_key, creator, prompt,"
            " kind, expr, tz, label, next_run, state, missed, fresh_thread, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)"
            f" RETURNING {COLUMNS}",
            insert_values(new, time.time()),
        )
        assert row is not None
        return schedule_from_row(row)

    async def get(self, schedule_id: int) -> Schedule | None:
        row = await self.sql.one(f"SELECT {COLUMNS} FROM {self.table} WHERE id = ?", (schedule_id,))
        return schedule_from_row(row) if row else None

    async def for_chat(self, chat: str) -> list[Schedule]:
        return await self._select(f"chat_key = ? AND state IN {_LIVE} ORDER BY id", (chat,))

    async def all(self, limit: int = 200) -> list[Schedule]:
        return await self._select("true ORDER BY id DESC LIMIT ?", (limit,))

    async def count_live(self, *, chat: str = "", creator_key: str = "") -> int:
        column, value = ("chat_key", chat) if chat else ("creator_key", creator_key)
        row = await self.sql.one(
            f"SELECT COUNT(*) FROM {self.table} WHERE {column} = ? AND state IN {_LIVE}", (value,)
        )
        return int(row[0]) if row else 0

    async def set_state(
        self,
        schedule_id: int,
        state: ScheduleState,
        reason: str = "",
        next_run: float | None = None,
    ) -> Schedule | None:
        move = "" if next_run is None else ", next_run = ?"
        args = (state, reason) + (() if next_run is None else (next_run,))
        row = await self.sql.one(
            f"UPDATE {self.table} SET state = ?, reason = ?{move}, updated_at = ?"
            f" WHERE id = ? RETURNING {COLUMNS}",
            (*args, time.time(), schedule_id),
        )
        return schedule_from_row(row) if row else None

    async def due(self, now: float) -> list[Schedule]:
        return await self._select("state = 'active' AND next_run <= ? ORDER BY next_run", (now,))

    async def next_due(self) -> float | None:
        row = await self.sql.one(f"SELECT MIN(next_run) FROM {self.table} WHERE state = 'active'")
        return float(row[0]) if row and row[0] is not None else None

    async def claim(
        self,
        schedule: Schedule,
        next_run: float | None,
        *,
        run_state: RunState,
        late: bool,
        now: float,
    ) -> bool:
        """Record the run due at `schedule.next_run` and move the schedule on, atomically: the
        schedule moves only if it still stands at that due time, and only then is the run
        recorded, so of two processes claiming the same due run exactly one does (the second
        waits for the first's write lock, then finds the schedule moved on)."""
        state = "active" if next_run is not None else "done"

        async def work(tx: Sql) -> bool:
            moved = await tx.execute(
                f"UPDATE {self.table} SET next_run = ?, last_run = ?, state = ?, updated_at = ?"
                " WHERE id = ? AND next_run = ? AND state = 'active'",
                (next_run, schedule.next_run, state, now, schedule.id, schedule.next_run),
            )
            if moved != 1:
                return False  # another process claimed it (or it changed meanwhile)
            await tx.execute(
                f"INSERT INTO {self.runs_table}(schedule_id, due_at, state, late, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (schedule_id, due_at)"
                " DO NOTHING",
                (schedule.id, schedule.next_run, run_state, late, now, now),
            )
            return True

        return await self.sql.transaction(work)

    async def runs(self, state: RunState) -> list[Run]:
        rows = await self.sql.all(
            f"SELECT {RUN_COLUMNS} FROM {self.runs_table} WHERE state = ? ORDER BY due_at",
            (state,),
        )
        return [run_from_row(r) for r in rows]

    async def runs_of(self, schedule_id: int, limit: int = 20) -> list[Run]:
        rows = await self.sql.all(
            f"SELECT {RUN_COLUMNS} FROM {self.runs_table}"
            " WHERE schedule_id = ? ORDER BY due_at DESC LIMIT ?",
            (schedule_id, limit),
        )
        return [run_from_row(r) for r in rows]

    async def set_run(self, run: Run, state: RunState, reason: str = "") -> None:
        await self.sql.execute(
            f"UPDATE {self.runs_table} SET state = ?, reason = ?, updated_at = ?"
            " WHERE schedule_id = ? AND due_at = ?",
            (state, reason, time.time(), run.schedule_id, run.due_at),
        )

    async def timezone(self, conv_key: str) -> str | None:
        row = await self.sql.one(f"SELECT tz FROM {self.zones} WHERE conv_key = ?", (conv_key,))
        return str(row[0]) if row else None

    async def set_timezone(self, conv_key: str, tz: str) -> None:
        await put(
            self.sql, self.zones, ("conv_key", conv_key), {"tz": tz, "updated_at": time.time()}
        )

    async def for_conversation(self, conv_key: str) -> list[Schedule]:
        return await self._select("conv_key = ? ORDER BY id", (conv_key,))

    async def update(self, schedule_id: int, **fields: Any) -> Schedule | None:
        """Change stored fields (prompt, kind, expr, tz, label, next_run, missed, fresh_thread)."""
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        if "fresh_thread" in fields:
            fields["fresh_thread"] = bool(fields["fresh_thread"])
        sets = "".join(f"{name} = ?, " for name in fields)
        row = await self.sql.one(
            f"UPDATE {self.table} SET {sets}updated_at = ? WHERE id = ? RETURNING {COLUMNS}",
            (*fields.values(), time.time(), schedule_id),
        )
        return schedule_from_row(row) if row else None

    async def add_run(self, schedule_id: int, due_at: float, now: float) -> bool:
        """Record an extra run (trigger now) without moving the schedule; False if it exists."""
        inserted = await self.sql.execute(
            f"INSERT INTO {self.runs_table}(schedule_id, due_at, state, created_at, updated_at)"
            " VALUES (?, ?, 'claimed', ?, ?) ON CONFLICT (schedule_id, due_at) DO NOTHING",
            (schedule_id, due_at, now, now),
        )
        return inserted == 1

    async def _select(self, where: str, args: tuple[Any, ...]) -> list[Schedule]:
        rows = await self.sql.all(f"SELECT {COLUMNS} FROM {self.table} WHERE {where}", args)
        return [schedule_from_row(r) for r in rows]


def schedule_from_row(row: tuple[Any, ...]) -> Schedule:
    (
        sid,
        chat,
        creator,
        prompt,
        kind,
        tz,
        label,
        next_run,
        state,
        expr,
        missed,
        fresh,
        reason,
        last_run,
        created,
    ) = row
    return Schedule(
        id=int(sid),
        chat=ChatRef(**json.loads(chat)),
        creator=UserRef.from_json(json.loads(creator)),
        prompt=prompt,
        kind=kind,
        tz=tz,
        label=label,
        next_run=next_run,
        state=state,
        expr=expr,
        missed=missed,
        fresh_thread=bool(fresh),
        reason=reason,
        last_run=last_run,
        created_at=created,
    )


def run_from_row(row: tuple[Any, ...]) -> Run:
    sid, due, state, late, reason = row
    return Run(int(sid), float(due), state, bool(late), reason or "")
