"""Generated requests to the configuration routes of a service started from a file never get a
5xx, and leave a config.yaml that still loads. Platform sections are left out: a generated valid
section would enable a channel against the real platform."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import yaml

from bot.app import App
from bot.config.schema import load_settings
from gateway.server import serve
from tests.fakes.openai_server import FakeOpenAI
from tests.gateway.conftest import AUTH, TOKEN
from tests.gateway.test_schemathesis import fuzz
from tests.harness import service_config


async def test_config_routes_never_answer_5xx(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    raw = service_config(tmp_path / "data", fake_openai, gateway={"auth_token": TOKEN})
    path = tmp_path / "config.yaml"
    path.write_text("# kept\n" + yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    app = App(load_settings(path), front=serve)
    await app.start()
    try:
        assert app.gateway is not None
        async with (
            aiohttp.ClientSession() as http,
            http.get(app.gateway.url + "/openapi.json", headers=AUTH) as resp,
        ):
            doc = await resp.json()
        doc["paths"] = {
            p: ops
            for p, ops in doc["paths"].items()
            if p.startswith("/api/config") and "/channels/" not in p
        }
        assert "/api/config/agent" in doc["paths"]
        failures, sent = await asyncio.to_thread(fuzz, doc, app.gateway.url, "t1")
    finally:
        await app.stop()
    assert sent > 0
    assert failures == []
    load_settings(path)  # whatever was accepted left a valid file
    assert path.read_text(encoding="utf-8").startswith("# kept\n")
