"""Compiled graphs, built once per agent profile, model, thinking/plan choice and bootstrap.

A build runs on a worker thread (a fraction of a second of CPU the loop would otherwise stall
for). Runs asking for the same graph meanwhile wait for the one build; a run cancelled while it
waits leaves the build to finish for the others. `clear()` (a config reload) drops every graph:
one being built then is handed to the runs that asked but not kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from typing import Any

from agent.context import BuildContext

Key = tuple[str, str, bool, bool, bool]  # profile, model, thinking, plan mode, bootstrap
Builder = Callable[[BuildContext], Any]  # runs on a worker thread


class GraphCache:
    def __init__(self) -> None:
        self._graphs: dict[Key, Any] = {}
        self._builds: dict[Key, asyncio.Future[Any]] = {}
        self._generation = 0  # one more at each clear: a graph built before is not kept

    async def get(self, ctx: BuildContext, build: Callable[[BuildContext], Any]) -> Any:
        key: Key = (ctx.profile_name, ctx.model.name, ctx.settings.thinking,
                    ctx.settings.plan_mode, bool(ctx.settings.bootstrap))  # fmt: skip
        graph = self._graphs.get(key)
        if graph is not None:
            return graph
        future = self._builds.get(key)
        if future is None:
            future = asyncio.ensure_future(self._build(key, ctx, build))
            self._builds[key] = future
            future.add_done_callback(functools.partial(self._built, key))
        return await asyncio.shield(future)

    async def _build(self, key: Key, ctx: BuildContext, build: Builder) -> Any:
        from agent.http import off_loop

        generation = self._generation
        graph = await off_loop(functools.partial(build, ctx))
        if generation == self._generation:  # not reconfigured meanwhile
            self._graphs[key] = graph
        return graph

    def _built(self, key: Key, future: asyncio.Future[Any]) -> None:
        if self._builds.get(key) is future:
            del self._builds[key]
        if not future.cancelled():
            future.exception()  # retrieved: the runs that asked were told

    def clear(self) -> None:
        self._graphs.clear()
        self._builds.clear()
        self._generation += 1

    async def drain(self) -> None:
        """Wait for builds under way (a build on its thread ends soon), then forget all."""
        for future in list(self._builds.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await future
        self._graphs.clear()

    def __len__(self) -> int:
        return len(self._graphs)
