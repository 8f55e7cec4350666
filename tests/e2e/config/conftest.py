"""Fixtures of the configuration tests: the fake Telegram, and the running service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.config.service import Service, telegram_service
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.threaded import fake_fixture

fake = fake_fixture(FakeTelegram, "fake")


@pytest.fixture
async def svc(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Service]:
    service = await telegram_service(tmp_path, fake_openai, fake, monkeypatch)
    try:
        yield service
    finally:
        fake_openai.release()  # a stalled reply ends instead of holding the drain
        await service.app.stop()
