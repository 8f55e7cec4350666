"""DingTalk figures against the fake server: first visible, token-to-visible, 50 cards at once.

- first visible: inbound CALLBACK frame pushed -> AI card delivered (through the whole service,
  agent on the fake OpenAI server), p50/p99 over sequential messages.
- token-to-visible: a token handed to the ReplyStreamer -> the first card streaming PUT that
  contains it, recorded by the fake (one reply, 40 tokens/s, stream_interval 0.5 s).
- 50 cards: 50 replies streaming at once through the real Pacer; PUT rate and latency.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from agent.events import TextDelta
from bench.support import BenchContext
from bot.replies import ReplyStreamer
from channels.base import InboundMessage
from channels.dingtalk.channel import DingTalkChannel
from channels.dingtalk.config import DingTalkConfig
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import ServiceHarness

TOKENS_PER_SECOND = 40.0


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


async def first_visible(fake: FakeDingTalk, tmp: Path, n: int = 20) -> dict[str, float]:
    openai = FakeOpenAI().start()
    config = {
        "enabled": True,
        "client_id": "bench",
        "client_secret": "s",
        "api_base": fake.base,
        "card_template_id": "tpl",
        "stream_interval": 0.5,
    }
    lat: list[float] = []
    try:
        async with ServiceHarness(tmp, openai, channels={"dingtalk": config}) as svc:
            for i in range(n):
                before = len(fake.requests("POST", "/v1.0/card/instances/deliver"))
                t0 = time.monotonic()
                fake.push_message(fake.chatbot_data(f"q{i}", sender=f"user-{i}"))
                rec = await fake.until(
                    partial(_since, fake, "/v1.0/card/instances/deliver", before)
                )
                lat.append(rec[0].at - t0)
                await svc.idle()
    finally:
        openai.stop()
    return {"first_visible_p50_ms": _pct(lat, 0.5), "first_visible_p99_ms": _pct(lat, 0.99)}


def _since(fake: FakeDingTalk, path: str, before: int) -> list[Any]:
    return fake.requests("POST", path)[before:]


async def _stream_reply(
    channel: DingTalkChannel, msg: InboundMessage, fake: FakeDingTalk, tokens: int
) -> list[tuple[str, float]]:
    """Stream `tokens` words; return (text so far, time handed over) per token."""
    streamer = ReplyStreamer(channel, msg)  # paced by the channel's own Pacer
    await streamer.open()
    sent: list[tuple[str, float]] = []
    text = ""
    for i in range(tokens):
        text += f"w{i} "
        streamer.on_event(TextDelta(text=f"w{i} "))
        sent.append((text, time.monotonic()))
        await asyncio.sleep(1 / TOKENS_PER_SECOND)
    await streamer.finish()
    return sent


def _visible_latencies(fake: FakeDingTalk, card_id: str, sent: list[tuple[str, float]]) -> list:
    puts = [
        c for c in fake.requests("PUT", "/v1.0/card/streaming") if c.body["outTrackId"] == card_id
    ]
    out = []
    for text, at in sent:
        shown = next((p.at for p in puts if p.body["content"].startswith(text.strip())), None)
        if shown is not None:
            out.append(shown - at)
    return out


async def streaming(fake: FakeDingTalk, tmp: Path, cards: int, tokens: int) -> dict[str, float]:
    config = DingTalkConfig(
        enabled=True,
        client_id=f"bench-{cards}",
        client_secret="s",
        api_base=fake.base,
        card_template_id="tpl",
        stream_interval=0.5,
    )
    ctx = BenchContext(tmp)
    channel = DingTalkChannel(config, ctx)
    await channel.start()
    try:
        for i in range(cards):
            fake.push_message(fake.chatbot_data("go", sender=f"u{i}", conversation_id=f"c{i}"))
        await fake.until(lambda: len(ctx.published) == cards, timeout=20)
        start_puts = len(fake.requests("PUT", "/v1.0/card/streaming"))
        t0 = time.monotonic()
        runs = await asyncio.gather(
            *(_stream_reply(channel, m, fake, tokens) for m in ctx.published)
        )
        elapsed = time.monotonic() - t0
    finally:
        await channel.stop()
    creates = fake.requests("POST", "/v1.0/card/instances")[-cards:]
    lat: list[float] = []
    finals = 0
    for create, sent in zip(creates, runs, strict=True):
        card_id = create.body["outTrackId"]
        lat.extend(_visible_latencies(fake, card_id, sent))
        finals += any(s["isFinalize"] for s in fake.streams(card_id))
    puts = fake.requests("PUT", "/v1.0/card/streaming")[start_puts:]
    return {
        "token_to_visible_p50_ms": _pct(lat, 0.5),
        "token_to_visible_p99_ms": _pct(lat, 0.99),
        "stream_puts": len(puts),
        "puts_per_second": round(len(puts) / elapsed, 1),
        "finals_delivered": finals,
        "seconds": round(elapsed, 2),
    }


async def run() -> dict[str, Any]:
    fake = FakeDingTalk().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            results: dict[str, Any] = {}
            results.update(await first_visible(fake, Path(tmp) / "fv"))
            one = await streaming(fake, Path(tmp) / "one", cards=1, tokens=120)
            results.update({f"one_card_{k}": v for k, v in one.items()})
            many = await streaming(fake, Path(tmp) / "many", cards=50, tokens=120)
            results.update({f"cards50_{k}": v for k, v in many.items()})
            return results
    finally:
        fake.stop()


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
