"""Runner fixtures: an AgentRunner on a temp data dir, pointed at the fake OpenAI server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from agent.config import AgentConfig, ModelConfig
from agent.events import AgentEvent, RunSettings, Turn
from agent.runner import AgentRunner
from tests.fakes.openai_server import FakeOpenAI

MakeRunner = Callable[..., Awaitable[AgentRunner]]


def model_config(fake: FakeOpenAI, name: str = "gpt", model: str = "fake-model", **extra: Any):
    return ModelConfig(name=name, model=model, api_key="sk-test", base_url=fake.base_url, **extra)


@pytest.fixture
async def make_runner(fake_openai: FakeOpenAI, tmp_path: Path) -> AsyncIterator[MakeRunner]:
    """`await make_runner(models=..., tool_providers=..., ...)`; every runner is stopped after."""
    started: list[AgentRunner] = []

    async def make(**kwargs: Any) -> AgentRunner:
        kwargs.setdefault("models", [model_config(fake_openai)])
        kwargs.setdefault("default_model", None)
        kwargs.setdefault(
            "config",
            AgentConfig(max_retries=0, request_timeout_seconds=10, title={"enabled": False}),
        )  # no extra request
        kwargs.setdefault("data_dir", tmp_path / "data")
        runner = AgentRunner(**kwargs)
        await runner.start()
        started.append(runner)
        return runner

    yield make
    for runner in reversed(started):
        await runner.stop()


@pytest.fixture
async def runner(make_runner: MakeRunner) -> AgentRunner:
    return await make_runner()


async def collect(
    runner: AgentRunner, thread_id: str, text: str, settings: RunSettings | None = None, **turn: Any
) -> list[AgentEvent]:
    return [
        event
        async for event in runner.stream(
            thread_id, Turn(text=text, **turn), settings or RunSettings()
        )
    ]
