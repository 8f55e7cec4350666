"""Where schedules, their runs and each conversation's time zone are kept.

`ScheduleStore` is the async interface the service uses; `SqliteScheduleStore` is the embedded
implementation on the service's database, `bot.stores.pg_schedules.PostgresScheduleStore` the
one on PostgreSQL (bot/stores picks one). A due run is claimed in one transaction that moves the
schedule on only if it still stands at that due time and records the run (keyed by schedule and
due time): of two processes that see the same due run, exactly one claims it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

from bot.schedules.config import MissedPolicy
from channels.base import ChatRef, UserRef

ScheduleState = Literal["active", "paused", "done", "cancelled"]
RunState = Literal["claimed", "queued", "delivered", "failed", "skipped"]
LIVE = ("active", "paused")


@dataclass(frozen=True, slots=True)
class Schedule:
    id: int
    chat: ChatRef
    creator: UserRef
    prompt: str
    kind: Literal["once", "cron"]
    tz: str
    label: str
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
class NewSchedule:
    chat: ChatRef
    creator: UserRef
    prompt: str
    kind: Literal["once", "cron"]
    tz: str
    label: str
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


class ScheduleStore(Protocol):
    async def add(self, new: NewSchedule) -> Schedule: ...
    async def get(self, schedule_id: int) -> Schedule | None: ...
    async def for_chat(self, chat: str) -> list[Schedule]: ...
    async def all(self, limit: int = 200) -> list[Schedule]: ...
    async def count_live(self, *, chat: str = "", creator_key: str = "") -> int: ...
    async def set_state(
        self,
        schedule_id: int,
        state: ScheduleState,
        reason: str = "",
        next_run: float | None = None,
    ) -> Schedule | None: ...
    async def due(self, now: float) -> list[Schedule]: ...
    async def next_due(self) -> float | None: ...
    async def claim(
        self,
        schedule: Schedule,
        next_run: float | None,
        *,
        run_state: RunState,
        late: bool,
        now: float,
    ) -> bool: ...
    async def runs(self, state: RunState) -> list[Run]: ...
    async def runs_of(self, schedule_id: int, limit: int = 20) -> list[Run]: ...
    async def set_run(self, run: Run, state: RunState, reason: str = "") -> None: ...
    async def timezone(self, conv_key: str) -> str | None: ...
    async def set_timezone(self, conv_key: str, tz: str) -> None: ...
    async def for_conversation(self, conv_key: str) -> list[Schedule]: ...
    async def update(self, schedule_id: int, **fields: Any) -> Schedule | None: ...
    async def add_run(self, schedule_id: int, due_at: float, now: float) -> bool: ...


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


UPDATABLE = {"prompt", "kind", "expr", "tz", "label", "next_run", "missed", "fresh_thread"}
COLUMNS = (
    "id, chat, creator, prompt, kind, tz, label, next_run, state, expr, missed,"
    " fresh_thread, reason, last_run, created_at"
)


class SqliteScheduleStore:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    async def add(self, new: NewSchedule) -> Schedule:
        now = time.time()
        cur = self.db.execute(
            "INSERT INTO schedules(conv_key, chat_key, chat, creator_key, creator, prompt, kind,"
            " expr, tz, label, next_run, state, missed, fresh_thread, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)",
            insert_values(new, now),
        )
        found = await self.get(int(cur.lastrowid or 0))
        assert found is not None
        return found

    async def get(self, schedule_id: int) -> Schedule | None:
        row = self.db.execute(
            f"SELECT {COLUMNS} FROM schedules WHERE id = ?", (schedule_id,)
        ).fetchone()
        return schedule_from_row(row) if row else None

    async def for_chat(self, chat: str) -> list[Schedule]:
        return self._select("chat_key = ? AND state IN ('active', 'paused') ORDER BY id", (chat,))

    async def all(self, limit: int = 200) -> list[Schedule]:
        return self._select("1 ORDER BY id DESC LIMIT ?", (limit,))

    async def count_live(self, *, chat: str = "", creator_key: str = "") -> int:
        column, value = ("chat_key", chat) if chat else ("creator_key", creator_key)
        (n,) = self.db.execute(
            f"SELECT COUNT(*) FROM schedules WHERE {column} = ? AND state IN ('active', 'paused')",
            (value,),
        ).fetchone()
        return int(n)

    async def set_state(
        self,
        schedule_id: int,
        state: ScheduleState,
        reason: str = "",
        next_run: float | None = None,
    ) -> Schedule | None:
        if next_run is None:
            self.db.execute(
                "UPDATE schedules SET state = ?, reason = ?, updated_at = ? WHERE id = ?",
                (state, reason, time.time(), schedule_id),
            )
        else:
            self.db.execute(
                "UPDATE schedules SET state = ?, reason = ?, next_run = ?,"
                " updated_at = ? WHERE id = ?",
                (state, reason, next_run, time.time(), schedule_id),
            )
        return await self.get(schedule_id)

    async def due(self, now: float) -> list[Schedule]:
        return self._select("state = 'active' AND next_run <= ? ORDER BY next_run", (now,))

    async def next_due(self) -> float | None:
        (at,) = self.db.execute(
            "SELECT MIN(next_run) FROM schedules WHERE state = 'active'"
        ).fetchone()
        return float(at) if at is not None else None

    async def claim(
        self,
        schedule: Schedule,
        next_run: float | None,
        *,
        run_state: RunState,
        late: bool,
        now: float,
    ) -> bool:
        """Record the run due at `schedule.next_run` and move the schedule on, atomically."""
        state = "active" if next_run is not None else "done"
        self.db.execute("BEGIN IMMEDIATE")
        try:
            cur = self.db.execute(
                "UPDATE schedules SET next_run = ?, last_run = ?, state = ?, updated_at = ?"
                " WHERE id = ? AND next_run = ? AND state = 'active'",
                (next_run, schedule.next_run, state, now, schedule.id, schedule.next_run),
            )
            claimed = cur.rowcount == 1
            if claimed:
                self.db.execute(
                    "INSERT INTO schedule_runs(schedule_id, due_at, state, late, created_at,"
                    " updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (schedule.id, schedule.next_run, run_state, int(late), now, now),
                )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return claimed

    async def runs(self, state: RunState) -> list[Run]:
        rows = self.db.execute(
            "SELECT schedule_id, due_at, state, late, reason FROM"
            " schedule_runs WHERE state = ? ORDER BY due_at",
            (state,),
        )
        return [run_from_row(r) for r in rows.fetchall()]

    async def runs_of(self, schedule_id: int, limit: int = 20) -> list[Run]:
        rows = self.db.execute(
            "SELECT schedule_id, due_at, state, late, reason FROM"
            " schedule_runs WHERE schedule_id = ? ORDER BY due_at DESC"
            " LIMIT ?",
            (schedule_id, limit),
        )
        return [run_from_row(r) for r in rows.fetchall()]

    async def set_run(self, run: Run, state: RunState, reason: str = "") -> None:
        self.db.execute(
            "UPDATE schedule_runs SET state = ?, reason = ?, updated_at = ?"
            " WHERE schedule_id = ? AND due_at = ?",
            (state, reason, time.time(), run.schedule_id, run.due_at),
        )

    async def timezone(self, conv_key: str) -> str | None:
        row = self.db.execute(
            "SELECT tz FROM chat_timezones WHERE conv_key = ?", (conv_key,)
        ).fetchone()
        return str(row[0]) if row else None

    async def set_timezone(self, conv_key: str, tz: str) -> None:
        self.db.execute(
            "INSERT INTO chat_timezones(conv_key, tz, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT(conv_key) DO UPDATE SET tz = excluded.tz,"
            " updated_at = excluded.updated_at",
            (conv_key, tz, time.time()),
        )

    async def for_conversation(self, conv_key: str) -> list[Schedule]:
        return self._select("conv_key = ? ORDER BY id", (conv_key,))

    async def update(self, schedule_id: int, **fields: Any) -> Schedule | None:
        """Change stored fields (prompt, kind, expr, tz, label, next_run, missed, fresh_thread)."""
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        if fields:
            sets = ", ".join(f"{name} = ?" for name in fields)
            self.db.execute(
                f"UPDATE schedules SET {sets}, updated_at = ? WHERE id = ?",
                (*fields.values(), time.time(), schedule_id),
            )
        return await self.get(schedule_id)

    async def add_run(self, schedule_id: int, due_at: float, now: float) -> bool:
        """Record an extra run (trigger now) without moving the schedule; False if it exists."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO schedule_runs(schedule_id, due_at, state, created_at,"
            " updated_at) VALUES (?, ?, 'claimed', ?, ?)",
            (schedule_id, due_at, now, now),
        )
        return cur.rowcount == 1

    def _select(self, where: str, args: tuple[Any, ...]) -> list[Schedule]:
        rows = self.db.execute(f"SELECT {COLUMNS} FROM schedules WHERE {where}", args)
        return [schedule_from_row(r) for r in rows.fetchall()]


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
