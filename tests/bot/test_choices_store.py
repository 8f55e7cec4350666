"""The store of choices waiting for a press, on both backends (SQLite file, a real PostgreSQL
server): it outlives the process, and the first press wins once even when two processes race."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.config.schema import settings_from_dict
from bot.stores.build import Stores, build_stores

PAYLOAD = {"text": "Pick one", "buttons": [["Fast", "/models fast"], ["Smart", "/models smart"]]}


def _settings(tmp_path: Path, storage: dict[str, Any]) -> Any:
    model = {"name": "m", "model": "m", "api_key": "sk", "base_url": "http://127.0.0.1:9/v1"}
    return settings_from_dict(
        {"storage": {"data_dir": str(tmp_path), **storage}, "models": [model]}
    )


@pytest.fixture
async def opened() -> AsyncIterator[list[Stores]]:
    """The stores a test opened (`_open`), closed after it."""
    stores: list[Stores] = []
    yield stores
    for s in stores:
        await s.close()


async def _open(tmp_path: Path, storage: dict[str, Any], opened: list[Stores]) -> Stores:
    stores = build_stores(_settings(tmp_path, storage))
    await stores.open()
    opened.append(stores)
    return stores


async def test_a_choice_outlives_the_process_and_is_made_once(
    tmp_path: Path, storage: dict[str, Any], opened: list[Stores]
) -> None:
    first = await _open(tmp_path, storage, opened)
    await first.choices.put("card-1", "dingtalk", PAYLOAD)
    await first.choices.put("card-1", "dingtalk", {"text": "again"})  # kept as it was
    await first.close()
    opened.remove(first)

    again = await _open(tmp_path, storage, opened)  # a restart on the same data
    choice = await again.choices.get("card-1")
    assert choice is not None
    assert (choice.channel, choice.payload, choice.chosen) == ("dingtalk", PAYLOAD, None)
    made = await again.choices.choose("card-1", 1)
    assert made is not None
    assert made.chosen == 1
    late = await again.choices.choose("card-1", 0)  # a second press: the first one stands
    assert late is not None
    assert late.chosen == 1
    assert await again.choices.get("unknown") is None
    assert await again.choices.choose("unknown", 0) is None


async def test_two_processes_pressing_at_once_settle_one_choice(
    tmp_path: Path, pg_dsn: str, opened: list[Stores]
) -> None:
    """On PostgreSQL (on SQLite one process owns the data dir)."""
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    a = await _open(tmp_path, storage, opened)
    b = await _open(tmp_path, storage, opened)
    await a.choices.put("card-2", "dingtalk", PAYLOAD)
    results = await asyncio.gather(
        *(s.choices.choose("card-2", i) for i in range(6) for s in (a, b))
    )
    assert len({r.chosen for r in results if r is not None}) == 1
    assert all(r is not None for r in results)


async def test_pending_lists_the_unanswered_choices_of_a_prefix(
    tmp_path: Path, storage: dict[str, Any], opened: list[Stores]
) -> None:
    stores = await _open(tmp_path, storage, opened)
    for key in ("approval:a", "approval:b", "card-1", "approval:c"):
        await stores.choices.put(key, "telegram", PAYLOAD)
    await stores.choices.choose("approval:b", 0)
    pending = await stores.choices.pending("approval:")
    assert [c.key for c in pending] == ["approval:a", "approval:c"]
    assert [c.key for c in await stores.choices.pending("approval:", limit=1)] == ["approval:a"]
