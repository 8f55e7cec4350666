"""Feishu channel benchmark against the fake Feishu (real lark-oapi, real long connection).

Figures: time from an inbound event to the first visible card (p50/p99), token-to-visible
latency while streaming through CardKit (p50/p99), and 50 cards streaming at once with the
number of rate violations the fake saw (must be 0) and the busiest card's ops in any second.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from channels.base import ChatRef, InboundMessage, PublishResult, ReplyDoc, UserRef
from channels.choices import MemoryChoices
from channels.feishu.channel import FeishuChannel
from channels.feishu.config import FeishuConfig
from tests.channels.feishu import payloads
from tests.fakes.feishu_server import FakeFeishu

STREAM_INTERVAL = 0.3


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


class _Ctx:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir, self.bot_name = data_dir, "Antler"
        self.choices = MemoryChoices()
        self.channel: FeishuChannel | None = None
        self.opened: list[asyncio.Task[Any]] = []

    async def publish(self, msg: InboundMessage) -> PublishResult:
        assert self.channel is not None
        self.opened.append(asyncio.create_task(self.channel.open_reply(msg, ReplyDoc())))
        return PublishResult.accepted

    def add_route(self, *_: Any) -> None: ...

    def report(self, **_: Any) -> None: ...


async def _channel(fake: FakeFeishu, ctx: _Ctx) -> FeishuChannel:
    config = FeishuConfig(
        enabled=True,
        app_id=f"cli_{uuid.uuid4().hex[:10]}",
        app_secret="s",
        domain=fake.base,
        stream_interval=STREAM_INTERVAL,
    )
    channel = FeishuChannel(config, ctx)  # type: ignore[arg-type]
    ctx.channel = channel
    await channel.start()
    return channel


async def first_card(fake: FakeFeishu, n: int = 30) -> list[float]:
    out = []
    for i in range(n):
        mid = f"om_first_{i}"
        start = time.monotonic()
        fake.push_event(payloads.message_event("hi", message_id=mid))
        while not fake.replies_to(mid):
            await asyncio.sleep(0.001)
        out.append(fake.messages[fake.replies_to(mid)[0]]["at"] - start)
    return out


async def _stream_one(
    channel: FeishuChannel, mid: str, tokens: int, tps: float, produced: dict[str, float]
) -> Any:
    msg = InboundMessage(
        event_id=mid,
        message_id=mid,
        text="q",
        sender=UserRef(id="u"),
        chat=ChatRef(channel="feishu", chat_id="oc_bench"),
    )
    handle = await channel.open_reply(msg, ReplyDoc())
    text, done = "", asyncio.Event()

    async def produce() -> None:
        nonlocal text
        for i in range(tokens):
            key = f"{mid}-t{i}"
            text += key + " "
            produced[key] = time.monotonic()
            await asyncio.sleep(1 / tps)
        done.set()

    producer = asyncio.create_task(produce())
    while not done.is_set():
        await asyncio.sleep(STREAM_INTERVAL)
        await channel.update_reply(handle, ReplyDoc(text=text))
    await producer
    await channel.finish_reply(handle, ReplyDoc(text=text, status="done"))
    return handle


def _visible_latencies(fake: FakeFeishu, produced: dict[str, float]) -> list[float]:
    seen: dict[str, float] = {}
    for call in fake.calls:
        op = call.headers.get("op")
        if op not in ("element_content", "card_update"):
            continue
        content = str(call.body)
        for key in produced:
            if key not in seen and key in content:
                seen[key] = call.at
    return [seen[k] - produced[k] for k in produced if k in seen]


def _busiest_second(fake: FakeFeishu) -> int:
    per_card: dict[str, list[float]] = {}
    for call in fake.calls:
        if "/cardkit/v1/cards/" in call.path:
            per_card.setdefault(call.path.split("/")[5], []).append(call.at)
    return max(
        (sum(1 for t in ts if s <= t < s + 1) for ts in per_card.values() for s in ts), default=0
    )


async def run() -> dict[str, Any]:
    fake = FakeFeishu().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            ctx = _Ctx(Path(tmp))
            channel = await _channel(fake, ctx)
            firsts = await first_card(fake)
            await asyncio.gather(*ctx.opened)
            produced: dict[str, float] = {}
            await _stream_one(channel, "om_stream", tokens=100, tps=40, produced=produced)
            visible = _visible_latencies(fake, produced)
            fake.calls.clear()
            start = time.monotonic()
            many: dict[str, float] = {}
            await asyncio.gather(
                *(_stream_one(channel, f"om_many{i}", 40, 20, many) for i in range(50))
            )
            wall = time.monotonic() - start
            await channel.stop()
        return {
            "first_card_ms_p50": _pct(firsts, 0.5),
            "first_card_ms_p99": _pct(firsts, 0.99),
            "token_to_visible_ms_p50": _pct(visible, 0.5),
            "token_to_visible_ms_p99": _pct(visible, 0.99),
            "concurrent_cards": 50,
            "concurrent_wall_s": round(wall, 2),
            "concurrent_card_ops": len(fake.calls),
            "busiest_card_ops_in_1s": _busiest_second(fake),
            "rate_violations": len(fake.violations),
        }
    finally:
        fake.stop()


if __name__ == "__main__":
    print(asyncio.run(run()))
