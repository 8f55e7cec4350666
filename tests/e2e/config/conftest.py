"""Fixtures of the configuration tests: the fake Telegram, and the running service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.config.service import Service, start_service
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import TOKEN, FakeTelegram


@pytest.fixture
def fake() -> Any:
    server = FakeTelegram().start()
    yield server
    server.stop()


@pytest.fixture
async def svc(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Service]:
    monkeypatch.setenv("TG_TOKEN", TOKEN)
    telegram = {
        "enabled": True,
        "bot_token": "$TG_TOKEN",
        "api_base": fake.api_base,
        "poll_timeout": 1,
        "allowed_users": [42],
    }
    service = await start_service(tmp_path, fake_openai, {"telegram": telegram})
    try:
        yield service
    finally:
        await service.app.stop()
