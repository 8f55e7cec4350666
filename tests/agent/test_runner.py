"""AgentRunner against the fake OpenAI server through the real langchain-openai client."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from agent import http
from agent.config import AgentConfig
from agent.context import BuildContext
from agent.events import Failed, Final, RunSettings, TextDelta, Turn
from agent.runner import CANCELLED, AgentRunner, RunCancelled
from agent.tools import builtin_tools
from tests.agent.conftest import MakeRunner, collect, model_config
from tests.fakes.openai_server import FakeOpenAI, Reply


async def test_text_deltas_concatenate_to_final(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    # the stream stalls after its first word until the reader has it: text arrives in parts
    # (what one socket read holds is joined: agent/chunks.py)
    fake_openai.script(Reply(text="Hello there, how can I help you today?", stall_after=1))
    events = []
    async for event in runner.stream("t1", Turn(text="hi"), RunSettings()):
        events.append(event)
        if isinstance(event, TextDelta):
            fake_openai.release()
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas[0] == "Hell"  # tokens are at most four letters (the fake)
    assert len(deltas) > 1
    assert events[-1] == Final("Hello there, how can I help you today?")
    assert "".join(deltas) == events[-1].text
    request = fake_openai.last_request
    assert request.stream
    assert fake_openai.user_texts(request) == ["hi"]
    assert not runner.is_running("t1")


async def test_system_prompt_has_defaults_date_and_config(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await make_runner(
        config=AgentConfig(system_prompt="Always say ARR.", max_retries=0, title={"enabled": False})
    )
    await collect(runner, "t1", "hi", user_name="Ann")
    system = fake_openai.last_request.messages[0]
    assert system["role"] == "system"
    assert "messenger" in system["content"]
    assert "Today is " in system["content"]
    assert "You are talking with Ann." in system["content"]
    assert system["content"].rstrip().endswith("Always say ARR.")


async def test_history_persists_across_runner_restart(
    make_runner: MakeRunner, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    first = await make_runner(data_dir=tmp_path / "d")
    assert (await collect(first, "t1", "remember 42"))[-1] == Final("echo: remember 42")
    await first.stop()
    second = await make_runner(data_dir=tmp_path / "d")
    assert (await collect(second, "t1", "what number?"))[-1] == Final("echo: what number?")
    roles = [(m["role"], m["content"]) for m in fake_openai.last_request.messages[1:]]
    assert roles == [
        ("user", "remember 42"),
        ("assistant", "echo: remember 42"),
        ("user", "what number?"),
    ]
    history = await second.history("t1")
    assert [m.type for m in history] == ["human", "ai", "human", "ai"]
    assert (tmp_path / "d" / "checkpoints.db").exists()


async def test_threads_are_separate(runner: AgentRunner, fake_openai: FakeOpenAI) -> None:
    await collect(runner, "a", "one")
    await collect(runner, "b", "two")
    assert fake_openai.user_texts(fake_openai.last_request) == ["two"]
    assert await runner.history("never") == []


async def test_model_switch_reaches_the_provider(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await make_runner(
        models=[
            model_config(fake_openai, "fast", "fast-1"),
            model_config(fake_openai, "smart", "smart-2"),
        ],
        default_model="smart",
    )
    await collect(runner, "t", "x")
    await collect(runner, "t", "y", RunSettings(model="fast"))
    await collect(runner, "t", "z", RunSettings(model="gone"))  # unknown: falls back to default
    assert [r.model for r in fake_openai.requests] == ["smart-2", "fast-1", "smart-2"]


async def test_turn_context_files_and_sender_reach_the_model(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    await collect(
        runner,
        "t",
        "what does it say?",
        user_name="Bo",
        chat_type="group",
        context="Ann: the launch is on Friday\nAnn: or Monday",
        files=("/mnt/user-data/uploads/plan.pdf",),
    )
    [text] = fake_openai.user_texts(fake_openai.last_request)
    assert "> Ann: the launch is on Friday\n> Ann: or Monday" in text
    assert "Bo wrote:\nwhat does it say?" in text
    assert "- /mnt/user-data/uploads/plan.pdf" in text
    assert text.index("> Ann") < text.index("Bo wrote") < text.index("plan.pdf")


async def test_thinking_kwargs_merged_only_when_supported_and_asked(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    thinking = {"extra_body": {"thinking": {"type": "enabled"}}, "temperature": 1.0}
    runner = await make_runner(
        models=[
            model_config(
                fake_openai,
                "deep",
                "deep-1",
                supports_thinking=True,
                when_thinking_enabled=thinking,
            ),
            model_config(fake_openai, "plain", "plain-1", when_thinking_enabled=thinking),
        ]
    )
    await collect(runner, "t", "a", RunSettings(model="deep", thinking=True))
    await collect(runner, "t", "b", RunSettings(model="deep", thinking=False))
    await collect(runner, "t", "c", RunSettings(model="plain", thinking=True))
    on, off, unsupported = fake_openai.requests
    assert on.get("thinking") == {"type": "enabled"}
    assert on.get("temperature") == 1.0
    assert "thinking" not in off.body
    assert "thinking" not in unsupported.body


async def test_thread_dirs_created_under_data_dir(runner: AgentRunner, tmp_path: Path) -> None:
    dirs = runner.thread_dirs("tg-42")
    assert dirs.uploads == tmp_path / "data" / "threads" / "tg-42" / "user-data" / "uploads"
    assert dirs.workspace.is_dir()
    assert dirs.outputs.is_dir()


async def test_deltas_waiting_behind_a_slow_consumer_arrive_joined(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    text = "one two three four five six seven eight nine ten"
    fake_openai.script(Reply(text=text))
    stream = runner.stream("slow", Turn(text="hi"), RunSettings())
    first = await anext(stream)
    producer = runner._runs["slow"].task
    assert producer is not None
    while not producer.done():  # the consumer is behind: the whole answer is queued
        await asyncio.sleep(0.01)
    rest = [event async for event in stream]
    deltas = [e.text for e in [first, *rest] if isinstance(e, TextDelta)]
    assert rest[-1] == Final(text)
    assert "".join(deltas) == text
    assert len(deltas) <= 2  # one wake-up for the queued chunks, not one per chunk


class HeldBuild:
    """A tool provider (it runs while a graph is built) that holds the build until released."""

    def __init__(self) -> None:
        self.building = threading.Event()
        self.release = threading.Event()
        self.built_on: list[int] = []

    def __call__(self, ctx: BuildContext) -> list[Any]:
        self.built_on.append(threading.get_ident())
        self.building.set()
        self.release.wait(10)
        return builtin_tools(ctx)

    async def started(self) -> bool:
        return await asyncio.to_thread(self.building.wait, 10)


async def test_the_graph_is_built_once_on_a_worker_thread_while_the_loop_serves(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    """A graph build is a fraction of a second of CPU (imports, tool schemas, the model): on
    the loop it would stall every other conversation and the leases' renewals."""
    held = HeldBuild()
    runner = await make_runner(tool_providers=(held,))
    first = asyncio.create_task(collect(runner, "a", "one"))
    second = asyncio.create_task(collect(runner, "b", "two"))
    assert await held.started()  # the loop runs while the build is held
    assert runner.cancel("a")  # a /stop during the build stops that run
    held.release.set()
    assert (await first)[-1] == Failed("cancelled", CANCELLED)
    assert (await second)[-1] == Final("echo: two")
    assert held.built_on
    assert threading.get_ident() not in held.built_on
    assert len(held.built_on) == 1  # two runs, one graph
    assert fake_openai.user_texts(fake_openai.last_request) == ["two"]
    # the model built on the thread uses the loop's one connection pool for its endpoint
    pools = http._pools[asyncio.get_running_loop()]
    assert any(base == fake_openai.base_url for base, _timeout in pools)


async def test_a_runner_stopped_during_a_build_starts_no_run(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    held = HeldBuild()
    runner = await make_runner(tool_providers=(held,))

    async def first_event() -> tuple[str, Any]:
        return await anext(runner.stream_graph("g", [("user", "hi")], RunSettings(), ["values"]))

    api_run = asyncio.create_task(first_event())
    assert await held.started()
    stopping = asyncio.create_task(runner.stop())
    await asyncio.sleep(0.05)
    held.release.set()
    await stopping
    with pytest.raises(RunCancelled):
        await api_run
    assert not fake_openai.requests
