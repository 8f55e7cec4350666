"""Helpers for the hands tests: a service with agent options, and what the fake model saw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.openai_server import ChatRequest, FakeOpenAI, text_of
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness


def service(tmp_path: Path, fake: FakeOpenAI, **agent: Any) -> ServiceHarness:
    agent.setdefault("skills", {"path": str(tmp_path / "skills")})
    agent.setdefault("extensions_config", str(tmp_path / "extensions_config.json"))
    return ServiceHarness(tmp_path / "data", fake, {"test": {"enabled": True}}, agent=agent)


def chan(svc: ServiceHarness) -> RecordingChannel:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    return channel


def tool_results(request: ChatRequest) -> list[str]:
    return [text_of(m.get("content")) for m in request.messages if m.get("role") == "tool"]


def system_text(request: ChatRequest) -> str:
    return "\n".join(
        text_of(m.get("content")) for m in request.messages if m.get("role") == "system"
    )


def outputs(tmp_path: Path) -> Path:
    [found] = list((tmp_path / "data" / "threads").glob("*/user-data/outputs"))
    return found
