"""The usage store: one row per model call (tokens, cost, and whom it was for), sums over a
period for budgets and `/usage`, a thread's totals for the Gateway, grouped reports for
`/api/usage`, and the once-per-period warning marks. Each write also adds to the day's sums
per person, chat and channel (the days table, one upsert each), so a budget's check reads at
most 31 rows. Backends: `sqlite.py` (tables `usage`, `usage_days`, `usage_warned` in the
service's SQLite file), `postgres.py` (`antler_usage`, `antler_usage_days`,
`antler_usage_warned`, shared by every worker: budgets are pooled).

Days are UTC dates (`YYYY-MM-DD`); a month is the days starting `YYYY-MM`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from agent.sql import Sql

# columns of the usage table, once (bot/stores/schema.py renders the types)
USAGE_TABLE = """
    id $id,
    at $real NOT NULL,
    day TEXT NOT NULL,
    run_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    person TEXT NOT NULL,
    account TEXT NOT NULL,
    chat TEXT NOT NULL,
    channel TEXT NOT NULL,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL,
    prompt $bigint NOT NULL,
    completion $bigint NOT NULL,
    cached $bigint NOT NULL,
    reasoning $bigint NOT NULL,
    cost $real NOT NULL,
    estimated $bool NOT NULL"""

# the sums per person, chat and channel and UTC day, kept with every write: a budget's check
# reads a row a day (a month: 31 at most), however many calls there were
DAYS_TABLE = """
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    day TEXT NOT NULL,
    prompt $bigint NOT NULL,
    completion $bigint NOT NULL,
    cached $bigint NOT NULL,
    reasoning $bigint NOT NULL,
    cost $real NOT NULL,
    calls $bigint NOT NULL,
    estimated $bigint NOT NULL,
    PRIMARY KEY (scope, subject, day)"""

WARNED_TABLE = """
    mark TEXT PRIMARY KEY,
    at $real NOT NULL"""

INDEXES = """
CREATE INDEX {t}_person_day ON {t}(person, day);
CREATE INDEX {t}_chat_day ON {t}(chat, day);
CREATE INDEX {t}_channel_day ON {t}(channel, day);
CREATE INDEX {t}_thread ON {t}(thread_id);
CREATE INDEX {t}_day ON {t}(day)"""

# what a report may group by and filter on (the column names themselves)
GROUPS = ("person", "chat", "channel", "model", "day", "purpose", "thread_id")
SCOPES = ("person", "chat", "channel", "thread_id", "run_id")
DAILY = ("person", "chat", "channel")  # the scopes kept in the days table


@dataclass(frozen=True, slots=True)
class UsageRow:
    at: float
    day: str
    run_id: str
    thread_id: str
    person: str
    account: str
    chat: str
    channel: str
    model: str
    purpose: str
    prompt: int
    completion: int
    cached: int
    reasoning: int
    cost: float
    estimated: bool


ROW_COLUMNS = ", ".join(f.name for f in fields(UsageRow))


@dataclass(frozen=True, slots=True)
class Totals:
    prompt: int = 0
    completion: int = 0
    cached: int = 0
    reasoning: int = 0
    cost: float = 0.0
    calls: int = 0
    estimated: int = 0  # calls whose counts are estimates

    @property
    def tokens(self) -> int:
        return self.prompt + self.completion

    def __add__(self, other: Totals) -> Totals:
        return Totals(
            self.prompt + other.prompt,
            self.completion + other.completion,
            self.cached + other.cached,
            self.reasoning + other.reasoning,
            self.cost + other.cost,
            self.calls + other.calls,
            self.estimated + other.estimated,
        )


_SUMS = (
    "COALESCE(SUM(prompt), 0), COALESCE(SUM(completion), 0), COALESCE(SUM(cached), 0),"
    " COALESCE(SUM(reasoning), 0), COALESCE(SUM(cost), 0), COUNT(*),"
    " COALESCE(SUM(CASE WHEN estimated THEN 1 ELSE 0 END), 0)"
)


_DAY_SUMS = (
    "COALESCE(SUM(prompt), 0), COALESCE(SUM(completion), 0), COALESCE(SUM(cached), 0),"
    " COALESCE(SUM(reasoning), 0), COALESCE(SUM(cost), 0), COALESCE(SUM(calls), 0),"
    " COALESCE(SUM(estimated), 0)"
)


def totals_of(row: Sequence[Any]) -> Totals:
    p, c, ca, r, cost, calls, est = row
    return Totals(int(p), int(c), int(ca), int(r), float(cost), int(calls), int(est))


@dataclass(frozen=True, slots=True)
class Report:
    """`/api/usage`'s question: group by these columns, within [since, until) days."""

    group_by: tuple[str, ...] = ("person",)
    since: str = ""  # a day, inclusive ("" open)
    until: str = ""  # a day, exclusive
    person: str = ""
    chat: str = ""
    model: str = ""
    channel: str = ""
    thread_id: str = ""


class UsageStore:
    """The rules over a dialect (`Sql`); backends name the tables."""

    table = "usage"
    days_table = "usage_days"
    warned_table = "usage_warned"

    def __init__(self, sql: Sql) -> None:
        self.sql = sql

    async def add(self, rows: Sequence[UsageRow]) -> None:
        """The rows and their days' sums, in one transaction (the sums' keys in one order, so
        workers adding at once wait for each other, never deadlock)."""
        marks = ", ".join("?" for _ in fields(UsageRow))
        days: dict[tuple[str, str, str], Totals] = {}
        for row in rows:
            one = Totals(
                row.prompt,
                row.completion,
                row.cached,
                row.reasoning,
                row.cost,
                1,
                int(row.estimated),
            )
            for scope in DAILY:
                key = (scope, getattr(row, scope), row.day)
                days[key] = days.get(key, Totals()) + one
        t = self.days_table
        sums = ", ".join(
            f"{c} = {t}.{c} + excluded.{c}"
            for c in ("prompt", "completion", "cached", "reasoning", "cost", "calls", "estimated")
        )

        async def work(sql: Sql) -> None:
            await sql.many(
                f"INSERT INTO {self.table}({ROW_COLUMNS}) VALUES ({marks})",
                [tuple(getattr(row, f.name) for f in fields(UsageRow)) for row in rows],
            )
            await sql.many(
                f"INSERT INTO {t}(scope, subject, day, prompt, completion, cached, reasoning,"
                " cost, calls, estimated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT (scope, subject, day) DO UPDATE SET {sums}",
                [
                    (
                        *key,
                        v.prompt,
                        v.completion,
                        v.cached,
                        v.reasoning,
                        v.cost,
                        v.calls,
                        v.estimated,
                    )
                    for key, v in sorted(days.items())
                ],
            )

        await self.sql.transaction(work)

    async def total(self, scope: str, value: str, since_day: str = "") -> Totals:
        """The sums of one person, chat, channel, thread or run since a day (inclusive); a
        chat's forum topics (`chat:topic`) count for the chat."""
        if scope not in SCOPES:
            raise ValueError(f"unknown usage scope {scope!r}")
        if scope in DAILY:
            table, column, sums, first = self.days_table, "subject", _DAY_SUMS, "scope = ? AND "
            args: list[Any] = [scope]
        else:
            table, column, sums, first, args = self.table, scope, _SUMS, "", []
        match = f"{column} = ?"
        args.append(value)
        if scope == "chat":
            match = f"({column} = ? OR substr({column}, 1, ?) = ?)"
            args += [len(value) + 1, value + ":"]
        row = await self.sql.one(
            f"SELECT {sums} FROM {table} WHERE {first}{match} AND day >= ?", (*args, since_day)
        )
        return totals_of(row) if row else Totals()

    async def report(self, query: Report) -> list[tuple[tuple[str, ...], Totals]]:
        for column in query.group_by:
            if column not in GROUPS:
                raise ValueError(f"cannot group by {column!r} (one of {', '.join(GROUPS)})")
        where, args = ["1 = 1"], []
        if query.since:
            where.append("day >= ?")
            args.append(query.since)
        if query.until:
            where.append("day < ?")
            args.append(query.until)
        for column in ("person", "chat", "model", "channel", "thread_id"):
            if getattr(query, column):
                where.append(f"{column} = ?")
                args.append(getattr(query, column))
        keys = ", ".join(query.group_by)
        rows = await self.sql.all(
            f"SELECT {keys}, {_SUMS} FROM {self.table} WHERE {' AND '.join(where)}"
            f" GROUP BY {keys} ORDER BY {keys}",
            args,
        )
        width = len(query.group_by)
        return [(tuple(str(v) for v in row[:width]), totals_of(row[width:])) for row in rows]

    async def count_runs(self, thread_id: str) -> int:
        row = await self.sql.one(
            f"SELECT COUNT(DISTINCT run_id) FROM {self.table} WHERE thread_id = ? AND run_id <> ''",
            (thread_id,),
        )
        return int(row[0]) if row else 0

    async def warn_once(self, mark: str, at: float) -> bool:
        """True the first time `mark` (a budget and its period) is seen, across workers."""
        changed = await self.sql.execute(
            f"INSERT INTO {self.warned_table}(mark, at) VALUES (?, ?)"
            " ON CONFLICT (mark) DO NOTHING",
            (mark, at),
        )
        return changed == 1
