"""What counting costs: the `UsageCounter` on a model call (reading the provider's usage,
pricing it, the metrics, the run's totals, queueing the row), the background row write and a
budget's sum on SQLite, and whole turns through the runner against the fake OpenAI server with
counting on and off (off: an empty callback handler in the counter's place).

Counting adds no model call: the turns' request counts are reported too.
Figures in microseconds per call (median), turns in milliseconds (median and p90).
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, LLMResult

import agent.models
from agent.config import AgentConfig, ModelConfig
from agent.events import RunSettings, Turn
from agent.runner import AgentRunner
from agent.usage import UsageCounter, UsageScope, usage_scope
from bench.support import median_us, per_call_us
from bot.db import open_db
from bot.metrics import Metrics
from bot.stores.usage import UsageRow
from bot.stores.usage.sqlite import SqliteUsageStore
from bot.usage.budgets import Budgets, Payer
from bot.usage.config import UsageConfig
from bot.usage.meter import Meter
from bot.usage.prices import cost_of
from tests.fakes.openai_server import FakeOpenAI, Reply

USAGE = {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500}


async def _same(account: str) -> str:
    return account


class _Off(AsyncCallbackHandler):
    """Counting off: a handler that does nothing, where the counter would be."""

    def __init__(self, *_: Any) -> None:
        super().__init__()


async def callback_figures(tmp: Path) -> dict[str, object]:
    db = open_db(tmp)
    store = SqliteUsageStore(db)
    model = ModelConfig(name="fast", model="gpt-4o-mini")
    meter = Meter(store, lambda: [model], _same, Metrics())
    counter = UsageCounter("fast", "answer")
    message = AIMessage(
        "An answer of some length.",
        usage_metadata={"input_tokens": 1200, "output_tokens": 300, "total_tokens": 1500},
    )
    result = LLMResult(generations=[[ChatGeneration(message=message)]])
    prompt = [[HumanMessage("hello " * 200)]]

    async def one_call() -> None:
        run_id = uuid.uuid4()
        await counter.on_chat_model_start({}, prompt, run_id=run_id)
        await counter.on_llm_end(result, run_id=run_id)

    figures: dict[str, object] = {}
    with usage_scope(sink=meter.record, run_id="r", thread_id="t", user_id="telegram:1", chat="c"):
        figures["counter_per_call_us"] = await median_us(one_call, 5_000)
    meter.pending.clear()
    figures["price_table_us"] = per_call_us(lambda: cost_of(model, 1200, 300, 0), 5_000)
    priced = ModelConfig(name="own", model="x", price={"input": 1.0, "output": 2.0})
    figures["price_configured_us"] = per_call_us(lambda: cost_of(priced, 1200, 300, 0))
    row = UsageRow(0.0, "2026-09-21", "r", "t", "telegram:1", "telegram:1", "telegram:c",
                   "telegram", "fast", "answer", 1200, 300, 0, 0, 0.001, False)  # fmt: skip
    figures["row_write_sqlite_us"] = await median_us(lambda: store.add([row]))
    rows = 10_000
    await store.add([row] * rows)
    config = UsageConfig.model_validate(
        {"budgets": [{"scope": "person", "name": "telegram:1", "tokens": 10**12}]}
    )
    budgets = Budgets(lambda: config, store, meter, clock=lambda: 1_790_000_000.0)
    payer = Payer("telegram:1", "member", "telegram:c", "telegram")
    figures[f"budget_check_sqlite_{rows}_rows_us"] = await median_us(
        lambda: budgets.verdict(payer, "fast"), 500
    )
    budgets.begin("r", payer)
    figures["in_run_check_sqlite_us"] = await median_us(
        lambda: budgets.check(UsageScope(run_id="r")), 500
    )
    db.close()
    return figures


async def turns(tmp: Path, counting: bool, n: int) -> tuple[list[float], int]:
    fake = FakeOpenAI().start()
    fake.responder = lambda body: Reply(text="A short answer of a few words.", usage=USAGE)
    saved = agent.models.UsageCounter
    if not counting:
        agent.models.UsageCounter = _Off  # type: ignore[misc,assignment]
    model = ModelConfig(name="fast", model="fake", api_key="sk", base_url=fake.base_url)
    runner = AgentRunner(
        models=[model],
        default_model=None,
        config=AgentConfig(max_retries=0, title={"enabled": False}),
        data_dir=tmp / ("on" if counting else "off"),
    )
    db = open_db(tmp / ("on" if counting else "off"))
    meter = Meter(SqliteUsageStore(db), lambda: [model], _same, Metrics())
    if counting:
        runner.on_usage = meter.record
    await runner.start()
    times = []
    try:
        for i in range(n):
            start = time.perf_counter()
            async for _ in runner.stream(f"t{i}", Turn(text="hi", user_id="b:1"), RunSettings()):
                pass
            times.append(time.perf_counter() - start)
        await meter.flush()
    finally:
        await runner.stop()
        agent.models.UsageCounter = saved  # type: ignore[misc]
        fake.stop()
        db.close()
    return times, len(fake.requests)


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


async def run() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        figures = await callback_figures(Path(tmp))
        n = 60
        await turns(Path(tmp) / "warm", True, 5)
        off, off_requests = await turns(Path(tmp), False, n)
        on, on_requests = await turns(Path(tmp), True, n)
    figures.update(
        {
            "turns": n,
            "turn_counting_off_median_ms": _ms(off, 0.5),
            "turn_counting_on_median_ms": _ms(on, 0.5),
            "turn_counting_off_p90_ms": _ms(off, 0.9),
            "turn_counting_on_p90_ms": _ms(on, 0.9),
            "model_requests_off": off_requests,
            "model_requests_on": on_requests,
        }
    )
    return figures
