"""The running service the configuration tests change: started from a config.yaml with the
fake Telegram and the fake OpenAI server, its admin API one call away."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from bot.app import App
from bot.config.schema import load_settings
from gateway.server import serve
from tests.fakes.openai_server import FakeOpenAI, text_of
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.harness import service_config

NEW_TOKEN = "654321:ROTATED-token"
HEADER = "# Antler test config: this comment must survive every API edit\n"


class Service:
    def __init__(self, app: App, path: Path) -> None:
        self.app = app
        self.path = path

    @property
    def url(self) -> str:
        assert self.app.gateway is not None
        return self.app.gateway.url

    async def call(self, method: str, route: str, body: Any = None) -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession() as http,
            http.request(
                method, self.url + route, json=body, headers={"X-Antler-Actor": "ada"}
            ) as resp,
        ):
            return resp.status, await resp.json()

    async def idle(self) -> None:
        while self.app.bus.depth or not await self.app.dispatcher.wait_idle(0.05):
            await asyncio.sleep(0.02)


def write_config(path: Path, raw: dict[str, Any]) -> None:
    path.write_text(HEADER + yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")


async def start_service(
    tmp_path: Path, fake_openai: FakeOpenAI, channels: dict[str, Any]
) -> Service:
    raw = service_config(tmp_path / "data", fake_openai, channels)
    path = tmp_path / "config.yaml"
    write_config(path, raw)
    app = App(load_settings(path), front=serve)
    await app.start()
    assert app.live is not None
    app.live.poll = 0.05
    return Service(app, path)


async def telegram_service(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> Service:
    """The service with one Telegram channel, polling `fake`, that user 42 may use."""
    monkeypatch.setenv("TG_TOKEN", TOKEN)
    telegram = {
        "enabled": True,
        "bot_token": "$TG_TOKEN",
        "api_base": fake.api_base,
        "poll_timeout": 1,
        "allowed_users": [42],
    }
    return await start_service(tmp_path, fake_openai, {"telegram": telegram})


async def answered(
    svc: Service,
    fake: FakeTelegram,
    fake_openai: FakeOpenAI,
    chat: int,
    text: str,
    *,
    user: int = 42,
) -> None:
    before = len(fake_openai.requests)
    fake.push_message(chat, text, user_id=user)
    await fake_openai.wait_requests(before + 1, timeout=10)
    await fake.wait_for(lambda: any(text in t for t in fake.sent_texts(chat)), timeout=10)
    await svc.idle()


async def wait_change(svc: Service, n: int) -> None:
    """Until the watcher recorded `n` changes from the file."""
    for _ in range(400):
        rows = await svc.app.live.changes.recent() if svc.app.live else []
        if len([r for r in rows if r["source"] == "file"]) >= n:
            return
        await asyncio.sleep(0.025)
    raise AssertionError("the watcher did not pick up the edit")


def system_text(request: Any) -> str:
    return " ".join(
        text_of(m.get("content")) for m in request.body["messages"] if m.get("role") == "system"
    )


def tool_names(request: Any) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]
