"""Slack channel benchmark against the fake Slack (real bolt + slack_sdk, loopback).

Figures:
- ack: push of a Socket Mode envelope -> the client's ack frame recorded by the fake.
- first visible: inbound envelope pushed -> the "is thinking..." status recorded by the fake
  (the channel is driven directly; the agent is not part of this figure).
- token to visible: update_reply with a new delta -> appendStream recorded by the fake.
- 50 threads in one workspace at once, native streaming: total time, calls per method.
- 50 threads in one workspace on the chat.update fallback: the per-workspace bucket is scaled
  10x (8/s, burst 3) so the run takes seconds; reports the highest chat.update count in any
  1-second window (must stay <= rate + burst) and that every final arrived.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.support import BenchContext, slack_thread_message
from channels.base import ReplyDoc
from channels.slack.channel import SlackChannel
from channels.slack.config import SlackConfig
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, FakeSlack

ROUNDS = 100
THREADS = 50


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


async def _wait_calls(fake: FakeSlack, method: str, n: int) -> float:
    while len(fake.calls_of(method)) < n:
        await asyncio.sleep(0.0005)
    return fake.calls_of(method)[n - 1].at


async def _latency(fake: FakeSlack, channel: SlackChannel, ctx: BenchContext) -> dict[str, Any]:
    acks, first, token = [], [], []
    for i in range(ROUNDS):
        ts = f"1700001{i:03d}.000100"
        event = {
            "type": "app_mention",
            "channel": "C0001",
            "user": "U0001",
            "ts": ts,
            "text": "<@UBOT> hi",
            "team": "T0001",
        }
        statuses = len(fake.calls_of("assistant.threads.setStatus"))
        t0 = time.monotonic()
        env = await asyncio.to_thread(fake.push_event, event, event_id=f"Ev{i}")
        msg = await ctx.queue.get()
        handle = await channel.open_reply(msg, ReplyDoc(status="working"))
        t_status = await _wait_calls(fake, "assistant.threads.setStatus", statuses + 1)
        acks.append(fake.acks[env]["at"] - t0)
        first.append(t_status - t0)
        await channel.update_reply(handle, ReplyDoc(text="Hello"))
        appends = len(fake.calls_of("chat.appendStream"))
        t1 = time.monotonic()
        await channel.update_reply(handle, ReplyDoc(text="Hello world"))
        token.append(await _wait_calls(fake, "chat.appendStream", appends + 1) - t1)
        await channel.finish_reply(handle, ReplyDoc(text="Hello world!", status="done"))
    return {
        "ack_ms_p50": _pct(acks, 0.5),
        "ack_ms_p99": _pct(acks, 0.99),
        "first_visible_ms_p50": _pct(first, 0.5),
        "first_visible_ms_p99": _pct(first, 0.99),
        "token_to_visible_ms_p50": _pct(token, 0.5),
        "token_to_visible_ms_p99": _pct(token, 0.99),
    }


async def _one_thread(channel: SlackChannel, i: int, updates: int) -> None:
    msg = slack_thread_message(f"1700002{i:03d}.000100", f"E{i}")
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    text = ""
    for n in range(updates):
        text += f"word{n} "
        await channel.update_reply(handle, ReplyDoc(text=text))
        await asyncio.sleep(0.1)
    await channel.finish_reply(handle, ReplyDoc(text=text + "end", status="done"))


async def _many(native: bool) -> dict[str, Any]:
    fake = FakeSlack().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = SlackConfig(
                enabled=True,
                bot_token=BOT_TOKEN,
                app_token=APP_TOKEN,
                api_base=fake.api_base,
                native_stream=native,
                workspace_edits_per_second=8.0,
                workspace_appends_per_second=15.0,
            )
            channel = SlackChannel(cfg, BenchContext(Path(tmp)))
            await channel.start()
            t0 = time.monotonic()
            await asyncio.gather(*(_one_thread(channel, i, 20) for i in range(THREADS)))
            elapsed = time.monotonic() - t0
            await channel.stop()
        finals_ok = sum(
            1
            for m in fake.messages.values()
            if m.get("bot_id") and ("end" in m["text"] or "end" in str(m.get("blocks")))
        )
        return {
            "threads": THREADS,
            "seconds": round(elapsed, 2),
            "finals_delivered": finals_ok,
            "chat_update_calls": len(fake.calls_of("chat.update")),
            "chat_update_max_per_1s": fake.max_in_window("chat.update", 1.0),
            "append_stream_calls": len(fake.calls_of("chat.appendStream")),
            "stream_calls_max_per_1s": max(
                fake.max_in_window("chat.appendStream", 1.0),
                fake.max_in_window("chat.startStream", 1.0),
            ),
        }
    finally:
        fake.stop()


async def run() -> dict[str, Any]:
    fake = FakeSlack().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            ctx = BenchContext(Path(tmp))
            cfg = SlackConfig(
                enabled=True,
                bot_token=BOT_TOKEN,
                app_token=APP_TOKEN,
                api_base=fake.api_base,
                workspace_appends_per_second=1000.0,
                min_append_chars=1,
            )
            channel = SlackChannel(cfg, ctx)
            await channel.start()
            latency = await _latency(fake, channel, ctx)
            await channel.stop()
    finally:
        fake.stop()
    return {
        **latency,
        "native_50_threads_appends_15_per_s_burst_5": await _many(native=True),
        "fallback_50_threads_budget_8_per_s_burst_3": await _many(native=False),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
