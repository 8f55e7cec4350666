"""PostgreSQL plumbing shared by the Postgres stores: the pool, the migrations, plain errors
(the stores run their statements through `agent.sql.PostgresSql` with `retrying`).

One psycopg 3 async pool per process. Its connections are in autocommit mode with dict rows and
server-side prepared statements (what LangGraph's `AsyncPostgresSaver` needs; the bot's stores
use them too). Every connection gets a `statement_timeout` and the configured
`synchronous_commit`; the pool checks a connection that sat idle before lending it, so one the
server dropped is replaced instead of failing a statement, and the stores retry a statement
whose connection was lost while in use.

Schema changes are numbered migrations recorded in `antler_migrations`; each runs once, in its
own transaction, under an advisory lock so processes starting together do not race.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from bot.config.schema import ConfigError, PostgresConfig
from bot.stores.schema import pending
from channels.backoff import Backoff, BackoffPolicy

log = logging.getLogger("bot.stores.pg")

MIGRATION_LOCK = 0x616E746C  # "antl": one advisory lock id for every Antler schema change
RETRIES = 3
RETRY_BACKOFF = BackoffPolicy(base=0.1, cap=0.4)
"""Between attempts of a statement on a lost connection (channels/backoff.py)."""
IDLE_CHECK_SECONDS = 5.0
T = TypeVar("T")


class StorageUnavailable(ConfigError):
    """The database named by `storage.postgres.dsn` cannot be used (reached, logged into)."""


def where(dsn: str) -> str:
    """`user@host:port/dbname` for messages: never the password."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "(unreadable connection string)"
    host = parts.get("host") or "localhost"
    port = parts.get("port") or "5432"
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"{user}{host}:{port}/{parts.get('dbname') or ''}"


def unavailable(dsn: str, exc: BaseException) -> StorageUnavailable:
    """A one-line reason naming the setting, the server and what it said (password scrubbed)."""
    reason = _reason(exc)
    try:
        password = str(conninfo_to_dict(dsn).get("password") or "")
    except psycopg.ProgrammingError:
        password = ""
    if password:
        reason = reason.replace(password, "***")
    return StorageUnavailable(
        [f"storage.postgres.dsn: cannot use the PostgreSQL database at {where(dsn)}: {reason}"]
    )


def _reason(exc: BaseException) -> str:
    if isinstance(exc, PoolTimeout | TimeoutError):
        return "no connection within the connect timeout (is the server up and reachable?)"
    text = str(exc)
    if "Connection refused" in text:
        return "connection refused (is the server running and listening there?)"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else type(exc).__name__
    return first.rsplit("failed: ", 1)[-1].replace("FATAL:  ", "")


class IdleCheck:
    """The pool's check before lending a connection: a round trip, but only for a connection
    unused for `idle` seconds (one the server may have dropped meanwhile, e.g. in a restart).
    Checking every loan would add a round trip to every statement (it halved turns/s); a
    connection lost while busy is caught by `retrying`."""

    def __init__(self, idle: float) -> None:
        self.idle = idle
        self._used: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    async def __call__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        now = time.monotonic()
        last = self._used.get(conn)
        self._used[conn] = now
        if last is None or now - last > self.idle:
            await AsyncConnectionPool.check_connection(conn)


def make_pool(cfg: PostgresConfig) -> AsyncConnectionPool:
    """The process's pool, not yet open (open it with `open_pool`)."""
    assert cfg.dsn is not None
    dsn = cfg.dsn.get_secret_value()
    own = conninfo_to_dict(dsn).get("options") or ""  # keep the DSN's own (search_path, ...)
    timeout_ms = int(cfg.statement_timeout_seconds * 1000)
    sync = "on" if cfg.synchronous_commit else "off"
    options = f"{own} -c statement_timeout={timeout_ms} -c synchronous_commit={sync}".strip()
    return AsyncConnectionPool(
        dsn,
        min_size=cfg.pool_min,
        max_size=cfg.pool_max,
        open=False,
        timeout=cfg.connect_timeout_seconds * 2,
        name="antler",
        check=IdleCheck(IDLE_CHECK_SECONDS),
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "connect_timeout": max(1, int(cfg.connect_timeout_seconds)),
            "options": options,
        },
    )


async def open_pool(pool: AsyncConnectionPool, dsn: str, timeout: float) -> None:
    """Open the pool and prove the login works; StorageUnavailable in plain words otherwise."""
    try:
        # one direct connection first: a refused login is reported at once, not as a timeout
        conn = await psycopg.AsyncConnection.connect(dsn, connect_timeout=max(1, int(timeout)))
        await conn.close()
        await pool.open(wait=True, timeout=timeout * 2)
    except (psycopg.Error, PoolTimeout, OSError, TimeoutError) as exc:
        await pool.close()
        raise unavailable(dsn, exc) from None


async def ping(pool: AsyncConnectionPool) -> float:
    """Seconds one round trip takes; raises when the database is not reachable."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    async with pool.connection(timeout=5) as conn:
        await conn.execute("SELECT 1")
    return loop.time() - start


async def retrying(what: str, op: Callable[[], Awaitable[T]]) -> T:
    """Run `op`, again on a lost connection (the pool hands out a fresh one), a few times."""
    backoff = Backoff(f"{what}: a statement", log, RETRY_BACKOFF)
    for attempt in range(1, RETRIES + 1):
        try:
            result = await op()
        except psycopg.OperationalError as exc:
            if attempt == RETRIES:
                raise
            backoff.failure(f"database connection lost ({_reason(exc)})")
            await backoff.wait()
        else:
            backoff.success()
            return result
    raise AssertionError("unreachable")


async def migrate(pool: AsyncConnectionPool, component: str, migrations: Sequence[str]) -> int:
    """Apply `component`'s migrations the database has not seen; returns the schema version."""
    async with pool.connection() as conn:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS antler_migrations (component TEXT NOT NULL,"
                " version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
                " PRIMARY KEY (component, version))"
            )
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            cur = await conn.execute(
                "SELECT COALESCE(MAX(version), 0) AS v FROM antler_migrations WHERE component = %s",
                (component,),
            )
            row: Any = await cur.fetchone()  # a dict: the pool's row factory is dict_row
            version = int(row["v"]) if row else 0
            for number, steps in pending(migrations, version):
                for statement in steps:
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO antler_migrations(component, version) VALUES (%s, %s)",
                    (component, number),
                )
    return len(migrations)
