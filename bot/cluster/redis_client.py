"""The Redis connection of a worker, and what start-up says when Redis cannot be used."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.config.schema import ConfigError, RedisConfig


class RedisUnavailable(ConfigError):
    """`bus.redis.url` names a server that does not answer (or refuses the login)."""


T = TypeVar("T")
log = logging.getLogger(__name__)


async def keep_listening(
    client: Callable[[], aioredis.Redis | None],
    serve: Callable[[aioredis.Redis], Awaitable[None]],
    what: str,
) -> None:
    """`serve(client)` for as long as the task runs: again a second after Redis was away or
    the listening failed (logged as `what`)."""
    while True:
        current = client()
        if current is not None:
            try:
                await serve(current)
            except (RedisError, OSError) as exc:
                log.warning("%s: listening failed (%s); listening again", what, exc)
        await asyncio.sleep(1)


def where(url: str) -> str:
    """`host:port/db` for messages: never the password."""
    parts = urlsplit(url)
    db = parts.path.lstrip("/") or "0"
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}/{db}"


def unavailable(url: str, exc: BaseException) -> RedisUnavailable:
    reason = str(exc) or type(exc).__name__
    password = urlsplit(url).password or ""
    if password:
        reason = reason.replace(password, "***")
    return RedisUnavailable(
        [f"bus.redis.url: cannot use the Redis server at {where(url)}: {reason}"]
    )


def make_client(cfg: RedisConfig) -> aioredis.Redis:
    assert cfg.url is not None
    return aioredis.Redis.from_url(
        cfg.url.get_secret_value(),
        decode_responses=True,
        socket_connect_timeout=cfg.connect_timeout_seconds,
        health_check_interval=30,
    )


async def connect(cfg: RedisConfig) -> aioredis.Redis:
    """A client whose server answered PING (RedisUnavailable otherwise)."""
    client = make_client(cfg)
    assert cfg.url is not None
    try:
        await done(client.ping())
    except (RedisError, OSError) as exc:
        await client.aclose()
        raise unavailable(cfg.url.get_secret_value(), exc) from None
    return client


async def done(value: Awaitable[T] | T) -> T:
    """The result of a redis-py command: its asyncio client returns awaitables, but the library
    types every command as `Awaitable[T] | T` (one signature for both clients)."""
    if inspect.isawaitable(value):
        return cast(T, await value)
    return value


async def within(value: Awaitable[T] | T, seconds: float) -> T:
    """`done(value)`, given up after `seconds` (TimeoutError, an OSError like a lost
    connection): a call hung on a cut network must not outlive the lease it acts under."""
    return await asyncio.wait_for(done(value), seconds)
