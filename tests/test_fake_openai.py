"""The fake OpenAI server against the real `openai` and `langchain-openai` clients."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_openai import ChatOpenAI

from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall
from tests.fakes.openai_wire import split_tokens


def _client(fake: FakeOpenAI) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0)


def _chat(fake: FakeOpenAI, **kwargs: Any) -> ChatOpenAI:
    options: dict[str, Any] = {
        "model": "fake-model",
        "base_url": fake.base_url,
        "api_key": "sk-test",
        "max_retries": 0,
        **kwargs,
    }
    return ChatOpenAI(**options)


def test_split_tokens_rejoins_and_caps_word_length() -> None:
    text = "Hello, wonderful   world!\nok"
    pieces = split_tokens(text)
    assert "".join(pieces) == text
    assert all(len(p.strip()) <= 4 for p in pieces)


async def test_default_responder_echoes_last_user_message(fake_openai: FakeOpenAI) -> None:
    answer = await _chat(fake_openai).ainvoke([HumanMessage("first"), HumanMessage("hi there")])
    assert answer.content == "echo: hi there"
    request = fake_openai.last_request
    assert request.model == "fake-model"
    assert not request.stream
    assert fake_openai.user_texts(request) == ["first", "hi there"]
    assert request.headers["Authorization"] == "Bearer sk-test"


async def test_streamed_text_arrives_in_chunks(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="The quick brown fox jumps over the lazy dog."))
    chunks = [c async for c in _chat(fake_openai, streaming=True).astream("go")]
    texts = [str(c.content) for c in chunks if c.content]
    assert len(texts) > 5
    assert "".join(texts) == "The quick brown fox jumps over the lazy dog."
    assert fake_openai.last_request.stream
    for _ in range(200):  # the server's thread marks it after its last write, maybe a bit later
        if fake_openai.last_request.finished:
            break
        await asyncio.sleep(0.01)
    assert fake_openai.last_request.finished


async def test_script_is_consumed_in_order_then_default(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="one"), Reply(text="two"))
    model = _chat(fake_openai)
    answers = [(await model.ainvoke(q)).content for q in ("a", "b", "c")]
    assert answers == ["one", "two", "echo: c"]
    assert fake_openai.pending == 0


async def test_custom_responder_sees_request_body(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = lambda body: Reply(text=f"model={body['model']}")
    answer = await _chat(fake_openai).ainvoke("x")
    assert answer.content == "model=fake-model"


@pytest.mark.parametrize("streaming", [True, False])
async def test_tool_calls_reach_langchain(fake_openai: FakeOpenAI, streaming: bool) -> None:
    fake_openai.script(
        Reply(tool_calls=[ToolCall("add", {"a": 1, "b": 2}), ToolCall("now", {}, id="call_x")])
    )

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    def now() -> str:
        """The time."""
        return "noon"

    model = _chat(fake_openai, streaming=streaming).bind_tools([add, now])
    if streaming:
        message: Any = None
        async for chunk in model.astream("add"):
            message = chunk if message is None else message + chunk
        assert message is not None
        assert message.response_metadata["finish_reason"] == "tool_calls"
    else:
        message = await model.ainvoke("add")
    calls = message.tool_calls
    assert [(c["name"], c["args"]) for c in calls] == [("add", {"a": 1, "b": 2}), ("now", {})]
    assert calls[1]["id"] == "call_x"
    assert calls[0]["id"].startswith("call_")
    assert fake_openai.last_request.tool_names == ["add", "now"]


async def test_rate_limit_surfaces_with_retry_after(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(status=429, error="slow down", retry_after=7))
    with pytest.raises(openai.RateLimitError) as caught:
        await _client(fake_openai).chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "x"}]
        )
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"
    assert "slow down" in str(caught.value)


async def test_server_error_through_langchain(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(status=500, error="boom"))
    with pytest.raises(openai.InternalServerError):
        await _chat(fake_openai, streaming=True).ainvoke("x")


async def test_usage_in_stream_and_completion(fake_openai: FakeOpenAI) -> None:
    usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    fake_openai.script(Reply(text="a b c", usage=usage), Reply(text="a b c", usage=usage))
    message: AIMessageChunk | None = None
    async for chunk in _chat(fake_openai, streaming=True, stream_usage=True).astream("x"):
        message = chunk if message is None else message + chunk
    assert message is not None
    assert message.usage_metadata is not None
    assert message.usage_metadata["input_tokens"] == 11
    assert message.usage_metadata["output_tokens"] == 3
    assert fake_openai.last_request["stream_options"] == {"include_usage": True}
    whole = await _chat(fake_openai).ainvoke("x")
    assert whole.usage_metadata is not None
    assert whole.usage_metadata["total_tokens"] == 14


async def test_raw_stream_wire_shape(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="hi", reasoning="think"))
    stream = await _client(fake_openai).chat.completions.create(
        model="m2",
        messages=[{"role": "user", "content": "x"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [c async for c in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    reasoning = [
        getattr(c.choices[0].delta, "reasoning_content", None) for c in chunks if c.choices
    ]
    assert "".join(r for r in reasoning if r) == "think"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert {c.model for c in chunks} == {"m2"}


async def test_delay_and_pacing(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="a b c d e", delay=0.05, tokens_per_second=100))
    started = time.monotonic()
    chunks = [c async for c in _chat(fake_openai, streaming=True).astream("x")]
    assert "".join(str(c.content) for c in chunks) == "a b c d e"
    assert time.monotonic() - started >= 0.05 + 4 * 0.01


async def test_models_endpoint(fake_openai: FakeOpenAI) -> None:
    models = await _client(fake_openai).models.list()
    assert [m.id for m in models.data] == ["fake-model"]
    assert fake_openai.model_list_calls == 1


async def test_wait_requests_and_reset(fake_openai: FakeOpenAI) -> None:
    await _chat(fake_openai).ainvoke("x")
    assert len(await fake_openai.wait_requests(1, timeout=1)) == 1
    fake_openai.reset()
    assert fake_openai.requests == []
    with pytest.raises(AssertionError):
        await fake_openai.wait_requests(1, timeout=0.02)


async def test_stalled_stream_notices_client_leaving(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="one two three four", stall_after=1))
    stream: Any = _chat(fake_openai, streaming=True).astream("x")  # an async generator
    first = [await anext(stream) for _ in range(2)]
    assert "".join(str(c.content) for c in first) == "one "
    await stream.aclose()
    assert not fake_openai.last_request.finished
