"""The usage store on both backends (sums, reports, the once-per-period warning mark) and one
budget shared by three workers' runs racing on it: the overshoot stays within the stated bound
(one model call per racing run)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from agent.config import ModelConfig
from agent.usage import UsageRecord, UsageRefused, UsageScope
from bot.metrics import Metrics
from bot.stores.build import Stores
from bot.stores.usage import Report, Totals, UsageRow
from bot.usage.budgets import Budgets, Payer
from bot.usage.config import UsageConfig
from bot.usage.meter import Meter
from tests.bot.stores_support import Opener

ROW = UsageRow(
    at=0.0,
    day="2026-09-21",
    run_id="r1",
    thread_id="t1",
    person="telegram:1",
    account="telegram:1",
    chat="telegram:c1",
    channel="telegram",
    model="fast",
    purpose="answer",
    prompt=100,
    completion=20,
    cached=10,
    reasoning=5,
    cost=0.5,
    estimated=False,
)


async def test_sums_reports_and_warning_marks(stores: Stores) -> None:
    store = stores.usage
    assert store is not None
    await store.add(
        [
            ROW,
            replace(ROW, run_id="r2", chat="telegram:c1:7", estimated=True),  # a forum topic
            replace(ROW, day="2026-08-31", run_id="r3", model="smart"),
            replace(ROW, person="slack:U1", chat="slack:c2", channel="slack", thread_id="t2"),
        ]
    )
    today = await store.total("person", "telegram:1", "2026-09-21")
    assert today == Totals(200, 40, 20, 10, 1.0, 2, 1)
    assert (await store.total("person", "telegram:1")).calls == 3
    assert (await store.total("chat", "telegram:c1", "2026-09-01")).calls == 2  # with its topic
    assert (await store.total("chat", "telegram:c", "")).calls == 0  # no prefix match
    assert await store.count_runs("t1") == 3
    rows = await store.report(Report(group_by=("channel", "model"), since="2026-09-01"))
    assert [(key, t.tokens) for key, t in rows] == [
        (("slack", "fast"), 120),
        (("telegram", "fast"), 240),
    ]
    assert await store.warn_once("person:x:day:tokens:telegram:1:2026-09-21", 1.0)
    assert not await store.warn_once("person:x:day:tokens:telegram:1:2026-09-21", 2.0)


LIMIT, CALL = 1_000, 100


def worker(stores: Stores, config: UsageConfig) -> tuple[Meter, Budgets]:
    model = ModelConfig(name="fast", model="fake")

    async def same(account: str) -> str:
        return account

    meter = Meter(stores.usage, lambda: [model], same, Metrics(), clock=lambda: 1_790_000_000.0)
    assert stores.usage is not None
    return meter, Budgets(lambda: config, stores.usage, meter, clock=meter.clock)


async def one_run(meter: Meter, budgets: Budgets, run_id: str, payer: Payer) -> int:
    """A run of up to five model calls, checked as the agent checks them; its calls made."""
    verdict = await budgets.verdict(payer, "fast")
    if verdict.refusal:
        return 0
    budgets.begin(run_id, payer)
    scope = UsageScope(run_id=run_id, user_id=payer.person, chat=payer.chat)
    made = 0
    try:
        for _ in range(5):
            await budgets.check(scope)
            await asyncio.sleep(0)  # the model call: others run meanwhile
            meter.record(
                UsageRecord(
                    "fast",
                    "answer",
                    CALL // 2,
                    CALL // 2,
                    run_id=run_id,
                    user_id=payer.person,
                    chat=payer.chat,
                )
            )
            made += 1
    except UsageRefused:
        pass
    finally:
        budgets.end(run_id)
    return made


async def test_three_workers_racing_on_one_budget_overshoot_by_at_most_one_call_each_run(
    stores: Stores, processes: Opener
) -> None:
    budget = {"scope": "person", "name": "telegram:1", "tokens": LIMIT}
    config = UsageConfig.model_validate({"budgets": [budget]})
    others = [await processes(), await processes()]
    workers = [worker(s, config) for s in (stores, *others)]
    payer = Payer("telegram:1", "member", "telegram:c1", "telegram")
    runs = [
        one_run(meter, budgets, f"w{w}r{r}", payer)
        for w, (meter, budgets) in enumerate(workers)
        for r in range(4)
    ]
    made = await asyncio.gather(*runs)
    for meter, _ in workers:
        await meter.flush()
    assert stores.usage is not None
    spent = (await stores.usage.total("person", "telegram:1")).tokens
    assert spent == sum(made) * CALL
    assert LIMIT <= spent <= LIMIT + len(runs) * CALL  # the stated bound
    later = await one_run(*workers[0], "late", payer)
    assert later == 0  # refused before any call once the budget is spent


async def test_the_meter_keeps_totals_only_of_runs_begun_until_forgotten(stores: Stores) -> None:
    meter, _ = worker(stores, UsageConfig())
    call = UsageRecord("fast", "answer", 10, 5, run_id="r1", user_id="telegram:1")
    meter.begin_run("r1")
    meter.record(call)
    assert meter.run_totals("r1").tokens == 15
    meter.forget_run("r1")
    meter.record(replace(call, purpose="title"))  # the title, after the answer
    meter.record(replace(call, run_id="api-run"))  # a Gateway run: no footer
    assert meter._runs == {}
    await meter.flush()
    assert stores.usage is not None
    assert (await stores.usage.total("person", "telegram:1")).calls == 3
