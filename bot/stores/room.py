"""Waiting out a full disk under the SQLite stores (installed in agent/sql.py at start-up).

A statement, transaction or checkpoint write that failed with "database or disk is full" is
run again with the one backoff (at most 5 s apart) until there is room: the Telegram poller's
publish, a lane's journal step or a checkpoint waits instead of failing, so no update is
dropped and no answer is lost; /health stays up meanwhile and the log says so once per streak.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from agent.sql import disk_full, wait_out_full_disk
from channels.backoff import Backoff, BackoffPolicy

log = logging.getLogger("bot.stores")

ROOM_BACKOFF = BackoffPolicy(base=0.2, cap=5.0)


async def waiting_for_room(what: str, op: Callable[[], Awaitable[Any]]) -> Any:
    backoff = Backoff(f"{what}: a write on a full disk", log, ROOM_BACKOFF)
    while True:
        try:
            result = await op()
        except Exception as exc:  # sqlite3.OperationalError, or an OSError (ENOSPC)
            if not disk_full(exc):
                raise
            backoff.failure("the disk is full; waiting for room")
        else:
            backoff.success()
            return result
        await backoff.wait()


def install() -> None:
    wait_out_full_disk(waiting_for_room)
