"""Update → first visible sign in the chat, under load (issue 34, point 1).

The whole service against a platform's fake (the real SDK) and the fake OpenAI server, with
the default run limit (16). Two phases per side:
- burst: 100 DMs arrive at once; each answer is 100 tokens at 50 tokens/s;
- closed loop: 50 DMs, each sending its next message as soon as the previous answer is shown
  whole (`ROUNDS` rounds), the model answering 20 tokens at 100 tokens/s (a throughput run).
For every message: update pushed → the first visible call in its chat after it (typing, queued
notice, draft, message), p50/p99, and the same from the SDK's receipt of the update; finals
delivered and the fake's rate-limit violations. Times are the fakes' own monotonic clocks
(same process). Each side runs in turn, alternating, in one run: `before` has the sign at
acceptance switched off (the bus's `on_accepted` hook unset: main's path, where the first sign
comes when the reply opens or its queued notice goes out), `after` is the shipped code.
The `floor` rows: 100 typing calls at once through the same SDK and fake with no service
around them, in the same run (the machine is shared: they say what it allowed meanwhile).
`SIGN_TRACE=1` adds where the time goes: push → each intake stage (bench/stage_trace.py).

Run: `python -m bench sign_of_life` (`SIGN_ROUNDS=N` alternations, default 2;
`SIGN_PHASES=burst` one phase).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.delivery_bench import VISIBLE
from bench.stage_trace import StageTrace, telegram_stages
from bench.support import LoopLag, pct
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.harness import ServiceHarness

ROUNDS = 4
Pushed = list[tuple[str, float]]


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


def _service(tg: FakeTelegram, openai: FakeOpenAI, tmp: str) -> ServiceHarness:
    telegram = {"enabled": True, "bot_token": TOKEN, "api_base": tg.api_base, "poll_timeout": 1}
    return ServiceHarness(Path(tmp), openai, {"telegram": telegram})


def _side(svc: ServiceHarness, early: bool) -> None:
    if not early:  # main's path: no sign at acceptance
        svc.running.bus.on_accepted = lambda msg: None


async def burst(early: bool, trace: StageTrace, chats: int = 100) -> dict[str, Any]:
    tg, openai = FakeTelegram().start(), FakeOpenAI().start()
    text = _text(100)
    openai.responder = lambda body: Reply(text=text, tokens_per_second=50.0)
    pushed: Pushed = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with _service(tg, openai, tmp) as svc:
                _side(svc, early)
                lag = LoopLag().__enter__()
                for n in range(chats):
                    pushed.append((str(3000 + n), time.monotonic()))
                    tg.push_message(3000 + n, f"go {n}")
                await tg.wait_for(lambda: _signs(tg, pushed), timeout=60)
                lag.__exit__()
                await openai.wait_requests(chats, timeout=180)
                await svc.idle(timeout=180)
    finally:
        tg.stop()
        openai.stop()
    finals = sum(_shown(tg, int(chat), text, at) for chat, at in pushed)
    figures = _figures(tg, trace, pushed, finals)
    figures["loop_lag_until_every_sign_ms_p50"] = round(pct(lag.lags, 50) * 1000, 1)
    figures["loop_lag_until_every_sign_ms_max"] = round(max(lag.lags, default=0.0) * 1000, 1)
    return figures


def _signs(tg: FakeTelegram, pushed: Pushed) -> bool:
    """Every pushed message's chat has seen a visible call since."""
    return all(_first_after(tg, int(chat), at) is not None for chat, at in pushed)


async def closed_loop(
    early: bool, trace: StageTrace, chats: int = 50, rounds: int = ROUNDS
) -> dict[str, Any]:
    tg, openai = FakeTelegram().start(), FakeOpenAI().start()
    text = _text(20)
    openai.responder = lambda body: Reply(text=text, tokens_per_second=100.0)
    pushed: Pushed = []
    finals = 0

    async def chat(chat_id: int) -> None:
        nonlocal finals
        for n in range(rounds):
            at = time.monotonic()
            pushed.append((str(chat_id), at))
            tg.push_message(chat_id, f"go {n}")
            while not _shown(tg, chat_id, text, at):
                await asyncio.sleep(0.05)
            finals += 1

    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with _service(tg, openai, tmp) as svc:
                _side(svc, early)
                start = time.monotonic()
                await asyncio.wait_for(asyncio.gather(*(chat(5000 + n) for n in range(chats))), 300)
                elapsed = time.monotonic() - start
    finally:
        tg.stop()
        openai.stop()
    figures = _figures(tg, trace, pushed, finals)
    figures["messages_per_s"] = round(chats * rounds / elapsed, 1)
    return figures


def _figures(tg: FakeTelegram, trace: StageTrace, pushed: Pushed, finals: int) -> dict[str, Any]:
    first, from_receipt = [], []
    for chat, at in pushed:
        seen = _first_after(tg, int(chat), at)
        if seen is None:
            continue
        first.append(seen - at)
        if (received := trace.first_after("0_received", chat, at)) is not None:
            from_receipt.append(seen - received)
    figures: dict[str, Any] = {
        "messages": len(pushed),
        "first_visible_ms_p50": round(pct(first, 50) * 1000, 1),
        "first_visible_ms_p99": round(pct(first, 99) * 1000, 1),
        "receipt_to_first_visible_ms_p50": round(pct(from_receipt, 50) * 1000, 1),
        "receipt_to_first_visible_ms_p99": round(pct(from_receipt, 99) * 1000, 1),
        "with_a_sign_of_life": len(first),
        "finals_delivered": finals,
        "rate_limit_violations": len(tg.violations),
        "violations_seen": sorted({_kind(v) for v in tg.violations}),
    }
    if os.environ.get("SIGN_TRACE") == "1":
        figures.update(trace.report(pushed, "stage_"))
    return figures


def _kind(violation: str) -> str:
    """A violation's kind: its text without the chat and the figures."""
    return " ".join(w for w in violation.split() if not any(ch.isdigit() for ch in w))


async def floor(chats: int = 100) -> dict[str, Any]:
    """The floor in the same run: `chats` typing calls at once through the same SDK, client
    settings and fake, with no service around them (what the machine allows right now)."""
    from telegram import Bot
    from telegram.request import HTTPXRequest

    tg = FakeTelegram().start()
    bot = Bot(TOKEN, base_url=tg.api_base, request=HTTPXRequest(connection_pool_size=128))
    try:
        await bot.initialize()
        start = time.monotonic()
        await asyncio.gather(
            *(bot.send_chat_action(chat_id=3000 + n, action="typing") for n in range(chats))
        )
        seen = [c.at - start for c in tg.calls_of("sendChatAction")]
        await bot.shutdown()
    finally:
        tg.stop()
    return {
        "typing_calls": chats,
        "first_visible_ms_p50": round(pct(seen, 50) * 1000, 1),
        "first_visible_ms_p99": round(pct(seen, 99) * 1000, 1),
    }


async def _phase(name: str, early: bool) -> dict[str, Any]:
    if name == "floor":
        return await floor()
    trace = telegram_stages(StageTrace())
    try:
        phase = burst if name == "burst" else closed_loop
        return await phase(early, trace)
    finally:
        trace.undo()


async def run() -> dict[str, Any]:
    """Both sides of each phase, alternating (before, after, after, before ...); each figure
    is the median over its side's rounds (`_median`), and each round's own figures are kept too."""
    rounds = int(os.environ.get("SIGN_ROUNDS", "2"))
    figures: dict[str, Any] = {}
    for name in os.environ.get("SIGN_PHASES", "floor,burst,closed_loop").split(","):
        seen: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for r in range(rounds):
            order = ("before", "after") if r % 2 == 0 else ("after", "before")
            for side in order if name != "floor" else ("after",):
                if side not in os.environ.get("SIGN_SIDES", "before,after"):
                    continue
                seen[side].append(await _phase(name, early=side == "after"))
        for side, results in seen.items():
            for key in results[0] if results else ():
                values = [res[key] for res in results]
                label = name if name == "floor" else f"{name}_{side}"
                figures[f"telegram_{label}_{key}"] = _median(values)
                figures[f"telegram_{label}_{key}_rounds"] = values
    return figures


def _median(values: list[Any]) -> Any:
    """The median; of an even number, the higher middle one (the worse, for latencies)."""
    return sorted(values)[len(values) // 2]
