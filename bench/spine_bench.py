"""The spine's own cost: dispatcher overhead, throughput, 1,000 concurrent streams, idle memory.

(a) publish → first agent event, p50/p99, with a zero-latency in-process model
(b) turns/s over 1,000 conversations: in-process model, and the fake OpenAI server (own process);
    steady state (after one warm-up turn), with the process's CPU time per turn
(c) 1,000 conversations streaming at once (50 tokens/s, 500 tokens each) through the fake OpenAI
    server (bench/fake_streams.py, a process of its own): streams finished, loop lag p50/p99, peak
    RSS, CPU per token of the service and of the fake. The recording channel gets an edit budget
    of 2 updates/s per reply, as real platforms impose (see docs/performance.md).
(d) memory per idle conversation: 10,000 stored (RSS and traced Python heap), and the Python heap
    kept per conversation that has had one turn and gone idle (its RSS change is below the noise
    of the memory the turns themselves freed)

`SPINE_PHASES=c` runs only those phases (letters, default all); `SPINE_STREAMS`,
`SPINE_STREAM_TPS` and `SPINE_STREAM_TOKENS` change (c)'s streams, rate and length;
`SPINE_WORKERS=N` splits (c)'s streams over N worker processes, each a service with its own
loop (the scale-out path on one machine), and reports each worker's lag and the sum of RSS.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from bench.support import (
    FakeOpenAIProcess,
    LoopLag,
    cpu_seconds,
    register_recording_channel,
    rss_bytes,
    summary,
    temp_dir,
)
from bot.app import App
from bot.config.schema import settings_from_dict
from bot.runtime import freeze_startup_objects
from channels.base import Capabilities, ChatRef, RateBudget
from gateway.server import serve

ECHO = {"name": "echo", "model": "echo", "use": "tests.fakes.echo_model:EchoChatModel"}
STREAM_TOKENS = int(os.environ.get("SPINE_STREAM_TOKENS", "500"))
STREAM_TPS = float(os.environ.get("SPINE_STREAM_TPS", "50"))
STREAM_TEXT = " ".join(f"w{i % 10}" for i in range(STREAM_TOKENS))
STREAMS = int(os.environ.get("SPINE_STREAMS", "1000"))
WORKERS = int(os.environ.get("SPINE_WORKERS", "1"))
PHASES = os.environ.get("SPINE_PHASES", "abcd")
EDIT_BUDGET = (RateBudget(scope="reply", per_second=2.0, burst=1),)


def _fake(url: str) -> dict[str, Any]:
    return {"name": "fake", "model": "fake", "api_key": "sk", "base_url": url, "max_retries": 0}


def _app(
    models: list[dict[str, Any]],
    max_runs: int = 64,
    capabilities: Capabilities | None = None,
    extras: bool = False,
    storage: dict[str, Any] | None = None,
) -> App:
    """The service with the recording channel. `extras` keeps the agent's title and memory
    model calls (on by default in the product); without them one turn is one model call."""
    register_recording_channel()
    agent = {} if extras else {"title": {"enabled": False}, "memory": {"enabled": False}}
    settings = settings_from_dict(
        {
            "storage": {"data_dir": str(temp_dir()), **(storage or {})},
            "gateway": {"enabled": False},
            "models": models,
            "agent": agent,
            "channels": {
                "test": {"enabled": True},
                "max_concurrent_runs": max_runs,
                "inbound_queue_size": 20_000,
            },
        }
    )
    kwargs = {"test": {"capabilities": capabilities}} if capabilities else None
    return App(settings, channel_kwargs=kwargs, front=serve)


class Finishes:
    """Counts finished replies on the recording channel without rescanning its whole log."""

    def __init__(self, channel: Any) -> None:
        self.channel = channel
        self.done = 0
        self.failed = 0
        self._seen = 0

    def poll(self) -> int:
        calls = self.channel.calls
        for call in calls[self._seen :]:
            if call.kind == "finish":
                self.done += 1
                self.failed += call.doc is not None and call.doc.status == "failed"
        self._seen = len(calls)
        return self.done

    async def wait(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.poll() < count and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def forget_calls(self) -> None:
        """Drop the channel's record (the fake's memory, not the service's)."""
        self.poll()
        self.channel.calls.clear()
        self._seen = 0


def _watch_first_events(app: App) -> dict[str, float]:
    """Record when each thread's first agent event reaches the service."""
    first: dict[str, float] = {}
    stream = app.runner.stream

    async def timed(thread_id: str, *args: Any, **kw: Any) -> AsyncIterator[Any]:
        async for event in stream(thread_id, *args, **kw):
            first.setdefault(thread_id, time.perf_counter())
            yield event

    app.runner.stream = timed  # type: ignore[method-assign]
    return first


async def dispatcher_overhead(
    samples: int = 300, storage: dict[str, Any] | None = None
) -> dict[str, float]:
    app = _app([ECHO], storage=storage)
    await app.start(gateway=False)
    first = _watch_first_events(app)
    channel: Any = app.channels["test"]
    done = Finishes(channel)
    latencies = []
    for i in range(samples):
        msg = channel.message(f"hi {i}", chat_id=f"lat{i}")
        thread = (await app.conversations.get_or_create(msg.chat)).thread_id
        start = time.perf_counter()
        await app.bus.publish(msg)
        while thread not in first:
            await asyncio.sleep(0)
        latencies.append(first[thread] - start)
        await done.wait(i + 1, 5)
    await app.stop()
    return summary("publish_to_first_event", latencies[20:])


async def throughput(
    models: list[dict[str, Any]],
    turns: int = 1000,
    extras: bool = False,
    storage: dict[str, Any] | None = None,
) -> dict[str, float]:
    app = _app(models, max_runs=64, extras=extras, storage=storage)
    await app.start(gateway=False)
    freeze_startup_objects()  # as `antler serve` does
    channel: Any = app.channels["test"]
    done = Finishes(channel)
    await channel.inject("warm up", chat_id="warm")
    await done.wait(1, 30)
    cpu, start = cpu_seconds(), time.perf_counter()
    for i in range(turns):
        await channel.inject(f"turn {i}", chat_id=f"conv{i}")
    await done.wait(turns + 1, 300)
    elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    await app.stop()
    return {
        "turns_per_s": round((done.done - 1) / elapsed, 1),
        "cpu_ms_per_turn": round(cpu / turns * 1000, 2),
    }


async def concurrent_streams(convs: int = STREAMS, timeout: float = 240) -> dict[str, float]:
    """(c) in this process, or over `SPINE_WORKERS` worker processes (bench/spine_workers.py)."""
    fake = FakeOpenAIProcess(tokens_per_second=STREAM_TPS, text=STREAM_TEXT)
    with fake as url:
        fake_cpu = fake.cpu_seconds()
        if WORKERS > 1:
            from bench.spine_workers import across_workers

            figures = await across_workers(url, convs, WORKERS, timeout)
        else:
            figures = await stream_load(url, convs, timeout)
        fake_cpu = fake.cpu_seconds() - fake_cpu
    figures.update(
        {
            "fake_cpu_us_per_token": round(fake_cpu / (convs * STREAM_TOKENS) * 1e6, 1),
            "streams": convs,
            "tokens_per_second": STREAM_TPS,
            "workers": WORKERS,
        }
    )
    return figures


async def stream_load(
    url: str, convs: int, timeout: float, go: Callable[[], Awaitable[None]] | None = None
) -> dict[str, float]:
    """`convs` streams at once through this process's service; `go` is awaited once it runs."""
    caps = Capabilities(max_text_len=4000, edit_budget=EDIT_BUDGET)
    app = _app([_fake(url)], max_runs=convs, capabilities=caps)
    await app.start(gateway=False)
    freeze_startup_objects()  # as `antler serve` does
    if go is not None:
        await go()
    channel: Any = app.channels["test"]
    done = Finishes(channel)
    start, cpu = time.perf_counter(), cpu_seconds()
    with LoopLag() as lag:
        for i in range(convs):
            await channel.inject("stream please", chat_id=f"s{i}")
        await done.wait(convs, timeout)
    elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    await app.stop()
    figures = summary("loop_lag", lag.lags)
    figures.update(
        {
            "streams_finished": done.done - done.failed,
            "streams_failed": done.failed,
            "wall_seconds": round(elapsed, 1),
            "ideal_seconds": round(STREAM_TOKENS / STREAM_TPS, 1),
            "peak_rss_mb": round(lag.peak_rss / 2**20, 1),
            "cpu_us_per_token": round(cpu / (convs * STREAM_TOKENS) * 1e6, 1),
        }
    )
    return figures


async def idle_conversation_memory(stored: int = 10_000, turned: int = 2_000) -> dict[str, float]:
    """Memory the service keeps per idle conversation (the recording channel's log excluded)."""
    app = _app([ECHO])
    await app.start(gateway=False)
    channel: Any = app.channels["test"]
    done = Finishes(channel)
    await channel.inject("warm up", chat_id="warm")
    await done.wait(1, 30)
    done.forget_calls()
    gc.collect()
    tracemalloc.start()
    rss0, heap0 = rss_bytes(), tracemalloc.get_traced_memory()[0]
    for i in range(stored):
        await app.conversations.get_or_create(ChatRef(channel="test", chat_id=f"idle{i}"))
    gc.collect()
    rss1, heap1 = rss_bytes(), tracemalloc.get_traced_memory()[0]
    target = done.done + turned
    for i in range(turned):
        await channel.inject(f"hello {i}", chat_id=f"idle{i}")
    await done.wait(target, 120)
    await app.dispatcher.wait_idle(10)
    done.forget_calls()
    gc.collect()
    heap2 = tracemalloc.get_traced_memory()[0]  # RSS here moves with freed turn garbage
    tracemalloc.stop()
    assert await app.conversations.count() >= stored
    await app.stop()
    return {
        "stored_rss_bytes_per_conv": round((rss1 - rss0) / stored, 1),
        "stored_heap_bytes_per_conv": round((heap1 - heap0) / stored, 1),
        "after_turn_heap_bytes_per_conv": round((heap2 - heap1) / turned, 1),
    }


async def run() -> dict[str, object]:
    figures: dict[str, object] = {}
    if "a" in PHASES:
        figures.update(await dispatcher_overhead())
    if "b" in PHASES:
        figures.update({f"in_process_{k}": v for k, v in (await throughput([ECHO])).items()})
        with_extras = await throughput([ECHO], extras=True)
        figures.update({f"in_process_with_title_memory_{k}": v for k, v in with_extras.items()})
        with FakeOpenAIProcess() as url:
            fake = await throughput([_fake(url)])
            figures.update({f"fake_openai_{k}": v for k, v in fake.items()})
    if "c" in PHASES:
        figures.update({f"concurrent_{k}": v for k, v in (await concurrent_streams()).items()})
    if "d" in PHASES:
        figures.update({f"idle_{k}": v for k, v in (await idle_conversation_memory()).items()})
    return figures
