"""WeCom channel benchmark: the whole service against the fake WeCom and fake OpenAI servers.

- latency: a message callback pushed -> the reply's first stream frame on the fake, p50/p99.
- load: 50 DMs streaming at once (100 tokens at 50/s each): CPU per answer, stream frames per
  reply (the first, the updates, the final), finals delivered, the least gap between two frames
  of one reply, and the rule violations the fake counted (a frame after its stream's finish,
  over 20,480 bytes, inside a frequency block, ...).

Run: `python -m bench.wecom_bench` (or through `python -m bench wecom`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path
from typing import Any

from bench.support import at_once, load_figures, ms_p50_p99, run_phases
from bench.telegram_bench import answer
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.threaded import Recorded
from tests.fakes.wecom_payloads import BOT_ID, SECRET, text_body
from tests.fakes.wecom_server import FakeWeCom
from tests.harness import ServiceHarness

TPS = 50.0
FRAME = "aibot_respond_msg"


def harness(data_dir: Path, openai: FakeOpenAI, fake: FakeWeCom) -> ServiceHarness:
    wecom = {
        "enabled": True,
        "bot_id": BOT_ID,
        "secret": SECRET,
        "ws_url": fake.ws_url,
        "ca_file": fake.ca_file,
    }
    return ServiceHarness(data_dir, openai, {"max_concurrent_runs": 128, "wecom": wecom})


def frames_of(fake: FakeWeCom, req_id: str) -> list[Recorded]:
    return [c for c in list(fake.calls) if c.method == FRAME and c.path == req_id]


async def until(check: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            raise TimeoutError("no frame on the fake")
        await asyncio.sleep(0.0005)


async def latency(fake: FakeWeCom, openai: FakeOpenAI, data_dir: Path) -> dict[str, Any]:
    first: list[float] = []
    async with harness(data_dir, openai, fake) as svc:
        for n in range(21):
            openai.script(Reply(text=answer(20), tokens_per_second=TPS))
            pushed = time.monotonic()
            req_id = fake.push_message(text_body(f"question {n}", user=f"lat{n}"))
            await until(lambda r=req_id: frames_of(fake, r))
            first.append(frames_of(fake, req_id)[0].at - pushed)
            await svc.idle(timeout=30)
    return ms_p50_p99("first_frame", first)


async def load(fake: FakeWeCom, openai: FakeOpenAI, data_dir: Path) -> dict[str, Any]:
    text = answer(100)
    users = [f"user{n}" for n in range(50)]
    openai.script(*[Reply(text=text, tokens_per_second=TPS) for _ in users])
    requests: list[str] = []
    async with harness(data_dir, openai, fake) as svc:

        def push() -> None:
            requests.extend(fake.push_message(text_body("go", user=user)) for user in users)

        wall, cpu = await at_once(svc, openai, len(users), push, 60)
    finals = sum(
        1
        for u in users
        if [m["frames"][-1] for m in fake.chat_messages(u)] == [{"content": text, "finish": True}]
    )
    frames = [frames_of(fake, r) for r in requests]
    gaps = [b.at - a.at for f in frames for a, b in itertools.pairwise(f)]
    return load_figures(
        len(users),
        finals,
        wall,
        cpu,
        len(fake.violations),
        load_frames_per_reply=round(sum(map(len, frames)) / len(users), 1),
        load_least_frame_gap_s=round(min(gaps), 3) if gaps else None,
    )


async def run() -> dict[str, Any]:
    return {"model_tokens_per_second": TPS, **await run_phases(FakeWeCom, latency, load)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run()), indent=2))
