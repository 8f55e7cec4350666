"""Shared fixtures: no proxies, ever (slack_sdk ignores NO_PROXY); the fake OpenAI server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAI

_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in _PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fresh fake OpenAI-compatible server for one test (`fake_openai.base_url` ends in /v1)."""
    fake = FakeOpenAI().start()
    try:
        yield fake
    finally:
        fake.release()
        fake.stop()


@pytest.fixture
def test_channel_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register the recording channel as platform `test` for this test."""
    import channels
    from bot.config import channels_model

    monkeypatch.setitem(
        channels.REGISTRY,
        "test",
        (
            "tests.fakes.recording_channel:RecordingConfig",
            "tests.fakes.recording_channel:RecordingChannel",
        ),
    )
    channels_model.cache_clear()
    yield
    channels_model.cache_clear()
