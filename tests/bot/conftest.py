"""The stores on each backend (`storage` is sqlite, then a real PostgreSQL server), for the
store tests in this folder."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.stores.build import Stores, build_stores
from tests.bot.stores_support import Opener, store_settings


@pytest.fixture
async def stores(tmp_path: Path, storage: dict[str, Any]) -> AsyncIterator[Stores]:
    opened = build_stores(store_settings(tmp_path, storage))
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def processes(tmp_path: Path, storage: dict[str, Any]) -> AsyncIterator[Opener]:
    """Opens the stores of one more process on the same database (all closed at the end)."""
    opened: list[Stores] = []

    async def open_one() -> Stores:
        stores = build_stores(store_settings(tmp_path, storage))
        await stores.open()
        opened.append(stores)
        return stores

    try:
        yield open_one
    finally:
        for stores in opened:
            await stores.close()
