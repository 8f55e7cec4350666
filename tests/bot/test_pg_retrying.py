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
