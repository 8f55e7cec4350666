"""The collector settings `antler serve` runs with (bot/runtime.py)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from bot.runtime import GC_THRESHOLD, freeze_startup_objects, run, tune_gc


@pytest.fixture
def restore_gc() -> Iterator[None]:
    """Nothing frozen during the test; afterwards the test process's own settings again (it
    froze what collection imported: tests/conftest.py)."""
    before, was_frozen = gc.get_threshold(), gc.get_freeze_count() > 0
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)
    if was_frozen:
        gc.freeze()


@pytest.mark.usefixtures("restore_gc")
def test_young_generation_is_collected_less_often() -> None:
    tune_gc()
    assert gc.get_threshold() == GC_THRESHOLD
    assert GC_THRESHOLD[0] > 700 * 10  # CPython's default is 700


@pytest.mark.usefixtures("restore_gc")
def test_start_up_objects_are_frozen_out_of_collections() -> None:
    kept = [object() for _ in range(100)]
    freeze_startup_objects()
    assert gc.get_freeze_count() >= len(kept)


def test_the_service_runs_on_uvloop_where_installed() -> None:
    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert run(loop_module()).startswith("uvloop")
