"""The console follows `gateway.auth_token` as it changes at run time (an edit of config.yaml,
applied by bot/config/apply.py): a new token ends every session and only it logs in; an
emptied token opens the console on loopback, as it opens the API."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.app import App
from bot.config.schema import load_settings
from gateway.server import serve
from tests.console.client import Console
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import service_config


async def set_token(app: App, path: Path, token: str) -> None:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw["gateway"]["auth_token"] = token
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    assert app.live is not None
    change = await app.live.reload()
    assert change.applied == ["gateway.auth_token"], change


async def test_login_follows_the_live_admin_token(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> None:
    path = tmp_path / "config.yaml"
    raw = service_config(
        tmp_path / "data",
        fake_openai,
        {"test": {"enabled": True}},
        gateway={"host": "127.0.0.1", "port": 0, "auth_token": "first-token"},
    )
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    app = App(load_settings(path), front=serve)
    await app.start()
    assert app.gateway is not None
    assert app.live is not None
    await app.live.stop()  # the test reloads by itself (the watcher would race it)
    console = Console(app.gateway.url)
    try:
        await console.login("first-token")
        assert (await console.get("/console/channels"))[0] == 200

        await set_token(app, path, "second-token")
        status, _, resp = await console.get("/console/channels")
        assert status == 303  # the session of the old token has ended
        assert resp.headers["Location"].startswith("/console/login")
        assert (await console.get("/console/login"))[0] == 200
        status, page, _ = await console.post("/console/login", {"token": "first-token"})
        assert status == 401
        assert "not the admin token" in page
        await console.login("second-token")
        assert (await console.get("/console/channels"))[0] == 200

        await set_token(app, path, "")
        fresh = Console(app.gateway.url)
        try:
            status, page, _ = await fresh.get("/console/channels")
            assert status == 200  # open on loopback without a token, like the API
            assert "Log out" not in page
        finally:
            await fresh.close()
    finally:
        await console.close()
        await app.stop()
