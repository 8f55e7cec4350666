"""A statement on a lost PostgreSQL connection is retried with the one backoff."""

from __future__ import annotations

import logging

import psycopg
import pytest

from bot.stores.pg import RETRIES, retrying


async def test_a_lost_connection_is_retried_with_the_one_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failures = [psycopg.OperationalError("server closed the connection unexpectedly")]

    async def op() -> str:
        if failures:
            raise failures.pop()
        return "row"

    with caplog.at_level(logging.DEBUG, logger="bot.stores.pg"):
        assert await retrying("journal", op) == "row"
    lines = [r.getMessage() for r in caplog.records]
    # channels/backoff.py: one warning for the streak, one recovery line
    assert any("journal" in line and "retrying with backoff" in line for line in lines)
    assert any("recovered after 1 failed attempt(s)" in line for line in lines)


async def test_a_connection_lost_on_every_attempt_is_raised() -> None:
    calls = 0

    async def op() -> str:
        nonlocal calls
        calls += 1
        raise psycopg.OperationalError("connection refused")

    with pytest.raises(psycopg.OperationalError):
        await retrying("journal", op)
    assert calls == RETRIES


async def test_every_connection_of_the_pool_lost_at_once_costs_one_retry(pg_dsn: str) -> None:
    """A database restart or a network cut kills every pooled connection: more of them than
    the retries. The first loss has the pool check the rest, so the retry gets a live one."""
    from psycopg_pool import AsyncConnectionPool

    from agent.sql import PostgresSql

    app = "antler-lost-" + str(id(pg_dsn))
    kwargs = {"autocommit": True, "application_name": app}
    pool = AsyncConnectionPool(pg_dsn, min_size=RETRIES + 2, kwargs=kwargs, open=False)
    await pool.open(wait=True)
    try:
        sql = PostgresSql(pool, "journal", retrying)
        assert await sql.one("SELECT 1") == (1,)
        with psycopg.connect(pg_dsn, autocommit=True) as killer:
            row = killer.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (app,),
            ).fetchone()
        assert row is not None
        assert row[0] == RETRIES + 2
        assert await sql.one("SELECT 2") == (2,)
    finally:
        await pool.close()
