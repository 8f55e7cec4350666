"""Helpers of the store tests: settings on a backend, and a process that is gone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bot.config.schema import Settings, settings_from_dict
from bot.stores.build import Stores

Opener = Callable[[], Awaitable[Stores]]  # opens the stores of one more process


def store_settings(tmp_path: Path, storage: dict[str, Any]) -> Settings:
    model = {"name": "m", "model": "m", "api_key": "sk", "base_url": "http://127.0.0.1:9/v1"}
    return settings_from_dict(
        {"storage": {"data_dir": str(tmp_path), **storage}, "models": [model]}
    )


async def gone(stores: Stores) -> None:
    """The process behind `stores` stopped, as far as the journal can tell (on PostgreSQL its
    life lock is free; SQLite has one process, whose rows are its own after a restart)."""
    life = getattr(stores, "life", None)
    if life is not None:
        await life.release()
