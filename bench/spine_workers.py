"""(c) split over worker processes on one machine: each a whole service with its own event loop,
its share of the streams, against the same fake model. Workers start their services, then all
begin at once; each reports its own loop lag and peak RSS."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import time
from typing import Any


def _worker(conn: Any, url: str, convs: int, timeout: float) -> None:
    from bench.support import raise_fd_limit
    from bot.runtime import run, tune_gc

    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    raise_fd_limit()
    tune_gc()
    from bench.spine_bench import stream_load

    async def go() -> None:
        conn.send("ready")
        await asyncio.to_thread(conn.recv)

    conn.send(run(stream_load(url, convs, timeout, go)))


async def across_workers(url: str, convs: int, workers: int, timeout: float) -> dict[str, float]:
    ctx = mp.get_context("spawn")
    shares = [convs // workers + (i < convs % workers) for i in range(workers)]
    pipes, procs = [], []
    for share in shares:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, url, share, timeout), daemon=True)
        proc.start()
        pipes.append(parent)
        procs.append(proc)
    for pipe in pipes:
        await asyncio.to_thread(pipe.recv)  # its service runs
    start = time.perf_counter()
    for pipe in pipes:
        pipe.send("go")
    results: list[dict[str, float]] = [await asyncio.to_thread(pipe.recv) for pipe in pipes]
    elapsed = time.perf_counter() - start
    for proc in procs:
        proc.join(10)
    figures: dict[str, float] = {
        "loop_lag_p99_ms": max(r["loop_lag_p99_ms"] for r in results),
        "loop_lag_p50_ms": max(r["loop_lag_p50_ms"] for r in results),
        "streams_finished": sum(r["streams_finished"] for r in results),
        "streams_failed": sum(r["streams_failed"] for r in results),
        "wall_seconds": round(elapsed, 1),
        "ideal_seconds": results[0]["ideal_seconds"],
        "peak_rss_mb": round(sum(r["peak_rss_mb"] for r in results), 1),
        "cpu_us_per_token": round(
            sum(r["cpu_us_per_token"] * share for r, share in zip(results, shares, strict=True))
            / convs,
            1,
        ),
    }
    for index, r in enumerate(results):
        figures[f"worker{index}_loop_lag_p99_ms"] = r["loop_lag_p99_ms"]
        figures[f"worker{index}_peak_rss_mb"] = r["peak_rss_mb"]
    return figures
