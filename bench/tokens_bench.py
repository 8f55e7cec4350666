"""CPU per streamed token against its floor, loop lag and RSS per running stream, one run.

Against one fake model process (bench/fake_streams.py: `TOKENS_PER_STREAM` tokens per stream at
`TOKENS_TPS` tokens/s), for each load in `TOKENS_LOADS` (streams at once, default 100, 1,000
and 300) three sides run, each in a fresh process of its own, in alternating order:

- floor: the same streams read with aiohttp as the SDK's transport reads them (16 KB reads),
  each SSE event decoded by the SDK's `SSEDecoder` and its JSON parsed, nothing else;
- before: the whole service (spine_bench's recording channel, edit budget 2/s per reply) with
  `agent.chunks.HAND_OVER_EVERY = 0` (a read is handed to LangChain as soon as it arrives);
- after: the same with the shipped `HAND_OVER_EVERY`.

Figures per side: process CPU per token (user + system, all threads), loop lag p50/p99 (a 10 ms
timer), RSS per stream ((peak RSS - RSS after start-up and one warm-up turn) / streams, and for
the service the same half-way through the tokens, when every stream runs), wall time. CPU is
the figure to compare: the machine is shared.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import time
from typing import Any

from bench.support import FakeOpenAIProcess, LoopLag, cpu_seconds, rss_bytes, summary

TOKENS = int(os.environ.get("TOKENS_PER_STREAM", "500"))
TPS = float(os.environ.get("TOKENS_TPS", "50"))
LOADS = [int(n) for n in os.environ.get("TOKENS_LOADS", "100,1000,300").split(",")]
TEXT = " ".join(f"w{i % 10}" for i in range(TOKENS))
SIDES = ("floor", "before", "after")


async def _read_one(session: Any, url: str) -> int:
    from openai._streaming import SSEDecoder

    body = {"model": "fake", "messages": [{"role": "user", "content": "go"}], "stream": True}
    decoder, events = SSEDecoder(), 0
    async with session.post(f"{url}/chat/completions", json=body) as response:
        async for data in response.content.iter_chunked(16 * 1024):
            for sse in decoder.iter_bytes(iter((data,))):
                if not sse.data.startswith("[DONE]"):
                    json.loads(sse.data)
                    events += 1
    return events


async def floor(url: str, streams: int) -> dict[str, float]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await _read_one(session, url)  # warm up
        rss0, cpu, start = rss_bytes(), cpu_seconds(), time.perf_counter()
        with LoopLag() as lag:
            counts = await asyncio.gather(*(_read_one(session, url) for _ in range(streams)))
        return _figures(lag, rss0, cpu, start, streams, min(counts) >= TOKENS)


async def service(url: str, streams: int) -> dict[str, float]:
    from bench.spine_bench import EDIT_BUDGET, Finishes, _app, _fake
    from bot.runtime import freeze_startup_objects
    from channels.base import Capabilities

    caps = Capabilities(max_text_len=4000, edit_budget=EDIT_BUDGET)
    app = _app([_fake(url)], max_runs=streams, capabilities=caps)
    await app.start(gateway=False)
    channel: Any = app.channels["test"]
    done = Finishes(channel)
    await channel.inject("warm up", chat_id="warm")
    await done.wait(1, 60)
    freeze_startup_objects()  # as `antler serve` does
    rss0, cpu, start = rss_bytes(), cpu_seconds(), time.perf_counter()
    with LoopLag() as lag:
        for i in range(streams):
            await channel.inject("stream please", chat_id=f"s{i}")
        half_way = asyncio.create_task(_rss_half_way())
        await done.wait(streams + 1, 300)
    figures = _figures(lag, rss0, cpu, start, streams, done.done - done.failed == streams + 1)
    running = max(0, half_way.result() - rss0) if half_way.done() else 0
    figures["rss_kb_per_running_stream"] = round(running / streams / 1024, 1)
    await app.stop()
    return figures


async def _rss_half_way() -> int:
    """RSS half-way through the streams' tokens: every stream running."""
    await asyncio.sleep(TOKENS / TPS / 2)
    return rss_bytes()


def _figures(
    lag: LoopLag, rss0: int, cpu: float, start: float, streams: int, all_done: bool
) -> dict[str, float]:
    elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    figures = summary("loop_lag", lag.lags)
    figures.update(
        {
            "cpu_us_per_token": round(cpu / (streams * TOKENS) * 1e6, 1),
            "rss_kb_per_stream": round(max(0, lag.peak_rss - rss0) / streams / 1024, 1),
            "wall_seconds": round(elapsed, 1),
            "all_finished": float(all_done),
        }
    )
    return figures


def _side(conn: Any, side: str, url: str, streams: int) -> None:
    from bench.support import raise_fd_limit
    from bot.runtime import run, tune_gc

    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    raise_fd_limit()
    tune_gc()
    if side == "floor":
        conn.send(run(floor(url, streams)))
        return
    import agent.chunks

    if side == "before":
        agent.chunks.HAND_OVER_EVERY = 0.0
    conn.send(run(service(url, streams)))


async def _in_process(side: str, url: str, streams: int) -> dict[str, float]:
    parent, child = mp.Pipe()
    proc = mp.get_context("spawn").Process(target=_side, args=(child, side, url, streams))
    proc.start()
    result: dict[str, float] = await asyncio.to_thread(parent.recv)
    proc.join(30)
    return result


async def run() -> dict[str, object]:
    figures: dict[str, object] = {"tokens_per_stream": TOKENS, "tokens_per_second": TPS}
    with FakeOpenAIProcess(tokens_per_second=TPS, text=TEXT) as url:
        for index, streams in enumerate(LOADS):
            order = SIDES if index % 2 == 0 else tuple(reversed(SIDES))
            for side in order:
                result = await _in_process(side, url, streams)
                figures.update({f"{streams}_{side}_{k}": v for k, v in result.items()})
            for side in ("before", "after"):
                ratio = figures[f"{streams}_{side}_cpu_us_per_token"]
                assert isinstance(ratio, float)
                floor_us = figures[f"{streams}_floor_cpu_us_per_token"]
                assert isinstance(floor_us, float)
                figures[f"{streams}_{side}_over_floor"] = round(ratio / floor_us, 2)
    return figures
