"""The spine's own cost: dispatcher overhead, throughput, 1,000 concurrent streams, idle memory.

(a) publish → first agent event, p50/p99, with a zero-latency in-process model
(b) turns/s over 1,000 conversations: in-process model, and the fake OpenAI server (own process)
(c) 1,000 conversations streaming at once (20 tokens/s, 200 tokens each): loop lag p99, peak RSS
(d) RSS per idle conversation with 10,000 stored
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator
from typing import Any

from bench.support import (
    FakeOpenAIProcess,
    LoopLag,
    peak_rss_bytes,
    register_recording_channel,
    rss_bytes,
    summary,
    temp_dir,
)
from bot.app import App
from bot.config import settings_from_dict
from channels.base import ChatRef

ECHO = {"name": "echo", "model": "echo", "use": "tests.fakes.echo_model:EchoChatModel"}


def _app(models: list[dict[str, Any]], max_runs: int = 64) -> App:
    register_recording_channel()
    settings = settings_from_dict({
        "storage": {"data_dir": str(temp_dir())},
        "gateway": {"enabled": False},
        "models": models,
        "channels": {"test": {"enabled": True}, "max_concurrent_runs": max_runs,
                     "inbound_queue_size": 20_000},
    })
    return App(settings)


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


async def _wait_done(app: App, channel: Any, finals: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(channel.of("finish")) < finals and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


async def dispatcher_overhead(samples: int = 300) -> dict[str, float]:
    app = _app([ECHO])
    await app.start(gateway=False)
    first = _watch_first_events(app)
    channel: Any = app.channels["test"]
    latencies = []
    for i in range(samples):
        msg = channel.message(f"hi {i}", chat_id=f"lat{i}")
        thread = app.conversations.get_or_create(msg.chat).thread_id
        start = time.perf_counter()
        await app.bus.publish(msg)
        while thread not in first:
            await asyncio.sleep(0)
        latencies.append(first[thread] - start)
        await _wait_done(app, channel, i + 1, 5)
    await app.stop()
    return summary("publish_to_first_event", latencies[20:])


async def throughput(models: list[dict[str, Any]], turns: int = 1000) -> float:
    app = _app(models, max_runs=64)
    await app.start(gateway=False)
    channel: Any = app.channels["test"]
    start = time.perf_counter()
    for i in range(turns):
        await channel.inject(f"turn {i}", chat_id=f"conv{i}")
    await _wait_done(app, channel, turns, 300)
    elapsed = time.perf_counter() - start
    done = len(channel.of("finish"))
    await app.stop()
    return round(done / elapsed, 1)


async def concurrent_streams(convs: int = 1000) -> dict[str, float]:
    text = " ".join(f"w{i % 10}" for i in range(200))
    with FakeOpenAIProcess(tokens_per_second=20, text=text) as url:
        model = {"name": "fake", "model": "fake", "api_key": "sk", "base_url": url,
                 "max_retries": 0}
        app = _app([model], max_runs=convs)
        await app.start(gateway=False)
        channel: Any = app.channels["test"]
        start = time.perf_counter()
        with LoopLag() as lag:
            for i in range(convs):
                await channel.inject("stream please", chat_id=f"s{i}")
            await _wait_done(app, channel, convs, 240)
        elapsed = time.perf_counter() - start
        done = len(channel.of("finish"))
        await app.stop()
    figures = summary("loop_lag", lag.lags)
    figures.update({"streams_finished": done, "wall_seconds": round(elapsed, 1),
                    "peak_rss_mb": round(peak_rss_bytes() / 2**20, 1)})
    return figures


async def idle_conversation_rss(count: int = 10_000) -> float:
    app = _app([ECHO])
    gc.collect()
    before = rss_bytes()
    for i in range(count):
        app.conversations.get_or_create(ChatRef(channel="test", chat_id=f"idle{i}"))
    gc.collect()
    after = rss_bytes()
    assert app.conversations.count() >= count
    app.db.close()
    return round((after - before) / count, 1)


async def run() -> dict[str, object]:
    figures: dict[str, object] = {}
    figures.update(await dispatcher_overhead())
    figures["throughput_in_process_turns_per_s"] = await throughput([ECHO])
    with FakeOpenAIProcess() as url:
        fake = {"name": "fake", "model": "fake", "api_key": "sk", "base_url": url,
                "max_retries": 0}
        figures["throughput_fake_openai_turns_per_s"] = await throughput([fake])
    figures.update({f"concurrent_{k}": v for k, v in (await concurrent_streams()).items()})
    figures["idle_conversation_rss_bytes"] = await idle_conversation_rss()
    return figures
