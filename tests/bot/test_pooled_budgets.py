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

from bot.cluster.redis_client import done
from bot.cluster.spend_holds import SpendHolds
from bot.stores.build import Stores, build_stores
from bot.usage.budgets import Budgets, Payer
from bot.usage.config import UsageConfig
from bot.usage.meter import Meter
from tests.bot.stores_support import store_settings
from tests.bot.test_usage_store import CALL, LIMIT, one_run, worker

NOW = 1_790_000_000.0
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


def pooled(stores: Stores, holds: SpendHolds | None) -> tuple[Meter, Budgets]:
    """A worker of test_usage_store's, its calls in flight held in Redis (or not: None)."""
    meter, budgets = worker(stores, CONFIG)
    budgets.holds = holds
    meter.on_written = budgets.written
    budgets.poll = 0.005
    return meter, budgets


async def race(workers: list[tuple[Meter, Budgets]]) -> int:
    runs = [one_run(m, b, f"w{w}r{r}", PAYER) for w, (m, b) in enumerate(workers) for r in range(4)]
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
    workers = [pooled(s, SpendHolds(fixed(c), prefix)) for s, c in pairs]
    spent = await race(workers)
    assert LIMIT <= spent < LIMIT + CALL  # the bound: less than one call
    assert await one_run(*workers[1], "late", PAYER) == 0  # refused before any call
    [key] = await done(clients[0].keys(f"{prefix}:spend:*"))
    left = await done(clients[0].hgetall(key))
    assert left == {"largest": str(CALL), "written": str(spent // CALL)}  # no hold left


async def test_without_holds_the_store_alone_lets_racing_runs_overshoot_more(
    pg_stores: list[Stores],
) -> None:
    """What the holds buy: the same race on the store's sums alone (SQLite's and embedded's
    rule) goes past the limit by more than one call (at most one per racing run)."""
    spent = await race([pooled(s, None) for s in pg_stores])
    assert LIMIT + CALL <= spent <= LIMIT + 12 * CALL


async def test_a_dead_workers_hold_expires_and_redis_away_lets_calls_go(
    pg_stores: list[Stores], clients: list[aioredis.Redis], redis_bus: dict[str, Any]
) -> None:
    prefix = str(redis_bus["redis"]["key_prefix"])
    holds = SpendHolds(lambda: clients[0], prefix, ttl=0.2)
    meter, budgets = pooled(pg_stores[0], holds)
    name = budgets.hold_name(CONFIG.budgets[0], PAYER, NOW)
    assert await holds.admit(name, LIMIT, 0, "dead-run", 0) == "ok"  # its worker then died
    assert await holds.admit(name, LIMIT, 0, "other", 0) == "wait"  # size unknown: one at a time
    assert await holds.admit(name, LIMIT, 0, "other", 7) == "again"  # the sum read was stale
    made = await one_run(meter, budgets, "after", PAYER)  # waits until the dead hold expires
    assert made == 5
    dead = aioredis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    away = SpendHolds(lambda: dead, prefix)
    assert await away.admit(name, LIMIT, 0, "x", 0) == "ok"
    assert away.down
    await dead.aclose()
