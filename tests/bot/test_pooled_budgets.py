"""Budgets pooled across workers in Redis (bot/cluster/spend_holds.py): three workers, each with
its own PostgreSQL pool and Redis connection, race twelve runs against one budget. The calls in
flight are held, so the budget is overshot by less than one model call (the stated bound), where
the store's sums alone allow one call per racing run; a worker that died leaves a hold that
expires; Redis away lets the call go ahead on the store's sum."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from agent.config import ModelConfig
from agent.usage import UsageRecord, UsageRefused, UsageScope
from bot.cluster.redis_client import done
from bot.cluster.spend_holds import SpendHolds
from bot.metrics import Metrics
from bot.stores.build import Stores, build_stores
from bot.usage.budgets import Budgets, Payer
from bot.usage.config import UsageConfig
from bot.usage.meter import Meter
from tests.bot.stores_support import store_settings

LIMIT, CALL, NOW = 1_000, 100, 1_790_000_000.0
PAYER = Payer("telegram:1", "member", "telegram:c1", "telegram")
CONFIG = UsageConfig.model_validate(
    {"budgets": [{"scope": "person", "name": "telegram:1", "tokens": LIMIT}]}
)


@pytest.fixture
async def pg_stores(tmp_path: Path, pg_dsn: str) -> AsyncIterator[list[Stores]]:
    """Three processes' stores on one PostgreSQL database."""
    opened = []
    for _ in range(3):
        stores = build_stores(
            store_settings(tmp_path, {"backend": "postgres", "postgres": {"dsn": pg_dsn}})
        )
        await stores.open()
        opened.append(stores)
    yield opened
    for stores in opened:
        await stores.close()


@pytest.fixture
async def clients(redis_bus: dict[str, Any]) -> AsyncIterator[list[aioredis.Redis]]:
    url = str(redis_bus["redis"]["url"])
    made = [aioredis.Redis.from_url(url, decode_responses=True) for _ in range(3)]
    yield made
    for client in made:
        await client.aclose()


def fixed(client: aioredis.Redis) -> Callable[[], aioredis.Redis | None]:
    return lambda: client


def worker(stores: Stores, holds: SpendHolds | None) -> tuple[Meter, Budgets]:
    model = ModelConfig(name="fast", model="fake")

    async def same(account: str) -> str:
        return account

    assert stores.usage is not None
    meter = Meter(stores.usage, lambda: [model], same, Metrics(), clock=lambda: NOW)
    budgets = Budgets(lambda: CONFIG, stores.usage, meter, clock=meter.clock)
    budgets.holds = holds
    meter.on_written = budgets.written
    budgets.poll = 0.005
    return meter, budgets


async def one_run(meter: Meter, budgets: Budgets, run_id: str) -> int:
    """A run of up to five model calls, checked as the agent checks them; its calls made."""
    if (await budgets.verdict(PAYER, "fast")).refusal:
        return 0
    budgets.begin(run_id, PAYER)
    scope = UsageScope(run_id=run_id, user_id=PAYER.person, chat=PAYER.chat)
    made = 0
    try:
        for _ in range(5):
            await budgets.check(scope)
            for _ in range(3):  # the model call: the other runs go on meanwhile
                await asyncio.sleep(0)
            meter.record(
                UsageRecord(
                    "fast", "answer", CALL // 2, CALL // 2, run_id=run_id,
                    user_id=PAYER.person, chat=PAYER.chat,
                )
            )  # fmt: skip
            made += 1
    except UsageRefused:
        pass
    finally:
        budgets.end(run_id)
    return made


async def race(workers: list[tuple[Meter, Budgets]]) -> int:
    runs = [one_run(m, b, f"w{w}r{r}") for w, (m, b) in enumerate(workers) for r in range(4)]
    made = sum(await asyncio.gather(*runs))
    for meter, _ in workers:
        await meter.flush()
    store = workers[0][0].store
    assert store is not None
    spent = (await store.total("person", PAYER.person)).tokens
    assert spent == made * CALL
    return spent


async def test_three_workers_racing_overshoot_by_less_than_one_call(
    pg_stores: list[Stores], clients: list[aioredis.Redis], redis_bus: dict[str, Any]
) -> None:
    prefix = str(redis_bus["redis"]["key_prefix"])
    pairs = zip(pg_stores, clients, strict=True)
    workers = [worker(s, SpendHolds(fixed(c), prefix)) for s, c in pairs]
    spent = await race(workers)
    assert LIMIT <= spent < LIMIT + CALL  # the bound: less than one call
    assert await one_run(*workers[1], "late") == 0  # refused before any call
    [key] = await done(clients[0].keys(f"{prefix}:spend:*"))
    left = await done(clients[0].hgetall(key))
    assert left == {"largest": str(CALL), "written": str(spent // CALL)}  # no hold left


async def test_without_holds_the_store_alone_lets_racing_runs_overshoot_more(
    pg_stores: list[Stores],
) -> None:
    """What the holds buy: the same race on the store's sums alone (SQLite's and embedded's
    rule) goes past the limit by more than one call (at most one per racing run)."""
    spent = await race([worker(s, None) for s in pg_stores])
    assert LIMIT + CALL <= spent <= LIMIT + 12 * CALL


async def test_a_dead_workers_hold_expires_and_redis_away_lets_calls_go(
    pg_stores: list[Stores], clients: list[aioredis.Redis], redis_bus: dict[str, Any]
) -> None:
    prefix = str(redis_bus["redis"]["key_prefix"])
    holds = SpendHolds(lambda: clients[0], prefix, ttl=0.2)
    meter, budgets = worker(pg_stores[0], holds)
    name = budgets.hold_name(CONFIG.budgets[0], PAYER, NOW)
    assert await holds.admit(name, LIMIT, 0, "dead-run", 0) == "ok"  # its worker then died
    assert await holds.admit(name, LIMIT, 0, "other", 0) == "wait"  # size unknown: one at a time
    assert await holds.admit(name, LIMIT, 0, "other", 7) == "again"  # the sum read was stale
    made = await one_run(meter, budgets, "after")  # waits until the dead hold expires
    assert made == 5
    dead = aioredis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    away = SpendHolds(lambda: dead, prefix)
    assert await away.admit(name, LIMIT, 0, "x", 0) == "ok"
    assert away.down
    await dead.aclose()
