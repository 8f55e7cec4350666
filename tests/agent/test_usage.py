"""Counting model calls (agent/usage.py) against the fake OpenAI server's usage chunks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agent.config import AgentConfig
from agent.events import Failed, Final
from agent.runner import AgentRunner
from agent.usage import UsageRecord, UsageRefused, UsageScope
from tests.agent.conftest import MakeRunner, collect
from tests.fakes.openai_server import FakeOpenAI, Reply

USAGE: dict[str, Any] = {
    "prompt_tokens": 11,
    "completion_tokens": 3,
    "total_tokens": 14,
    "prompt_tokens_details": {"cached_tokens": 5},
    "completion_tokens_details": {"reasoning_tokens": 2},
}


async def test_an_answer_counts_the_providers_usage_chunk(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    got: list[UsageRecord] = []
    runner.on_usage = got.append
    fake_openai.script(Reply(text="Hello there", usage=USAGE))
    events = await collect(runner, "t1", "hi", user_id="telegram:1", chat="telegram:9")
    assert events[-1] == Final("Hello there")
    assert fake_openai.last_request.body["stream_options"] == {"include_usage": True}
    [record] = got
    assert (record.model, record.purpose, record.estimated) == ("gpt", "answer", False)
    assert (record.prompt, record.completion, record.cached, record.reasoning) == (11, 3, 5, 2)
    assert (record.thread_id, record.user_id, record.chat) == ("t1", "telegram:1", "telegram:9")
    assert record.run_id
    assert len(fake_openai.requests) == 1  # counting adds no model call


async def test_a_server_without_usage_gets_an_estimate_marked_as_such(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    got: list[UsageRecord] = []
    runner.on_usage = got.append
    fake_openai.script(Reply(text="x" * 40, no_usage=True))
    await collect(runner, "t1", "hello")
    [record] = got
    assert record.estimated
    assert record.completion == 10  # 40 characters, 4 a token
    assert record.prompt > 0


async def test_titles_are_counted_with_their_purpose(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await make_runner(
        config=AgentConfig(max_retries=0, request_timeout_seconds=10, title={"enabled": True})
    )
    got: list[UsageRecord] = []
    titled: list[str] = []
    runner.on_usage = got.append
    runner.on_title = lambda _thread, title: titled.append(title)
    fake_openai.script(Reply(text="An answer", usage=USAGE), Reply(text="A title"))
    await collect(runner, "t1", "hi", user_id="slack:U1")
    await until(lambda: len(got) == 2)
    assert [r.purpose for r in got] == ["answer", "title"]
    assert {r.run_id for r in got} == {got[0].run_id}
    assert got[1].user_id == "slack:U1"


async def test_a_refusing_check_stops_the_run_before_the_call(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    async def refuse(scope: UsageScope) -> None:
        raise UsageRefused(f"budget of {scope.user_id} reached")

    runner.usage_check = refuse
    fake_openai.script(Reply(text="never"))
    events = await collect(runner, "t1", "hi", user_id="telegram:1")
    assert events[-1] == Failed("budget", "budget of telegram:1 reached")
    assert fake_openai.requests == []


async def until(check: Callable[[], bool]) -> None:
    async with asyncio.timeout(10):
        while not check():
            await asyncio.sleep(0.01)


async def test_the_memory_pass_is_counted_for_the_person(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await make_runner(
        config=AgentConfig(
            max_retries=0,
            request_timeout_seconds=10,
            title={"enabled": False},
            memory={"enabled": True},
        )
    )
    got: list[UsageRecord] = []
    runner.on_usage = got.append
    fake_openai.script(Reply(text="Noted", usage=USAGE), Reply(text="{}", usage=USAGE))
    await collect(runner, "t1", "I like tea", user_id="telegram:7")
    await until(lambda: len(got) == 1)
    await runner.memory.flush()
    assert [(r.purpose, r.user_id, r.thread_id) for r in got] == [
        ("answer", "telegram:7", "t1"),
        ("memory", "telegram:7", "t1"),
    ]


async def test_a_check_that_cannot_read_its_budget_lets_the_call_go_ahead(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    async def broken(scope: UsageScope) -> None:
        raise ConnectionError("database away")

    runner.usage_check = broken
    fake_openai.script(Reply(text="answered"))
    events = await collect(runner, "t1", "hi")
    assert events[-1] == Final("answered")
