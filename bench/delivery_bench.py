"""Delivery benchmark: a sign of life at admission under a full run pool, and the final's delay.

The whole service against the fake Bot API (real python-telegram-bot) and the fake OpenAI server:
100 DMs arrive at once while `max_concurrent_runs` is 16 (then a smaller burst: 20 DMs, 4
slots); the model streams 100 tokens at 50 tokens/s. Figures:
- update pushed → first visible call for that chat (typing, queued notice, draft), p50/p99;
- last token produced by the model → the final message on the fake, p50/p99;
- finals delivered, and the fake's rate-limit violations.

Run: `python -m bench delivery`.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from bench.support import pct
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.harness import ServiceHarness

CHATS, SLOTS, TOKENS, TPS = 100, 16, 100, 50.0
VISIBLE = ("sendChatAction", "sendMessage", "sendMessageDraft", "editMessageText")


def answer() -> str:
    return " ".join(f"w{i}" for i in range(TOKENS))


def first_call(tg: FakeTelegram, chat_id: int, methods: tuple[str, ...]) -> float | None:
    times = [c.at for c in tg.calls_of(*methods) if c.body.get("chat_id") == chat_id]
    return min(times) if times else None


def final_at(tg: FakeTelegram, chat_id: int, text: str) -> float | None:
    times = [
        c.at
        for c in tg.calls_of("sendMessage", "editMessageText")
        if c.body.get("chat_id") == chat_id and c.body.get("text") == text
    ]
    return min(times) if times else None


async def run() -> dict[str, Any]:
    figures = await burst(CHATS, SLOTS)
    small = await burst(20, 4)
    figures.update(
        {
            f"small_burst_{k}": v
            for k, v in small.items()
            if k.startswith(("chats", "max_", "first_"))
        }
    )
    return figures


async def burst(n_chats: int, slots: int) -> dict[str, Any]:
    tg, openai = FakeTelegram().start(), FakeOpenAI().start()
    text = answer()
    chats = [3000 + n for n in range(n_chats)]
    openai.script(*[Reply(text=text, tokens_per_second=TPS) for _ in chats])
    telegram = {"enabled": True, "bot_token": TOKEN, "api_base": tg.api_base, "poll_timeout": 1}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            svc = ServiceHarness(
                Path(tmp), openai, {"max_concurrent_runs": slots, "telegram": telegram}
            )
            async with svc:
                pushed = {}
                for chat_id in chats:
                    pushed[chat_id] = time.monotonic()
                    tg.push_message(chat_id, f"go {chat_id}")
                await openai.wait_requests(n_chats, timeout=120)
                await svc.idle(timeout=120)
    finally:
        tg.stop()
        openai.stop()
    first = [t - pushed[c] for c in chats if (t := first_call(tg, c, VISIBLE)) is not None]
    started = {int(FakeOpenAI.user_texts(r)[-1].split()[-1]): r.at for r in openai.requests}
    last_token_to_final, finals = [], 0
    for chat_id in chats:
        final = final_at(tg, chat_id, text)
        if final is not None:
            finals += 1
            last_token = started[chat_id] + (TOKENS - 1) / TPS
            last_token_to_final.append(max(0.0, final - last_token))
    return {
        "chats": n_chats,
        "max_concurrent_runs": slots,
        "model_tokens_per_second": TPS,
        "first_visible_ms_p50": round(pct(first, 50) * 1000, 1),
        "first_visible_ms_p99": round(pct(first, 99) * 1000, 1),
        "chats_with_a_sign_of_life": len(first),
        "last_token_to_final_ms_p50": round(pct(last_token_to_final, 50) * 1000, 1),
        "last_token_to_final_ms_p99": round(pct(last_token_to_final, 99) * 1000, 1),
        "finals_delivered": finals,
        "rate_limit_violations": len(tg.violations),
    }
