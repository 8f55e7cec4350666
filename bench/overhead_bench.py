"""The service's own cost: one LangGraph agent, bare and through the whole service, one run.

Both sides use the same compiled graph (the zero-latency in-process model stub, the agent's
middlewares, the SQLite checkpointer) of one started service, title and memory calls off:

- bare: `graph.astream` with the arguments `AgentRunner` passes (one user message, the thread's
  config and run context, the same stream modes and durability), each output read and dropped;
- service: the message injected on the recording channel, through bus, journal, dispatcher,
  turn, `AgentRunner`, relay, `ReplyStreamer` to the channel's final.

Each side runs `OVERHEAD_TURNS` turns on fresh threads, all at once (the service's run limit
is as high, so no message waits for a slot or gets a queued notice), in `OVERHEAD_ROUNDS`
alternating rounds (bare, service, service, bare, ...), so machine load falls on both alike.
The figure is process CPU per turn (user + system), not wall time; a full collection runs
between sides, so each pays for the collections of its own garbage, and the service side ends
when its dispatcher is idle (the work a turn leaves after its final counts for it).

With `BENCH_BEFORE_TREE=<checkout>` (bench/trees.py) the same runs on that tree's code and on
this one's, in alternating child processes: before and after from one run.
"""

from __future__ import annotations

import asyncio
import gc
import os
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from agent.events import RunSettings, Turn
from agent.run_state import thread_config
from agent.runner import DURABILITY
from bench.spine_bench import ECHO, Finishes, _app
from bench.support import cpu_seconds
from bench.trees import HERE, before_and_after, before_tree, describe
from bot.runtime import freeze_startup_objects

TURNS = int(os.environ.get("OVERHEAD_TURNS", "300"))
ROUNDS = int(os.environ.get("OVERHEAD_ROUNDS", "6"))


async def _bare_turn(runner: Any, graph: Any, thread_id: str, text: str) -> None:
    turn = Turn(text=text, user_id="test:u", chat=thread_id)
    async for _mode, _payload in graph.astream(
        {"messages": [HumanMessage(content=text)]},
        config={**thread_config(thread_id), "recursion_limit": runner.config.recursion_limit},
        context=runner._context(thread_id, turn, RunSettings()),
        stream_mode=["messages", "updates", "custom"],
        durability=DURABILITY,
    ):
        pass


async def _bare(runner: Any, graph: Any, round_no: int) -> float:
    cpu = cpu_seconds()
    await asyncio.gather(
        *(_bare_turn(runner, graph, f"bare-{round_no}-{i}", f"turn {i}") for i in range(TURNS))
    )
    return cpu_seconds() - cpu


async def _service(app: Any, done: Finishes, round_no: int) -> float:
    channel: Any = app.channels["test"]
    target = done.done + TURNS
    cpu = cpu_seconds()
    for i in range(TURNS):
        await channel.inject(f"turn {i}", chat_id=f"svc-{round_no}-{i}")
    await done.wait(target, 300)
    await app.dispatcher.wait_idle(30)  # what the turns left to do after their final
    spent = cpu_seconds() - cpu
    done.forget_calls()
    return spent


async def run() -> dict[str, object]:
    before = before_tree()
    return await _measure() if before is None else await _before_and_after(before)


async def _before_and_after(before: Path) -> dict[str, object]:
    """`BENCH_BEFORE_TREE`: this bench on that tree's code and on this one's, alternating."""
    runs = await before_and_after(before, "overhead")
    figures: dict[str, object] = {"before_tree": describe(before), "after_tree": describe(HERE)}
    for side, found in runs.items():
        bare = sum(float(f["bare_cpu_ms_per_turn"]) for f in found) / len(found)
        service = sum(float(f["service_cpu_ms_per_turn"]) for f in found) / len(found)
        figures.update({
            f"{side}_bare_cpu_ms_per_turn": round(bare, 3),
            f"{side}_service_cpu_ms_per_turn": round(service, 3),
            f"{side}_service_over_bare": round(service / bare, 3),
            f"{side}_each_run_service_over_bare": [f["service_over_bare"] for f in found],
            f"{side}_failed_service_turns": sum(int(f["failed_service_turns"]) for f in found),
        })  # fmt: skip
    return figures


async def _measure() -> dict[str, object]:
    app = _app([ECHO], max_runs=TURNS)
    await app.start(gateway=False)
    freeze_startup_objects()
    channel: Any = app.channels["test"]
    done = Finishes(channel)
    await channel.inject("warm up", chat_id="warm")
    await done.wait(1, 30)
    runner = app.runner
    graph = await runner._graph(RunSettings())
    await _bare(runner, graph, -1)  # warm the bare path too
    bare: list[float] = []
    service: list[float] = []
    for round_no in range(ROUNDS):
        order = ("bare", "service") if round_no % 2 == 0 else ("service", "bare")
        for side in order:
            gc.collect()  # each side pays for the collections its own garbage causes
            if side == "bare":
                bare.append(await _bare(runner, graph, round_no))
            else:
                service.append(await _service(app, done, round_no))
    await app.stop()
    bare_ms = sum(bare) / (TURNS * ROUNDS) * 1000
    service_ms = sum(service) / (TURNS * ROUNDS) * 1000
    return {
        "turns_per_side": TURNS * ROUNDS,
        "bare_cpu_ms_per_turn": round(bare_ms, 3),
        "service_cpu_ms_per_turn": round(service_ms, 3),
        "service_over_bare": round(service_ms / bare_ms, 3),
        "failed_service_turns": done.failed,
    }
