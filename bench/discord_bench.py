"""Discord channel benchmark: the whole service against the fake Discord and fake OpenAI servers.

- latency: MESSAGE_CREATE pushed -> first visible call (typing or message) on the fake, p50/p99.
- load: 50 DMs streaming at once (100 tokens at 50/s each): CPU per answer, visible calls per
  reply (message + edits), finals delivered, and the rule violations the fake counted (edits or
  messages over 5 per 5 s per channel, over 2,000 characters, calls inside a 429).

Run: `python -m bench.discord_bench` (or through `python -m bench discord`).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from bench.support import at_once, load_figures, ms_p50_p99, run_phases
from bench.telegram_bench import answer
from tests.fakes.discord_server import TOKEN, FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.harness import ServiceHarness

TPS = 50.0


def harness(data_dir: Path, openai: FakeOpenAI, fake: FakeDiscord) -> ServiceHarness:
    discord = {"enabled": True, "bot_token": TOKEN, "api_base": fake.api_base}
    return ServiceHarness(data_dir, openai, {"max_concurrent_runs": 128, "discord": discord})


def first_visible(fake: FakeDiscord, channel: int, after: float) -> float | None:
    times = [
        c.at
        for c in fake.calls
        if f"/channels/{channel}/" in c.path and c.method in ("POST", "PATCH") and c.at >= after
    ]
    return min(times) if times else None


async def latency(fake: FakeDiscord, openai: FakeOpenAI, data_dir: Path) -> dict[str, Any]:
    first: list[float] = []
    async with harness(data_dir, openai, fake) as svc:
        for n in range(21):
            channel = 7000 + n
            openai.script(Reply(text=answer(20), tokens_per_second=TPS))
            pushed = time.monotonic()
            fake.push_message(fake.message_payload(channel, f"question {n}"))
            await fake.until(lambda f, c=channel, p=pushed: first_visible(f, c, p) is not None)
            seen = first_visible(fake, channel, pushed)
            assert seen is not None
            first.append(seen - pushed)
            await svc.idle(timeout=30)
    return ms_p50_p99("first_visible", first)


async def load(fake: FakeDiscord, openai: FakeOpenAI, data_dir: Path) -> dict[str, Any]:
    text = answer(100)
    channels = [8000 + n for n in range(50)]
    openai.script(*[Reply(text=text, tokens_per_second=TPS) for _ in channels])
    async with harness(data_dir, openai, fake) as svc:

        def push() -> None:
            for channel in channels:
                fake.push_message(fake.message_payload(channel, "go"))

        wall, cpu = await at_once(svc, openai, len(channels), push, 60)
    finals = sum(1 for c in channels if [m["content"] for m in fake.bot_messages(c)] == [text])
    visible = round(len(fake.history) / len(channels), 1)
    return load_figures(
        len(channels), finals, wall, cpu, len(fake.violations), load_visible_calls_per_reply=visible
    )


async def run() -> dict[str, Any]:
    return {"model_tokens_per_second": TPS, **await run_phases(FakeDiscord, latency, load)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run()), indent=2))
