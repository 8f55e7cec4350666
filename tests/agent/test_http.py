"""Chat models on one aiohttp pool per endpoint, their streams read as dicts (agent/http.py)."""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Any

from openai import DefaultAioHttpClient

from agent import http
from agent.config import AgentConfig, ModelConfig
from agent.models import create_chat_model
from tests.fakes.openai_server import FakeOpenAI

AGENT = AgentConfig(max_retries=0, request_timeout_seconds=10)


def _model(fake: FakeOpenAI, name: str = "a", base_url: str | None = None, **extra: object):
    return ModelConfig(
        name=name, model="m", api_key="sk-test", base_url=base_url or fake.base_url, **extra
    )


async def test_models_on_one_endpoint_share_one_aiohttp_client(fake_openai: FakeOpenAI) -> None:
    http.hold_pools()
    try:
        one: Any = create_chat_model(_model(fake_openai, "a"), AGENT, thinking=False)
        two: Any = create_chat_model(_model(fake_openai, "b"), AGENT, thinking=False)
        other: Any = create_chat_model(
            _model(fake_openai, "c", "http://127.0.0.1:9/v1"), AGENT, thinking=False
        )
        assert isinstance(one.http_async_client, DefaultAioHttpClient)
        assert one.http_async_client is two.http_async_client
        assert other.http_async_client is not one.http_async_client
    finally:
        await http.release_pools()
    assert one.http_async_client.is_closed


async def test_stream_chunks_arrive_as_dicts_and_text_is_unchanged(
    fake_openai: FakeOpenAI,
) -> None:
    http.hold_pools()
    try:
        chat: Any = create_chat_model(_model(fake_openai), AGENT, thinking=False)
        stream = await chat.async_client.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        chunks = [chunk async for chunk in stream]
        assert chunks
        assert all(isinstance(chunk, dict) for chunk in chunks)
        text = "".join([str(part.content) async for part in chat.astream("hello there")])
        assert text == "echo: hello there"
        answer = await chat.ainvoke("once")  # streaming=True still; the result is whole
        assert answer.content == "echo: once"
    finally:
        await http.release_pools()


async def test_a_model_with_its_own_client_or_another_class_is_left_as_built(
    fake_openai: FakeOpenAI,
) -> None:
    proxied: Any = create_chat_model(
        _model(fake_openai, openai_proxy="http://127.0.0.1:9"), AGENT, thinking=False
    )
    assert not isinstance(proxied.async_client, http.DictChunkCompletions)
    outside: Any = await asyncio.to_thread(
        create_chat_model, _model(fake_openai), AGENT, thinking=False
    )  # no running loop there
    assert not isinstance(outside.async_client, http.DictChunkCompletions)


async def test_models_built_on_threads_at_once_share_the_loops_one_client(
    fake_openai: FakeOpenAI,
) -> None:
    """Graphs of two runners can be built on two threads at once (`off_loop`): their models
    still get the one client of the endpoint, the one closed when the last runner stops."""
    http.hold_pools()
    barrier = threading.Barrier(4)

    def build(name: str) -> Any:
        barrier.wait(5)  # all four ask at the same moment
        return create_chat_model(_model(fake_openai, name), AGENT, thinking=False)

    try:
        models = await asyncio.gather(
            *(http.off_loop(functools.partial(build, name)) for name in "abcd")
        )
        clients = {id(model.http_async_client) for model in models}
        assert len(clients) == 1
    finally:
        await http.release_pools()
    assert models[0].http_async_client.is_closed
