"""Finals under a 429 storm: the whole service against the fake Bot API and fake OpenAI.

20 DMs ask at once; for `STORM` seconds every send, edit, draft and chat action answers 429
with retry_after 1-3 s (Telegram blocks the whole bot meanwhile). Figures: finals delivered,
calls that reached the fake before the retry_after it had announced (violations; calls already
on their way when it was announced are counted apart), 429s answered, and how long after the
storm's end the last final arrived.

Before the storm, the same 20 DMs are answered once without it: `final_after_last_draft` is the
gap between a chat's last draft and its final sendMessage on the fake (drafts have a budget of
their own, so the final is not held a second behind the last draft).

Before (issue 12): 0 of 20 finals delivered; the streamer gave up after 6 rate-limited attempts.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeOpenAI, text_of
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness

CHATS = 20
STORM = 30.0


def _answer(body: dict[str, Any]) -> Reply:
    last = text_of(body["messages"][-1].get("content"))
    return Reply(text=f"answer to {last}: " + "word " * 40, tokens_per_second=20)


def _final_gaps(tg: FakeTelegram, chats: list[int]) -> list[float]:
    gaps = []
    for chat in chats:
        drafts = [c.at for c in tg.calls_of("sendMessageDraft") if c.body.get("chat_id") == chat]
        finals = [c.at for c in tg.calls_of("sendMessage") if c.body.get("chat_id") == chat]
        if drafts and finals:
            gaps.append(finals[-1] - drafts[-1])
    return gaps


async def _calm(openai: FakeOpenAI) -> dict[str, Any]:
    tg = FakeTelegram().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            telegram = tg.channel_config()
            async with ServiceHarness(Path(tmp), openai, {"telegram": telegram}) as svc:
                chats = [3000 + i for i in range(CHATS)]
                for i, chat in enumerate(chats):
                    tg.push_message(chat, f"question {i}")
                await tg.wait_for(lambda: all(tg.shown_texts(c) for c in chats), timeout=120)
                await svc.idle()
        gaps = sorted(_final_gaps(tg, chats))
        return {
            "final_after_last_draft_p50_ms": round(gaps[len(gaps) // 2] * 1000, 1),
            "final_after_last_draft_max_ms": round(gaps[-1] * 1000, 1),
            "calm_violations": len(tg.violations),
        }
    finally:
        tg.stop()


async def run() -> dict[str, Any]:
    openai, tg = FakeOpenAI().start(), FakeTelegram().start()
    openai.responder = _answer
    try:
        calm = await _calm(openai)
        with tempfile.TemporaryDirectory() as tmp:
            telegram = tg.channel_config()
            async with ServiceHarness(Path(tmp), openai, {"telegram": telegram}) as svc:
                tg.storm(STORM)
                storm_end = time.monotonic() + STORM
                for i in range(CHATS):
                    tg.push_message(2000 + i, f"question {i}")
                chats = [2000 + i for i in range(CHATS)]
                await tg.wait_for(
                    lambda: all(tg.shown_texts(c) for c in chats), timeout=STORM + 120
                )
                done = time.monotonic()
                await svc.idle()
        delivered = sum(
            1
            for i, c in enumerate(chats)
            if [t for t in tg.shown_texts(c) if t.startswith(f"answer to question {i}:")]
        )
        return {
            **calm,
            "chats": CHATS,
            "storm_seconds": STORM,
            "finals_delivered": delivered,
            "calls_before_retry_after": len(tg.violations),
            "calls_in_flight_at_a_429": len(tg.in_flight),
            "storm_429s": tg.storm_429s,
            "last_final_after_storm_end_s": round(done - storm_end, 2),
        }
    finally:
        tg.stop()
        openai.stop()


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
