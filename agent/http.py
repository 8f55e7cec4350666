"""One HTTP connection pool per model endpoint, on aiohttp, and chat streams read as dicts.

`langchain-openai` builds an `openai.AsyncOpenAI` per chat model on httpx, and for each streamed
chunk the SDK builds pydantic objects (`ChatCompletionChunk`, its choices and delta) that
langchain-openai turns straight back into a dict. Two maintained parts cut that cost:

- the SDK's own aiohttp transport (`openai.DefaultAioHttpClient`), shared by every model on
  the same endpoint in this event loop (one connection pool each), closed when the last
  runner stops;
- the SDK's public raw-response API: a streamed chat completion is parsed as
  `AsyncStream[object]`, which yields each chunk's JSON as a dict, the input langchain-openai
  reads anyway (it accepts dict chunks). Errors inside the stream still raise as before.
  Text deltas that one socket read already holds are joined into one chunk (agent/chunks.py),
  so LangChain's per-chunk work runs once per read when the loop is behind.

Only for `langchain_openai:ChatOpenAI` without a client or proxy of its own; other classes are
built as configured.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, Any], Any]] = (
    weakref.WeakKeyDictionary()
)
_creating = threading.Lock()
_OWN_CLIENT_KEYS = frozenset(
    {"http_async_client", "async_client", "root_async_client", "openai_proxy", "http_client"}
)


# the loop a model is built for on a worker thread (`off_loop`): its client joins that loop's pool
_BUILT_FOR: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "antler_built_for", default=None
)


async def off_loop(build: Callable[[], T]) -> T:
    """Run a synchronous build (a graph: imports, tool schemas, models) on a worker thread, so
    the loop serves the other conversations meanwhile; models built there share this loop's
    connection pools as if built on it."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    context.run(_BUILT_FOR.set, loop)
    return await loop.run_in_executor(None, context.run, build)


def shared_client(base_url: str, timeout: Any) -> Any | None:
    """The aiohttp-backed client for this endpoint in the running loop (or the loop `off_loop`
    builds for); None outside both."""
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = _BUILT_FOR.get()
    if loop is None:
        return None
    from openai import DefaultAioHttpClient

    with _creating:  # graphs of two runners may be built on two threads at once
        pools = _pools.setdefault(loop, {})
        key = (base_url, timeout)
        if key not in pools:
            pools[key] = DefaultAioHttpClient(timeout=timeout)
        return pools[key]


_users: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, int] = weakref.WeakKeyDictionary()


def hold_pools() -> None:
    """Count one more user of the running loop's shared clients (an AgentRunner)."""
    loop = asyncio.get_running_loop()
    _users[loop] = _users.get(loop, 0) + 1


async def release_pools() -> None:
    """One user fewer; the last one closes the loop's shared clients (their connections)."""
    loop = asyncio.get_running_loop()
    _users[loop] = max(0, _users.get(loop, 0) - 1)
    if _users[loop]:
        return
    for client in _pools.pop(loop, {}).values():
        await client.aclose()


def warm() -> None:
    """Import the transport ahead of the first request (`AgentRunner` does it on a thread)."""
    import openai._vendor.httpx_aiohttp.transport  # noqa: F401


def wants_shared_client(kwargs: dict[str, Any]) -> bool:
    return not _OWN_CLIENT_KEYS & kwargs.keys()


class DictChunkCompletions:
    """`chat.completions` whose streams yield each chunk's JSON as a dict, text deltas already
    read joined (non-streamed calls and everything else pass through)."""

    def __init__(self, completions: Any) -> None:
        self._completions = completions

    async def create(self, **kwargs: Any) -> Any:
        if not kwargs.get("stream"):
            return await self._completions.create(**kwargs)
        from agent.chunks import JoinedDeltas

        raw = await self._completions.with_raw_response.create(**kwargs)
        return raw.parse(to=JoinedDeltas)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)


def streams_dicts(model: Any) -> Any:
    """Point a built ChatOpenAI's chat completions at `DictChunkCompletions`."""
    if getattr(model, "async_client", None) is not None:
        model.async_client = DictChunkCompletions(model.async_client)
    return model
