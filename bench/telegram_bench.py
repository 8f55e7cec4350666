"""Telegram channel benchmark: the whole service against the fake Bot API and fake OpenAI servers.

- latency: update pushed -> first visible call (typing / draft / message) on the fake, p50/p99;
  token produced by the model (50 tokens/s) -> visible on the fake, p50/p99, DMs and groups.
- load: 100 DMs and 10 groups streaming at once; the fake counts rate-limit violations.

Run: `python -m bench.telegram_bench` (or through `python -m bench`).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from bench.support import at_once, ms_p50_p99, run_phases
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, split_tokens
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.harness import ServiceHarness

TPS = 50.0
TEXT_CALLS = ("sendMessageDraft", "sendMessage", "editMessageText")
FIRST_CALLS = ("sendChatAction", *TEXT_CALLS)


def answer(n_tokens: int) -> str:
    return " ".join(f"w{i}" for i in range(n_tokens))


def harness(data_dir: Path, openai: FakeOpenAI, tg: FakeTelegram) -> ServiceHarness:
    telegram = {"enabled": True, "bot_token": TOKEN, "api_base": tg.api_base, "poll_timeout": 1}
    return ServiceHarness(data_dir, openai, {"max_concurrent_runs": 128, "telegram": telegram})


def first_visible(tg: FakeTelegram, chat_id: int, after: float) -> float | None:
    times = [c.at for c in tg.calls_of(*FIRST_CALLS) if c.body.get("chat_id") == chat_id]
    times = [t for t in times if t >= after]
    return min(times) if times else None


def token_delays(tg: FakeTelegram, chat_id: int, text: str, start: float) -> list[float]:
    """For each token: when it was first visible minus when the model produced it."""
    calls = [c for c in tg.calls_of(*TEXT_CALLS) if c.body.get("chat_id") == chat_id]
    tokens = split_tokens(text)
    delays: list[float] = []
    prefix = ""
    for index, token in enumerate(tokens):
        prefix += token
        produced = start + index / TPS
        need = len(prefix.strip())
        shown = [
            c.at for c in calls if len(str(c.body.get("text", "")).rstrip("…").strip()) >= need
        ]
        if shown:
            delays.append(max(0.0, min(shown) - produced))
    return delays


async def latency(tg: FakeTelegram, openai: FakeOpenAI, data_dir: Path) -> dict[str, Any]:
    first: list[float] = []
    dm_tokens: list[float] = []
    group_tokens: list[float] = []
    text = answer(100)
    async with harness(data_dir, openai, tg) as svc:
        for n in range(21):
            chat_id = 1000 + n if n % 3 else -1000 - n
            mention = "" if chat_id > 0 else "@antler_bot "
            openai.script(Reply(text=text, tokens_per_second=TPS))
            pushed = time.monotonic()
            tg.push_message(chat_id, f"{mention}question {n}")
            await tg.wait_for(lambda c=chat_id, p=pushed: first_visible(tg, c, p) is not None, 10)
            seen = first_visible(tg, chat_id, pushed)
            assert seen is not None
            first.append(seen - pushed)
            await svc.idle(timeout=30)
            start = openai.requests[-1].at
            (dm_tokens if chat_id > 0 else group_tokens).extend(
                token_delays(tg, chat_id, text, start)
            )
    return {
        **ms_p50_p99("first_visible", first),
        **ms_p50_p99("dm_token_to_visible", dm_tokens),
        **ms_p50_p99("group_token_to_visible", group_tokens),
        "latency_violations": len(tg.violations),
    }


async def load(tg: FakeTelegram, openai: FakeOpenAI, data_dir: Path) -> dict[str, Any]:
    text = answer(150)
    chats = [2000 + n for n in range(100)] + [-2000 - n for n in range(10)]
    openai.script(*[Reply(text=text, tokens_per_second=TPS) for _ in chats])
    async with harness(data_dir, openai, tg) as svc:

        def push() -> None:
            for chat_id in chats:
                tg.push_message(chat_id, ("@antler_bot " if chat_id < 0 else "") + "go")

        elapsed, cpu = await at_once(svc, openai, len(chats), push, 30)
    finals = sum(1 for c in chats if text in tg.shown_texts(c) or text in tg.sent_texts(c))
    return {
        "load_chats": len(chats),
        "load_finals_delivered": finals,
        "load_visible_calls": len(tg.calls_of(*TEXT_CALLS)),
        "load_wall_s": round(elapsed, 2),
        # the whole process: the service, and the fake Bot API and model servers (threads)
        "load_cpu_ms_per_turn": round(cpu / len(chats) * 1000, 1),
        "load_rate_limit_violations": len(tg.violations),
    }


async def run() -> dict[str, Any]:
    return {"model_tokens_per_second": TPS, **await run_phases(FakeTelegram, latency, load)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run()), indent=2))
