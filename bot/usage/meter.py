"""The agent's usage sink: each model call's record priced, counted in the metrics, kept per run
(for the footer) and written to the usage store in the background, a few rows at a time.

`record` is called inline by the agent's callback, so it does no IO: the row waits in
`pending` and one writer task flushes it. Budgets call `flush()` before they sum, so this
worker's calls are all in the store when a budget is checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from agent.config import ModelConfig
from agent.usage import UsageRecord
from bot.metrics import Metrics
from bot.stores.usage import Totals, UsageRow, UsageStore
from bot.usage.prices import cost_of

log = logging.getLogger("bot.usage")


def day_of(at: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(at))


def channel_of(record: UsageRecord) -> str:
    """The channel a call counts for: its chat's, else its account's (`api` for the Gateway)."""
    source = record.chat or record.user_id or "api"
    return source.split(":", 1)[0]


def totals_of(record: UsageRecord, cost: float) -> Totals:
    return Totals(
        record.prompt,
        record.completion,
        record.cached,
        record.reasoning,
        cost,
        1,
        int(record.estimated),
    )


class Meter:
    def __init__(
        self,
        store: UsageStore | None,
        models: Callable[[], list[ModelConfig]],
        person_of: Callable[[str], Awaitable[str]],
        metrics: Metrics,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.models = models  # read per call: prices change live
        self.person_of = person_of
        self.metrics = metrics
        self.clock = clock
        self.pending: list[tuple[UsageRecord, float, float]] = []
        self._runs: dict[str, Totals] = {}
        self._writer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        # told of the rows once they are in the store (budgets release their calls' holds)
        self.on_written: Callable[[list[UsageRow]], Awaitable[None]] | None = None

    # the sink ------------------------------------------------------------------------------

    def record(self, record: UsageRecord) -> None:
        model = next((m for m in self.models() if m.name == record.model), None)
        cost = cost_of(model, record.prompt, record.completion, record.cached)
        if record.run_id in self._runs:  # a chat run's own calls, for its footer
            self._runs[record.run_id] += totals_of(record, cost)
        self._count(record, cost)
        if self.store is None:
            return
        self.pending.append((record, cost, self.clock()))
        if self._writer is None or self._writer.done():
            with contextlib.suppress(RuntimeError):  # no loop: flushed by the next flush()
                self._writer = asyncio.get_running_loop().create_task(
                    self.flush(), name="usage-writer"
                )

    def _count(self, record: UsageRecord, cost: float) -> None:
        channel, m = channel_of(record), self.metrics
        m.model_calls.labels(model=record.model, channel=channel, purpose=record.purpose).inc()
        for kind in ("prompt", "completion", "cached", "reasoning"):
            amount = getattr(record, kind)
            if amount:
                m.model_tokens.labels(model=record.model, channel=channel, kind=kind).inc(amount)
        if cost:
            m.model_cost.labels(model=record.model, channel=channel).inc(cost)

    # runs ----------------------------------------------------------------------------------

    def begin_run(self, run_id: str) -> None:
        """Keep this run's totals (until `forget_run`); calls after it (the title) are not."""
        self._runs[run_id] = Totals()

    def run_totals(self, run_id: str) -> Totals:
        return self._runs.get(run_id, Totals())

    def forget_run(self, run_id: str) -> None:
        self._runs.pop(run_id, None)

    # writing -------------------------------------------------------------------------------

    async def flush(self) -> None:
        """Write every pending row (in order; a failed write is logged and its rows dropped,
        counted in the metrics all the same)."""
        if self.store is None:
            return
        async with self._lock:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    rows = [await self._row(*item) for item in batch]
                    await self.store.add(rows)
                except Exception as exc:
                    log.warning("usage: %d rows not written: %s", len(batch), exc)
                    continue
                if self.on_written is not None:
                    await self.on_written(rows)

    async def _row(self, record: UsageRecord, cost: float, at: float) -> UsageRow:
        account = record.user_id
        person = await self.person_of(account) if account else ""
        return UsageRow(
            at=at,
            day=day_of(at),
            run_id=record.run_id,
            thread_id=record.thread_id,
            person=person,
            account=account,
            chat=record.chat,
            channel=channel_of(record),
            model=record.model,
            purpose=record.purpose,
            prompt=record.prompt,
            completion=record.completion,
            cached=record.cached,
            reasoning=record.reasoning,
            cost=cost,
            estimated=record.estimated,
        )

    async def close(self) -> None:
        await self.flush()
