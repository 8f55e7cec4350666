"""Waiting in a test for something another thread or task does (a fake server, the service)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def until(check: Callable[[], object], timeout: float = 10.0) -> None:
    """Wait for `check()` to hold, looking every 10 ms; an AssertionError after `timeout` s."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not check():
        if loop.time() > end:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.01)
