"""Process-wide runtime settings for `antler serve` (and the benchmarks that measure it).

The event loop: uvloop (libuv) where it is installed (Linux and macOS), asyncio's own elsewhere.
With hundreds of streams it spends less CPU per socket read and timer, and keeps timer lag
lower; nothing in Antler depends on which loop runs.

The garbage collector: with hundreds of conversations streaming, the young generation fills
every ~700 allocations and each collection walks the objects the running turns hold
(messages, chunks, graph state); the full collections that follow stall the loop for hundreds
of milliseconds. A larger young generation and `gc.freeze()` of everything loaded at start-up
(modules, graphs, settings: never garbage) keep the loop responsive; reference counting still
frees almost everything at once, the collector only finds cycles, a little later.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

GC_THRESHOLD = (20_000, 20, 20)


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on uvloop when it is installed."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def tune_gc() -> None:
    """Collect less often (see the module docstring); call once, at process start."""
    gc.set_threshold(*GC_THRESHOLD)


def freeze_startup_objects() -> None:
    """Move what start-up loaded out of the collector's sight; call after the app started."""
    gc.collect()
    gc.freeze()
