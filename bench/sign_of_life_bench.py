"""Update → first visible sign in the chat, on Telegram, under load (issue 34, point 1).

The whole service against the fake Bot API (real python-telegram-bot) and the fake OpenAI
server, with the default run limit. Two phases:
- burst: 100 DMs arrive at once; each model answer is 100 tokens at 50 tokens/s (the delivery
  bench's burst, bench/delivery_bench.py, with the default run limit of 16);
- closed loop: 50 DMs, each sending its next message as soon as the previous answer is shown
  whole (`ROUNDS` rounds), the model answering 20 tokens at 100 tokens/s (a throughput run).
For every message: update pushed → the first visible call in its chat after it (typing,
queued notice, draft, message), p50/p99; plus finals delivered and the fake's rate-limit
violations. Times are the fakes' own monotonic clocks (same process).

Run: `python -m bench sign_of_life`. Only Telegram so far; the other platforms' benches
(bench/slack_bench.py, discord_bench.py, feishu_bench.py, dingtalk_bench.py) measure first
visible one message at a time.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import delivery_bench
from bench.delivery_bench import VISIBLE
from bench.support import pct
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.harness import ServiceHarness

ROUNDS = 4


def _first_after(tg: FakeTelegram, chat_id: int, since: float) -> float | None:
    times = [
        c.at for c in tg.calls_of(*VISIBLE) if c.body.get("chat_id") == chat_id and c.at >= since
    ]
    return min(times) if times else None


def _shown(tg: FakeTelegram, chat_id: int, text: str, since: float) -> bool:
    return any(
        c.body.get("chat_id") == chat_id and c.body.get("text") == text and c.at >= since
        for c in tg.calls_of("sendMessage", "editMessageText")
    )


def _text(tokens: int) -> str:
    return " ".join(f"w{i}" for i in range(tokens))


async def _service(tg: FakeTelegram, openai: FakeOpenAI, tmp: str) -> ServiceHarness:
    telegram = {"enabled": True, "bot_token": TOKEN, "api_base": tg.api_base, "poll_timeout": 1}
    return ServiceHarness(Path(tmp), openai, {"telegram": telegram})


async def closed_loop(chats: int = 50, rounds: int = ROUNDS) -> dict[str, float]:
    tg, openai = FakeTelegram().start(), FakeOpenAI().start()
    text = _text(20)
    openai.responder = lambda body: Reply(text=text, tokens_per_second=100.0)
    first: list[float] = []
    finals = 0

    async def chat(chat_id: int) -> None:
        nonlocal finals
        for n in range(rounds):
            pushed = time.monotonic()
            tg.push_message(chat_id, f"go {n}")
            while not _shown(tg, chat_id, text, pushed):
                await asyncio.sleep(0.05)
            finals += 1
            seen = _first_after(tg, chat_id, pushed)
            if seen is not None:
                first.append(seen - pushed)

    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with await _service(tg, openai, tmp):
                start = time.monotonic()
                await asyncio.wait_for(asyncio.gather(*(chat(5000 + n) for n in range(chats))), 300)
                elapsed = time.monotonic() - start
    finally:
        tg.stop()
        openai.stop()
    figures = _figures(first, chats * rounds, finals, len(tg.violations))
    figures["messages_per_s"] = round(chats * rounds / elapsed, 1)
    return figures


def _figures(first: list[float], messages: int, finals: int, violations: int) -> dict[str, Any]:
    return {
        "messages": messages,
        "first_visible_ms_p50": round(pct(first, 50) * 1000, 1),
        "first_visible_ms_p99": round(pct(first, 99) * 1000, 1),
        "with_a_sign_of_life": len(first),
        "finals_delivered": finals,
        "rate_limit_violations": violations,
    }


async def run() -> dict[str, Any]:
    figures: dict[str, Any] = {}
    burst = await delivery_bench.burst(100, 16)  # the default run limit
    figures.update({f"telegram_burst_{k}": v for k, v in burst.items()})
    figures.update({f"telegram_closed_loop_{k}": v for k, v in (await closed_loop()).items()})
    return figures
