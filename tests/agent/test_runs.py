"""Run control: failures, busy threads, cancellation, tool round trips, stop()."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from langchain_core.tools import ToolException, tool

from agent.config import AgentConfig, ModelConfig
from agent.context import BuildContext
from agent.events import (
    AgentEvent,
    Failed,
    Final,
    RunSettings,
    TextDelta,
    ToolFinished,
    ToolStarted,
    Turn,
)
from agent.middlewares.dangling import INTERRUPTED
from agent.runner import AgentRunner
from tests.agent.conftest import MakeRunner, collect
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall


async def _first_text(stream: Any) -> AgentEvent:
    event = await anext(stream)
    assert isinstance(event, TextDelta), event
    return event


async def test_rate_limit_ends_with_readable_failure(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(status=429, error="Rate limit reached", retry_after=1))
    events = await collect(runner, "t", "hi")
    assert events == [
        Failed(
            "rate_limited",
            "The model provider is rate-limiting requests (429). Please try again in a moment.",
        )
    ]
    assert len(fake_openai.requests) == 1  # max_retries=0: no hammering
    assert not runner.is_running("t")


async def test_server_error_and_next_run_works(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(status=500, error="boom"))
    [failed] = await collect(runner, "t", "hi")
    assert isinstance(failed, Failed)
    assert failed.code == "provider_error"
    assert "500" in failed.message
    assert (await collect(runner, "t", "again"))[-1] == Final("echo: again")


async def test_unreachable_model(make_runner: MakeRunner) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = ModelConfig(name="gone", model="m", api_key="k", base_url=f"http://127.0.0.1:{port}/v1")
    runner = await make_runner(models=[model])
    [failed] = await collect(runner, "t", "hi")
    assert isinstance(failed, Failed)
    assert failed.code == "unreachable"
    assert failed.message.startswith("The model is not reachable: ")
    assert "Traceback" not in failed.message


async def test_bad_thread_id_and_bad_model_class(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await make_runner(models=[ModelConfig(name="x", model="m", use="no_such_module:Chat")])
    [bad_id] = await collect(runner, "../etc", "hi")
    assert bad_id.code == "bad_request"  # type: ignore[union-attr]
    [bad_model] = await collect(runner, "t", "hi")
    assert isinstance(bad_model, Failed)
    assert bad_model.code == "model_config"
    assert "no_such_module" in bad_model.message
    assert fake_openai.requests == []


async def test_busy_thread_gets_failed_busy(runner: AgentRunner, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="slow answer here", stall_after=1))
    stream = runner.stream("t", Turn(text="one"), RunSettings())
    await _first_text(stream)
    assert runner.is_running("t")
    busy = await collect(runner, "t", "two")
    assert [type(e) for e in busy] == [Failed]
    assert busy[0].code == "busy"  # type: ignore[union-attr]
    other = await collect(runner, "other", "free")  # other threads are not blocked
    assert other[-1] == Final("echo: free")
    fake_openai.release()
    rest = [e async for e in stream]
    assert rest[-1] == Final("slow answer here")
    assert not runner.is_running("t")


async def test_cancel_mid_stream_then_next_run_works(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="a long answer that never ends", stall_after=2))
    seen: list[AgentEvent] = []

    async def consume() -> None:
        async for event in runner.stream("t", Turn(text="first"), RunSettings()):
            seen.append(event)

    task = asyncio.create_task(consume())
    while not seen:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not runner.is_running("t")
    assert (await collect(runner, "t", "second"))[-1] == Final("echo: second")
    assert fake_openai.user_texts(fake_openai.last_request)[-1] == "second"
    assert not fake_openai.requests[0].finished


async def test_thread_is_free_once_the_end_is_seen(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    first: Any = runner.stream("t", Turn(text="one"), RunSettings())  # an async generator
    async for event in first:
        if isinstance(event, Final):
            break  # a consumer that stops at the end without closing the stream
    assert not runner.is_running("t")
    fake_openai.script(Reply(text="held up here", stall_after=1))
    second = runner.stream("t", Turn(text="two"), RunSettings())
    await _first_text(second)
    await first.aclose()  # closing the old stream late must not free the new run's thread
    assert runner.is_running("t")
    fake_openai.release()
    assert [e async for e in second][-1] == Final("held up here")


async def test_cancel_by_thread_id_ends_stream_with_cancelled(
    runner: AgentRunner, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="stalling forever here", stall_after=1))
    stream = runner.stream("t", Turn(text="go"), RunSettings())
    await _first_text(stream)
    assert runner.cancel("t")
    rest = [e async for e in stream]
    assert rest[-1] == Failed("cancelled", "Stopped.")
    assert not runner.is_running("t")
    assert not runner.cancel("t")


def _tools(*tools: Any):
    def provider(_ctx: BuildContext) -> list[Any]:
        return list(tools)

    return provider


async def test_tool_round_trip_through_provider(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    runner = await make_runner(tool_providers=[_tools(add)])
    fake_openai.script(
        Reply(tool_calls=[ToolCall("add", {"a": 2, "b": 3}, id="call_1")]), Reply(text="It is 5.")
    )
    events = await collect(runner, "t", "2+3?")
    assert events == [
        ToolStarted("call_1", "add", "add(a=2, b=3)"),
        ToolFinished("call_1", "add", True, "5"),
        *[e for e in events if isinstance(e, TextDelta)],
        Final("It is 5."),
    ]
    first, second = fake_openai.requests
    assert first.tool_names == ["add"]
    tool_message = second.messages[-1]
    assert tool_message == {"role": "tool", "tool_call_id": "call_1", "content": "5"}


async def test_failing_tool_reports_not_ok(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    @tool
    def explode() -> str:
        """Always fails."""
        raise ToolException("kaboom")

    explode.handle_tool_error = True
    runner = await make_runner(tool_providers=[_tools(explode)])
    fake_openai.script(Reply(tool_calls=[ToolCall("explode", {}, id="c9")]), Reply(text="Sorry."))
    events = await collect(runner, "t", "go")
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert not finished.ok
    assert "kaboom" in finished.summary
    assert events[-1] == Final("Sorry.")


async def test_cancel_during_tool_repairs_dangling_call(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    entered = asyncio.Event()

    @tool
    async def wait_forever() -> str:
        """Never returns."""
        entered.set()
        await asyncio.Event().wait()
        return "never"

    runner = await make_runner(tool_providers=[_tools(wait_forever)])
    fake_openai.script(Reply(tool_calls=[ToolCall("wait_forever", {}, id="c1")]))
    stream = runner.stream("t", Turn(text="start"), RunSettings())
    assert isinstance(await anext(stream), ToolStarted)
    await asyncio.wait_for(entered.wait(), 5)
    runner.cancel("t")
    assert [e async for e in stream] == [Failed("cancelled", "Stopped.")]

    assert (await collect(runner, "t", "next"))[-1] == Final("echo: next")
    messages = fake_openai.last_request.messages
    repaired = [m for m in messages if m["role"] == "tool"]
    assert repaired == [{"role": "tool", "tool_call_id": "c1", "content": INTERRUPTED}]


async def test_stop_cancels_active_runs(make_runner: MakeRunner, fake_openai: FakeOpenAI) -> None:
    runner = await make_runner()
    fake_openai.script(Reply(text="never finishing text", stall_after=1))
    stream = runner.stream("t", Turn(text="go"), RunSettings())
    await _first_text(stream)
    await runner.stop()
    assert [e async for e in stream][-1] == Failed("cancelled", "Stopped.")
    assert not runner.is_running("t")


async def test_models_api_and_warnings(
    make_runner: MakeRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    runner = await make_runner(
        models=[
            ModelConfig(name="gpt", model="gpt-4o"),
            ModelConfig(name="mini", model="m", api_key="k"),
        ],
        default_model="mini",
        config=AgentConfig(),
    )
    assert runner.model_names() == ["gpt", "mini"]
    assert runner.resolve_model(None).name == "mini"
    assert runner.resolve_model("gpt").model == "gpt-4o"
    assert runner.resolve_model("nope").name == "mini"  # stale names fall back to the default
    assert runner.model_warnings() == [
        "models[0] (gpt): no API key: set OPENAI_API_KEY or models[0].api_key"
    ]


async def test_echo_model_runs_in_process(make_runner: MakeRunner, fake_openai: FakeOpenAI) -> None:
    model = ModelConfig(name="echo", model="echo", use="tests.fakes.echo_model:EchoChatModel")
    runner = await make_runner(models=[model])
    events = await collect(runner, "t", "ping")
    assert events[-1] == Final("echo: ping")
    # the whole answer is queued before the consumer wakes: its deltas arrive joined
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "echo: ping"
    assert fake_openai.requests == []
