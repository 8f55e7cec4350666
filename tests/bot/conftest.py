"""The stores on each backend (`storage` is sqlite, then a real PostgreSQL server), for the
store tests in this folder."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.stores.build import Stores, build_stores
from tests.bot.stores_support import store_settings


@pytest.fixture
async def stores(tmp_path: Path, storage: dict[str, Any]) -> AsyncIterator[Stores]:
    opened = build_stores(store_settings(tmp_path, storage))
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()
