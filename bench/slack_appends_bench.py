"""Slack native streaming within the workspace budget: chat.startStream + chat.appendStream calls
per minute with 4 and 20 answers streaming at once in one workspace.

Each answer goes through the service's ReplyStreamer (the per-reply update budget, 2/s) into the
real SlackChannel (slack_sdk) against the fake Slack; the model side is simulated: 10 tokens of
~6 characters a second per answer for `SECONDS`. Figures per run: stream calls per minute over
the whole run and the most in any 60 s window (the budget: 1.5/s = 90/min, burst 5, under the
Tier 4 "100+ per minute"), mean characters per append, finals delivered with the full text.

Before this budget (issue 14): 4 answers made ~490 appendStream calls a minute, ~8 characters each.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agent.events import Final, TextDelta
from bench.support import BenchContext, slack_thread_message
from bot.replies import ReplyStreamer
from channels.slack.channel import SlackChannel
from channels.slack.config import SlackConfig
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.fakes.threaded import max_in_window

SECONDS = 60.0
TOKENS_PER_SECOND = 10.0
STREAM_CALLS = ("chat.startStream", "chat.appendStream")


async def _answer(channel: SlackChannel, i: int) -> str:
    msg = slack_thread_message(f"1700003{i:03d}.000100", f"E{i}")
    streamer = ReplyStreamer(channel, msg)
    await streamer.open()
    text, n = "", 0
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        token = f"w{n:03d}{i:02d} "
        text += token
        streamer.on_event(TextDelta(text=token))
        n += 1
        await asyncio.sleep(1 / TOKENS_PER_SECOND)
    streamer.on_event(Final(text=text))
    await streamer.finish()
    return text


async def _run(answers: int) -> dict[str, Any]:
    fake = FakeSlack().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = SlackConfig(
                enabled=True, bot_token=BOT_TOKEN, app_token=APP_TOKEN, api_base=fake.api_base
            )
            channel = SlackChannel(cfg, BenchContext(Path(tmp)))
            await channel.start()
            t0 = time.monotonic()
            texts = await asyncio.gather(*(_answer(channel, i) for i in range(answers)))
            elapsed = time.monotonic() - t0
            await channel.stop()
        streamed = [c for m in STREAM_CALLS for c in fake.calls_of(m)]
        appends = fake.calls_of("chat.appendStream")
        shown = [
            m["text"] + str(m.get("blocks") or "")
            for m in fake.messages.values()
            if m.get("bot_id")
        ]
        return {
            "answers": answers,
            "seconds": round(elapsed, 1),
            "stream_calls": len(streamed),
            "stream_calls_per_minute": round(len(streamed) * 60 / elapsed, 1),
            "stream_calls_max_in_60s": max(fake.max_in_window(m, 60.0) for m in STREAM_CALLS)
            if answers
            else 0,
            "start_plus_append_max_in_60s": max_in_window(sorted(c.at for c in streamed), 60),
            "mean_chars_per_append": round(
                statistics.fmean(len(c.body["chunks"][0]["text"]) for c in appends), 1
            )
            if appends
            else 0.0,
            "finals_delivered": sum(1 for t in texts if any(t.strip() in m for m in shown)),
        }
    finally:
        fake.stop()


async def run() -> dict[str, Any]:
    return {"answers_4": await _run(4), "answers_20": await _run(20)}


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
