"""Text deltas one socket read already holds reach LangChain as one chunk (agent/chunks.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agent import http
from agent.config import AgentConfig, ModelConfig
from agent.events import Final, TextDelta
from agent.models import create_chat_model
from tests.agent.conftest import MakeRunner, collect
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall
from tests.fakes.openai_wire import split_tokens

AGENT = AgentConfig(max_retries=0, request_timeout_seconds=10)
TEXT = "The quick brown fox jumps over the lazy dog, again and again, until the end."


def _chat(fake: FakeOpenAI) -> Any:
    config = ModelConfig(name="a", model="m", api_key="sk-test", base_url=fake.base_url)
    return create_chat_model(config, AGENT, thinking=False)


async def _raw_chunks(chat: Any, **extra: Any) -> list[dict[str, Any]]:
    stream = await chat.async_client.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True, **extra
    )
    return [chunk async for chunk in stream]


def _content(chunk: dict[str, Any]) -> str:
    choices = chunk["choices"]
    return choices[0]["delta"].get("content") or "" if choices else ""


async def test_text_read_at_once_arrives_in_fewer_chunks_with_the_same_text(
    fake_openai: FakeOpenAI,
) -> None:
    tokens = len(split_tokens(TEXT))
    http.hold_pools()
    try:
        chat = _chat(fake_openai)
        fake_openai.script(Reply(text=TEXT, one_write=True))
        parts = [part async for part in chat.astream("go")]
        assert "".join(str(part.content) for part in parts) == TEXT
        assert len(parts) < tokens  # one chunk per read, not per token
        fake_openai.script(Reply(text=TEXT))  # written token by token: text the same
        assert "".join([str(p.content) async for p in chat.astream("go")]) == TEXT
    finally:
        await http.release_pools()


async def test_a_join_never_crosses_the_finish_reason_or_usage(fake_openai: FakeOpenAI) -> None:
    http.hold_pools()
    try:
        chat = _chat(fake_openai)
        fake_openai.script(Reply(text=TEXT, one_write=True))
        chunks = await _raw_chunks(chat, stream_options={"include_usage": True})
    finally:
        await http.release_pools()
    assert "".join(_content(chunk) for chunk in chunks) == TEXT
    finish = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert len(finish) == 1
    assert _content(finish[0]) == ""
    assert finish[0]["choices"][0]["finish_reason"] == "stop"
    usage = [c for c in chunks if c.get("usage")]
    assert len(usage) == 1
    assert usage[0]["choices"] == []
    assert chunks.index(finish[0]) < chunks.index(usage[0]) == len(chunks) - 1


async def test_tool_call_deltas_are_never_joined_into_text(fake_openai: FakeOpenAI) -> None:
    call = ToolCall(name="lookup", args={"query": "weather in Paris tomorrow"}, id="call_1")
    http.hold_pools()
    try:
        chat = _chat(fake_openai)
        fake_openai.script(Reply(text=TEXT, tool_calls=[call], one_write=True))
        chunks = await _raw_chunks(chat)
        fake_openai.script(Reply(text=TEXT, tool_calls=[call], one_write=True))
        parts = [part async for part in chat.astream("go")]
    finally:
        await http.release_pools()
    tool_deltas = [c for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    assert len(tool_deltas) == 1 + len(split_tokens('{"query": "weather in Paris tomorrow"}'))
    assert all(_content(c) == "" for c in tool_deltas)
    assert "".join(_content(c) for c in chunks) == TEXT
    message = parts[0]
    for part in parts[1:]:
        message = message + part
    assert message.content == TEXT
    assert [(t["name"], t["args"], t["id"]) for t in message.tool_calls] == [
        ("lookup", {"query": "weather in Paris tomorrow"}, "call_1")
    ]


async def test_what_was_read_is_handed_over_without_waiting_for_more(
    fake_openai: FakeOpenAI,
) -> None:
    """The stream stalls after three tokens: those three reach the reader while it stalls."""
    http.hold_pools()
    try:
        chat = _chat(fake_openai)
        fake_openai.script(Reply(text=TEXT, stall_after=3))
        stream = chat.astream("go").__aiter__()
        seen = ""
        expected = "".join(split_tokens(TEXT)[:3])
        while seen != expected:
            part = await asyncio.wait_for(stream.__anext__(), 10)  # a guard, not a measure
            seen += str(part.content)
            assert expected.startswith(seen)
        fake_openai.release()
        seen += "".join([str(part.content) async for part in stream])
        assert seen == TEXT
    finally:
        await http.release_pools()


async def test_the_agent_streams_and_ends_with_the_same_text(
    make_runner: MakeRunner, fake_openai: FakeOpenAI
) -> None:
    runner = await make_runner()
    fake_openai.script(Reply(text=TEXT, one_write=True))
    events = await collect(runner, "t1", "go")
    deltas = "".join(e.text for e in events if isinstance(e, TextDelta))
    finals = [e for e in events if isinstance(e, Final)]
    assert deltas == TEXT
    assert len(finals) == 1
    assert finals[0].text == TEXT


async def test_events_split_across_reads_are_decoded_whole() -> None:
    """An event cut by a read waits for the rest; `ahead` counts what the read still holds."""
    from agent.chunks import ReadBatches

    reads = [
        b'data: {"a": 1}\n\ndata: {"b"',
        b': 2}\n\ndata: {"c": 3}\n\n',
        b"data: x\r\n\r\ndata: y\r",
        b"\n\r\n: a comment\n\ndata: z",
    ]

    async def source() -> AsyncIterator[bytes]:
        for read in reads:
            yield read

    decoder = ReadBatches()
    seen = [(sse.data, decoder.ahead) async for sse in decoder.aiter_bytes(source())]
    assert seen == [('{"a": 1}', 0), ('{"b": 2}', 1), ('{"c": 3}', 0), ("x", 0), ("y", 0)]


async def test_a_paced_stream_is_handed_over_in_reads_of_several_tokens(
    fake_openai: FakeOpenAI,
) -> None:
    """After a hand-over the stream reads again only `HAND_OVER_EVERY` later, so tokens sent
    one by one 5 ms apart reach LangChain joined, the text unchanged."""
    tokens = len(split_tokens(TEXT))
    http.hold_pools()
    try:
        chat = _chat(fake_openai)
        fake_openai.script(Reply(text=TEXT, tokens_per_second=200))
        parts = [part async for part in chat.astream("go")]
    finally:
        await http.release_pools()
    assert "".join(str(part.content) for part in parts) == TEXT
    assert len(parts) <= tokens // 3
