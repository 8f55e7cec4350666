"""Budgets: per person, per person of a role, per chat, per channel; by day or month (UTC); in
tokens or cost. Summed from the usage store, so every worker on one PostgreSQL database draws
on the same budget.

The rule, checked twice:

- **before a run starts**: every budget that applies is summed; at `warn_at` (80 %) the reply
  carries one short warning (once per budget and period, across workers); at 100 % a budget
  with `at_limit: fallback` runs the turn on `usage.fallback_model`, one with `refuse` answers
  the refusal instead (when it resets, who can raise it) and no model is called;
- **before each further model call of the run** (the next step of the tool loop, a subagent's
  step, a summary): the `refuse` budgets are summed again; at 100 % the call is not made and the
  run ends with the refusal. A model call already under way always finishes.

Exactness: this worker's calls are written before each sum (`Meter.flush`). In one process,
calls of runs that passed their check at the same moment are not yet counted by each other, so
N runs racing on one budget overshoot it by at most N model calls, never more. With workers on
Redis (`holds`, bot/cluster/spend_holds.py) each call is also held there until its row is
written, so racing runs on any number of workers overshoot by less than one call (docs/usage.md).
"""

from __future__ import annotations

import asyncio
import calendar
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from agent.usage import UsageRefused, UsageScope
from bot import texts
from bot.stores.usage import UsageRow, UsageStore
from bot.usage.config import Budget, UsageConfig
from bot.usage.meter import Meter

POLL = 0.05  # seconds between asks while the calls in flight leave no room


class Holds(Protocol):
    """Room held for model calls in flight, across workers (bot/cluster/spend_holds.py)."""

    async def written(self, name: str) -> int: ...
    async def admit(
        self, name: str, limit: float, spent: float, hold: str, written: int
    ) -> str: ...
    async def release(self, name: str, hold: str, amount: float | None) -> None: ...


@dataclass(frozen=True, slots=True)
class Payer:
    """Whom a run is for."""

    person: str
    role: str
    chat: str  # the chat's conversation key without a topic: `channel:[workspace/]chat_id`
    channel: str


@dataclass(frozen=True, slots=True)
class Verdict:
    model: str | None  # the model to run on (the fallback, past a `fallback` budget)
    refusal: str = ""
    notes: tuple[str, ...] = ()


def period_start(period: str, at: float) -> str:
    day = time.strftime("%Y-%m-%d", time.gmtime(at))
    return day[:8] + "01" if period == "month" else day


def resets_at(period: str, at: float) -> str:
    t = time.gmtime(at)
    if period == "month":
        year, month = (t.tm_year + 1, 1) if t.tm_mon == 12 else (t.tm_year, t.tm_mon + 1)
        return texts.budget_resets(f"{year:04d}-{month:02d}-01", month=True)
    next_day = time.gmtime(calendar.timegm((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0)) + 86400)
    return texts.budget_resets(time.strftime("%Y-%m-%d", next_day), month=False)


class Budgets:
    def __init__(
        self,
        config: Callable[[], UsageConfig],
        store: UsageStore,
        meter: Meter,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config  # read per run: budgets change live
        self.store = store
        self.meter = meter
        self.clock = clock
        self._runs: dict[str, Payer] = {}  # running runs' payers, for the in-run check
        self.holds: Holds | None = None  # calls in flight on every worker (Redis), else None
        self._held: dict[str, dict[str, Budget]] = {}  # a run's holds: name -> budget
        self._tasks: set[asyncio.Task[None]] = set()
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        self.poll = POLL

    def applying(self, payer: Payer) -> list[Budget]:
        wanted = {
            "person": payer.person,
            "role": payer.role,
            "chat": payer.chat,
            "channel": payer.channel,
        }
        return [b for b in self.config().budgets if wanted[b.scope] == b.name]

    async def spent(self, budget: Budget, payer: Payer) -> float:
        scope, value = {
            "person": ("person", payer.person),
            "role": ("person", payer.person),  # a role's budget is each of its people's
            "chat": ("chat", payer.chat),
            "channel": ("channel", payer.channel),
        }[budget.scope]
        totals = await self.store.total(scope, value, period_start(budget.period, self.clock()))
        return float(totals.tokens) if budget.tokens is not None else totals.cost

    async def verdict(self, payer: Payer, model: str | None) -> Verdict:
        budgets = self.applying(payer)
        if not budgets:
            return Verdict(model)
        await self.meter.flush()
        cfg, now, notes = self.config(), self.clock(), []
        for budget in budgets:
            used = await self.spent(budget, payer)
            whose = texts.budget_whose(budget.scope, budget.name)
            if used >= budget.limit:
                resets = resets_at(budget.period, now)
                if budget.at_limit == "fallback" and cfg.fallback_model:
                    model = cfg.fallback_model
                    notes.append(texts.budget_fallback(whose, budget.period, model, resets))
                    continue
                limit = texts.amount(budget.limit, self._unit(budget))
                return Verdict(
                    model, refusal=texts.budget_refused(whose, budget.period, limit, resets)
                )
            if used >= cfg.warn_at * budget.limit and await self._first_warning(budget, payer, now):
                left = texts.amount(budget.limit - used, self._unit(budget))
                percent = int(used * 100 // budget.limit)
                notes.append(texts.budget_warning(whose, budget.period, percent, left))
        return Verdict(model, notes=tuple(notes))

    async def _first_warning(self, budget: Budget, payer: Payer, now: float) -> bool:
        return await self.store.warn_once(self.hold_name(budget, payer, now), now)

    def _unit(self, budget: Budget) -> str:
        return "tokens" if budget.tokens is not None else self.config().currency

    # the in-run check ----------------------------------------------------------------------

    def begin(self, run_id: str, payer: Payer) -> None:
        self._runs[run_id] = payer

    def end(self, run_id: str) -> None:
        self._runs.pop(run_id, None)
        if self._held.get(run_id):
            task = asyncio.get_running_loop().create_task(self._unhold(run_id), name="usage-unhold")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _unhold(self, run_id: str) -> None:
        """A run ended: its calls' rows go in first (releasing their holds), then what is still
        held (a call that failed, never counted) is let go."""
        await self.meter.flush()
        for name in self._held.pop(run_id, {}):
            if self.holds is not None:
                await self.holds.release(name, run_id, None)

    async def check(self, scope: UsageScope) -> None:
        """Before each model call of a run: a `refuse` budget at 100 % stops it (UsageRefused);
        with pooled holds (Redis), the call also waits for room beside the calls in flight."""
        payer = self._runs.get(scope.run_id)
        if payer is None:
            return
        refusing = [b for b in self.applying(payer) if b.at_limit == "refuse"]
        if not refusing:
            return
        now = self.clock()
        for budget in refusing:
            while (answer := await self._admit(budget, payer, scope.run_id, now)) == "wait":
                await self.sleep(self.poll)
            if answer == "full":
                whose = texts.budget_whose(budget.scope, budget.name)
                limit = texts.amount(budget.limit, self._unit(budget))
                resets = resets_at(budget.period, now)
                raise UsageRefused(texts.budget_refused(whose, budget.period, limit, resets))

    async def _admit(self, budget: Budget, payer: Payer, run_id: str, now: float) -> str:
        """`ok`, `wait` or `full`: the store's sum (this worker's calls written first), and on
        Redis the calls in flight on every worker (bot/cluster/spend_holds.py)."""
        await self.meter.flush()
        if self.holds is None:
            return "full" if await self.spent(budget, payer) >= budget.limit else "ok"
        name = self.hold_name(budget, payer, now)
        answer = "again"
        while answer == "again":  # a call was written between the sum and the ask
            written = await self.holds.written(name)
            spent = await self.spent(budget, payer)
            answer = await self.holds.admit(name, budget.limit, spent, run_id, written)
        if answer == "ok":
            self._held.setdefault(run_id, {})[name] = budget
        return answer

    @staticmethod
    def hold_name(budget: Budget, payer: Payer, now: float) -> str:
        subject = payer.person if budget.scope in ("person", "role") else budget.name
        return f"{budget.key}:{subject}:{period_start(budget.period, now)}"

    async def written(self, rows: list[UsageRow]) -> None:
        """The meter wrote these rows: their runs' holds are released (each call's size kept
        as the budget's largest when it is)."""
        if self.holds is None:
            return
        for row in rows:
            for name, budget in self._held.get(row.run_id, {}).items():
                amount = row.prompt + row.completion if budget.tokens is not None else row.cost
                await self.holds.release(name, row.run_id, float(amount))
