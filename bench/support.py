"""Shared pieces for benchmarks: percentiles, RSS, CPU, loop lag, a fake OpenAI server process."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bot import texts
from channels.base import ChatRef, InboundMessage, UserRef
from tests.fakes.openai_server import FakeOpenAI


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def ms_p50_p99(prefix: str, seconds: list[float]) -> dict[str, float]:
    """`<prefix>_ms_p50` and `<prefix>_ms_p99` of `seconds`, in milliseconds."""
    return {f"{prefix}_ms_p{p}": round(pct(seconds, p) * 1000, 1) for p in (50, 99)}


async def at_once(
    svc: Any, openai: FakeOpenAI, count: int, push: Callable[[], object], timeout: float
) -> tuple[float, float]:
    """`push()` sends `count` messages at once; the wall and CPU seconds until the model has been
    asked `count` times (within `timeout`) and the service is idle again (within twice that)."""
    started, cpu = time.monotonic(), cpu_seconds()
    push()
    await openai.wait_requests(count, timeout=timeout)
    await svc.idle(timeout=2 * timeout)
    return time.monotonic() - started, cpu_seconds() - cpu


def load_figures(
    count: int, finals: int, wall: float, cpu: float, violations: int, **more: Any
) -> dict[str, Any]:
    """A load phase's figures: chats, finals delivered, `more`, wall time, CPU per answer (the
    whole process: the service, the fake platform and the fake model, threads included) and the
    rule violations the fake counted."""
    return {
        "load_chats": count,
        "load_finals_delivered": finals,
        **more,
        "load_wall_s": round(wall, 2),
        "load_cpu_ms_per_answer": round(cpu / count * 1000, 1),
        "load_rule_violations": violations,
    }


def summary(prefix: str, values: list[float], scale: float = 1000.0) -> dict[str, float]:
    """p50/p99/mean in milliseconds (scale) under `prefix_`."""
    return {
        f"{prefix}_p50_ms": round(pct(values, 50) * scale, 3),
        f"{prefix}_p99_ms": round(pct(values, 99) * scale, 3),
        f"{prefix}_mean_ms": round(statistics.fmean(values) * scale, 3) if values else 0.0,
    }


def per_call_us(fn: Callable[[], object], n: int = 20_000) -> float:
    """Microseconds per call of `fn`, over `n` calls in a row."""
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return round((time.perf_counter() - start) / n * 1e6, 2)


async def median_us(fn: Callable[[], Awaitable[object]], n: int = 2_000) -> float:
    """The median of `n` awaited calls of `fn`, in microseconds."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1e6, 1)


Phase = Callable[[Any, Any, Path], Awaitable[dict[str, Any]]]


async def run_phases(fake_type: Callable[[], Any], *phases: Phase) -> dict[str, Any]:
    """Each phase against a fresh platform fake (`fake_type`), a fresh fake model and a temporary
    data directory; their figures merged."""
    results: dict[str, Any] = {}
    for phase in phases:
        with (
            fake_type().start() as fake,
            FakeOpenAI().start() as openai,
            tempfile.TemporaryDirectory() as tmp,
        ):
            results.update(await phase(fake, openai, Path(tmp)))
    return results


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize()


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cpu_seconds() -> float:
    """CPU time (user + system) this process used so far, all its threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def raise_fd_limit(wanted: int = 16_384) -> int:
    """Raise the soft open-files limit (1,000 sockets need more than the usual 1,024)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class LoopLag:
    """Samples how late a 10 ms timer fires on the running loop, and the peak RSS meanwhile. The
    one loop-lag sampler: tests check that nothing blocks the loop without timing it
    (tests/harness.py `BlockingIoWatch`)."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.lags: list[float] = []
        self.peak_rss = 0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(self.interval)
            self.lags.append(max(0.0, loop.time() - start - self.interval))
            if len(self.lags) % 10 == 0:
                self.peak_rss = max(self.peak_rss, rss_bytes())

    def __enter__(self) -> LoopLag:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()


def _serve_fake(conn: Any, tokens_per_second: float | None, text: str, tick: float) -> None:
    import sys
    import threading

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.fake_streams import TickedFakeOpenAI
    from tests.fakes.openai_wire import Reply

    try:  # the fake's own loop: cheaper writes, less of the shared CPU
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:
        pass
    fake = TickedFakeOpenAI(tick=tick).start()
    if text:
        fake.responder = lambda body: Reply(text=text, tokens_per_second=tokens_per_second)
    conn.send(fake.base_url)
    threading.Event().wait()


class FakeOpenAIProcess:
    """The fake OpenAI server in a child process, so it does not share the benchmark's CPU/GIL.
    Paced streams are written by one ticker every `tick` seconds (bench/fake_streams.py)."""

    def __init__(
        self, tokens_per_second: float | None = None, text: str = "", tick: float = 0.005
    ) -> None:
        parent, child = mp.Pipe()
        self._parent = parent
        self.proc = mp.get_context("fork").Process(
            target=_serve_fake, args=(child, tokens_per_second, text, tick), daemon=True
        )

    def __enter__(self) -> str:
        self.proc.start()
        url: str = self._parent.recv()
        return url

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.join(5)

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the fake's process used so far."""
        return process_cpu_seconds(self.proc.pid or 0)


def process_cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of another process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def temp_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="antler-bench-"))


def register_recording_channel() -> None:
    import channels
    from bot.config.schema import channels_model

    channels.REGISTRY["test"] = (
        "tests.fakes.recording_channel:RecordingConfig",
        "tests.fakes.recording_channel:RecordingChannel",
    )
    channels_model.cache_clear()


Factory = Callable[[], Any]


class BenchContext:
    """The ChannelContext benchmarks give a channel: publishes are kept (list and queue) and
    handed to `on_publish` when set; no routes, no native menu, reports ignored."""

    def __init__(self, data_dir: Path) -> None:
        from channels.choices import MemoryChoices

        self.data_dir, self.bot_name = data_dir, "Antler"
        self.choices = MemoryChoices()
        self.choice_expired = texts.CHOICE_EXPIRED
        self.published: list[Any] = []
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.on_publish: Callable[[Any], None] | None = None

    async def publish(self, msg: Any) -> Any:
        from channels.base import PublishResult

        self.published.append(msg)
        self.queue.put_nowait(msg)
        if self.on_publish is not None:
            self.on_publish(msg)
        return PublishResult.accepted

    languages: tuple[str, ...] = ()

    def commands(self, language: str = "") -> tuple[Any, ...]:
        return ()

    def add_route(self, *_: Any) -> None:
        raise NotImplementedError("benchmarks serve no webhook routes")

    def report(self, **_: Any) -> None:
        return None


def slack_thread_message(ts: str, event_id: str) -> InboundMessage:
    """The message that starts a Slack thread (`ts`) in channel C0001 of workspace T0001."""
    chat = ChatRef(
        channel="slack", chat_id="C0001", chat_type="group", workspace="T0001", topic_id=ts
    )
    return InboundMessage(
        event_id=event_id,
        chat=chat,
        sender=UserRef(id="U0001"),
        text="go",
        message_id=ts,
        raw={"thread_ts": ts},
    )
