"""Configuration at run time, end to end: the admin API and edits of config.yaml change the
running service (real python-telegram-bot against the fake Telegram, the agent against the fake
OpenAI server), without a restart."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from bot import texts
from bot.app import App
from bot.config.schema import load_settings
from bot.config.secrets import secrets_path
from gateway.server import serve
from tests.fakes.openai_server import FakeOpenAI, text_of
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.harness import service_config

NEW_TOKEN = "654321:ROTATED-token"
HEADER = "# Antler test config: this comment must survive every API edit\n"


@pytest.fixture
def fake() -> Any:
    server = FakeTelegram().start()
    yield server
    server.stop()


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


async def test_allowlist_change_refuses_the_next_message(svc, fake, fake_openai) -> None:
    await answered(svc, fake, fake_openai, 42, "hello")
    status, change = await svc.call(
        "PATCH", "/api/config/channels/telegram", {"allowed_users": [7]}
    )
    assert status == 200, change
    assert change["changed"] == ["channels.telegram.allowed_users"]
    assert change["applied"] == ["channels.telegram.allowed_users"]
    assert change["channels_restarted"] == []  # a live key: the channel kept running
    asked = len(fake_openai.requests)
    fake.push_message(42, "am I still allowed?", user_id=42)
    await fake.wait_for(lambda: texts.NOT_ALLOWED in fake.sent_texts(42), timeout=10)
    await svc.idle()
    assert len(fake_openai.requests) == asked
    await answered(svc, fake, fake_openai, 7, "and me?", user=7)
    text = svc.path.read_text(encoding="utf-8")
    assert text.startswith(HEADER)  # comments kept
    assert "bot_token: $TG_TOKEN" in text  # the reference stays a reference
    status, changes = await svc.call("GET", "/api/config/changes")
    (last, *_) = changes["changes"]
    assert last["who"].startswith("ada")
    assert last["source"] == "api"
    assert last["changed"] == ["channels.telegram.allowed_users"]


async def test_token_rotation_reconnects_and_answers(svc, fake, fake_openai) -> None:
    fake.token = NEW_TOKEN  # the platform now accepts the new token only
    status, change = await svc.call(
        "PATCH", "/api/config/channels/telegram", {"bot_token": NEW_TOKEN}
    )
    assert status == 200, change
    assert change["channels_restarted"] == ["telegram"]
    assert change["errors"] == []
    await answered(svc, fake, fake_openai, 42, "after rotation")
    # the file still refers to $TG_TOKEN; the new value is in the 0600 secrets file
    assert "bot_token: $TG_TOKEN" in svc.path.read_text(encoding="utf-8")
    secrets = secrets_path(svc.path)
    assert f"TG_TOKEN={NEW_TOKEN}" in secrets.read_text(encoding="utf-8")
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    status, config = await svc.call("GET", "/api/config")
    assert config["config"]["channels"]["telegram"]["bot_token"] == "***"
    assert NEW_TOKEN not in str(config)
    assert TOKEN not in str(config)
    status, channels = await svc.call("GET", "/api/channels")
    info = channels["channels"]["telegram"]
    assert info["running"]
    assert info["enabled"]
    assert info["status"] != "retrying"
    # the mask sent back keeps the stored value (a no-op edit: nothing changes)
    status, change = await svc.call(
        "PATCH", "/api/config/channels/telegram", {"bot_token": "***", "poll_timeout": 1}
    )
    assert status == 200
    assert change["changed"] == []
    telegram: Any = load_settings(svc.path).channels.platform("telegram")
    assert telegram.bot_token.get_secret_value() == NEW_TOKEN


async def test_added_model_is_offered_by_models(svc, fake, fake_openai) -> None:
    status, config = await svc.call("GET", "/api/config")
    models = config["config"]["models"]
    assert all(m["api_key"] == "***" for m in models)
    turbo = {
        "name": "turbo",
        "display_name": "Turbo",
        "model": "fake-turbo",
        "api_key": "sk-turbo",
        "base_url": models[0]["base_url"],
        "max_retries": 0,
    }
    status, change = await svc.call("PUT", "/api/config/models", {"models": [*models, turbo]})
    assert status == 200, change
    assert change["applied"] == ["models"]
    fake.push_message(42, "/models turbo", user_id=42)
    await fake.wait_for(lambda: any("Turbo" in t for t in fake.sent_texts(42)), timeout=10)
    await svc.idle()
    await answered(svc, fake, fake_openai, 42, "which model?")
    assert fake_openai.requests[-1].model == "fake-turbo"
    text = svc.path.read_text(encoding="utf-8")
    assert "api_key: sk-test" in text  # masked keys sent back kept their stored value
    assert "api_key: $ANTLER_MODELS_2_API_KEY" in text  # a new secret goes to the secrets file


async def test_invalid_change_leaves_service_and_file_untouched(svc, fake, fake_openai) -> None:
    before = svc.path.read_bytes()
    status, body = await svc.call(
        "PATCH", "/api/config/channels/telegram", {"bot_token": "", "allowed_users": []}
    )
    assert status == 422
    assert body["detail"]["errors"] == [
        "channels.telegram.bot_token: required when channels.telegram.enabled is true"
    ]
    status, body = await svc.call(
        "PUT",
        "/api/config/models",
        {"models": [{"name": "x", "model": "y"}], "default_model": "nope"},
    )
    assert status == 422
    assert any(e.startswith("default_model:") for e in body["detail"]["errors"])
    assert svc.path.read_bytes() == before
    assert not secrets_path(svc.path).exists()
    assert svc.app.runner.model_names() == ["fast", "smart"]
    fake.push_message(42, "still here?", user_id=7)  # the allowlist did not change
    await fake.wait_for(lambda: texts.NOT_ALLOWED in fake.sent_texts(42), timeout=10)
    await answered(svc, fake, fake_openai, 42, "still answering")
    status, changes = await svc.call("GET", "/api/config/changes")
    assert [c["ok"] for c in changes["changes"]] == [False, False]


async def test_editing_the_file_is_applied_and_a_bad_edit_is_not(svc, fake, fake_openai) -> None:
    text = svc.path.read_text(encoding="utf-8")
    svc.path.write_text(
        text.replace("  - '42'", "  - '42'\n    - '7'").replace(
            "    - 42\n", "    - 42\n    - 7\n"
        ),
        encoding="utf-8",
    )
    await wait_change(svc, 1)
    assert svc.app.gate.configs["telegram"].allowed_users == ["42", "7"]
    await answered(svc, fake, fake_openai, 7, "hot reloaded", user=7)

    good = svc.path.read_text(encoding="utf-8")
    svc.path.write_text(good.replace("poll_timeout: 1", "poll_timeout: 99"), encoding="utf-8")
    await wait_change(svc, 2)
    status, body = await svc.call("POST", "/api/config/reload")
    assert status == 422
    assert body["detail"]["errors"] == [
        "channels.telegram.poll_timeout: Input should be less than or equal to 50"
    ]
    assert svc.app.settings.channels.telegram.poll_timeout == 1
    await answered(svc, fake, fake_openai, 42, "bad edit ignored")

    svc.path.write_text(good.replace("port: 0", "port: 1"), encoding="utf-8")
    status, change = await svc.call("POST", "/api/config/reload")
    assert status == 200
    assert change["pending_restart"] == ["gateway.port"]
    assert change["applied"] == []


async def test_disable_then_enable_a_channel(svc, fake, fake_openai) -> None:
    status, change = await svc.call("PATCH", "/api/config/channels/telegram", {"enabled": False})
    assert status == 200
    assert change["channels_restarted"] == ["telegram"]
    status, channels = await svc.call("GET", "/api/channels")
    info = channels["channels"]["telegram"]
    assert (info["enabled"], info["running"], info["status"]) == (False, False, "stopped")
    status, body = await svc.call("POST", "/api/channels/telegram/restart")
    assert status == 409
    assert "disabled" in body["detail"]
    status, change = await svc.call("PATCH", "/api/config/channels/telegram", {"enabled": True})
    assert status == 200
    assert change["errors"] == []
    await answered(svc, fake, fake_openai, 42, "back again")


async def wait_change(svc: Service, n: int) -> None:
    """Until the watcher recorded `n` changes from the file."""
    for _ in range(400):
        rows = await svc.app.live.changes.recent() if svc.app.live else []
        if len([r for r in rows if r["source"] == "file"]) >= n:
            return
        await asyncio.sleep(0.025)
    raise AssertionError("the watcher did not pick up the edit")


async def test_agent_settings_apply_to_the_next_turn(svc, fake, fake_openai) -> None:
    await answered(svc, fake, fake_openai, 42, "before")
    assert "Answer like a pirate" not in system_text(fake_openai.requests[-1])
    status, change = await svc.call(
        "PATCH", "/api/config/agent", {"system_prompt": "Answer like a pirate."}
    )
    assert status == 200
    assert change["applied"] == ["agent.system_prompt"]
    await answered(svc, fake, fake_openai, 42, "after")
    assert "Answer like a pirate." in system_text(fake_openai.requests[-1])
    assert "system_prompt: Answer like a pirate." in svc.path.read_text(encoding="utf-8")


def system_text(request: Any) -> str:
    return " ".join(
        text_of(m.get("content")) for m in request.body["messages"] if m.get("role") == "system"
    )


async def test_a_channel_absent_at_start_is_started_when_enabled(
    tmp_path, fake_openai, fake
) -> None:
    svc = await start_service(tmp_path, fake_openai, {})
    try:
        assert "telegram" not in svc.app.contexts
        status, body = await svc.call("PATCH", "/api/config/channels/telegram", {"enabled": True})
        assert status == 422
        assert body["detail"]["errors"] == [
            "channels.telegram.bot_token: required when channels.telegram.enabled is true"
        ]
        status, change = await svc.call(
            "PUT",
            "/api/config/channels/telegram",
            {"enabled": True, "bot_token": TOKEN, "api_base": fake.api_base, "poll_timeout": 1},
        )
        assert status == 200, change
        assert change["channels_restarted"] == ["telegram"]
        assert "$ANTLER_CHANNELS_TELEGRAM_BOT_TOKEN" in svc.path.read_text(encoding="utf-8")
        await answered(svc, fake, fake_openai, 42, "hello new channel")
    finally:
        await svc.app.stop()


async def test_disabling_lets_the_running_reply_finish(svc, fake, fake_openai) -> None:
    status, change = await svc.call("PATCH", "/api/config/channels", {"shutdown_grace_seconds": 60})
    assert change["applied"] == ["channels.shutdown_grace_seconds"]
    text = "a slow answer " * 20
    fake_openai.script(Reply(text=text, tokens_per_second=40))
    fake.push_message(42, "take your time", user_id=42)
    await fake_openai.wait_requests(1, timeout=10)
    status, change = await svc.call("PATCH", "/api/config/channels/telegram", {"enabled": False})
    assert status == 200
    assert change["channels_restarted"] == ["telegram"]
    assert "telegram" not in svc.app.channels  # answered at once; the reply goes on
    await fake.wait_for(lambda: text.strip() in fake.sent_texts(42), timeout=20)
    await svc.idle()
    (entry,) = await svc.app.journal.recent()
    assert entry.state == "delivered"
    status, channels = await svc.call("GET", "/api/channels")
    assert channels["channels"]["telegram"]["status"] == "stopped"


async def test_shared_channel_keys_only_by_patch(svc) -> None:
    status, body = await svc.call("PATCH", "/api/config/channels", {"telegram": {}})
    assert status == 422
    assert "telegram" in str(body["detail"])
    status, change = await svc.call("PATCH", "/api/config/channels", {"busy_policy": "interrupt"})
    assert status == 200
    assert change["applied"] == ["channels.busy_policy"]
    assert svc.app.dispatcher.busy_policy("telegram") == "interrupt"


async def test_admin_token_set_in_the_file_protects_the_api_at_once(svc) -> None:
    assert svc.app.live is not None
    await svc.app.live.stop()  # this test reloads by itself (the watcher would race it)
    text = svc.path.read_text(encoding="utf-8")
    assert "\ngateway:\n" in text
    svc.path.write_text(
        text.replace("\ngateway:\n", "\ngateway:\n  auth_token: s3cret-admin\n"), encoding="utf-8"
    )
    change = await svc.app.live.reload()
    assert change.applied == ["gateway.auth_token"]
    status, _ = await svc.call("GET", "/api/config")
    assert status == 401
    async with (
        aiohttp.ClientSession() as http,
        http.get(svc.url + "/api/config", headers={"Authorization": "Bearer s3cret-admin"}) as resp,
    ):
        assert resp.status == 200
        body = await resp.json()
    assert body["config"]["gateway"]["auth_token"] == "***"


async def test_a_config_file_that_cannot_be_written_changes_nothing(
    svc, fake, fake_openai, monkeypatch
) -> None:
    import errno

    import bot.config.live

    def read_only(path: Path, text: str) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(bot.config.live, "write_atomic", read_only)
    before = svc.path.read_bytes()
    status, body = await svc.call(
        "PATCH", "/api/config/channels/telegram", {"bot_token": NEW_TOKEN, "allowed_users": [7]}
    )
    assert status == 500
    assert body["detail"] == "could not write config.yaml: Read-only file system"
    assert svc.path.read_bytes() == before
    assert not secrets_path(svc.path).exists()  # the new token was taken back out
    assert svc.app.gate.configs["telegram"].allowed_users == ["42"]
    await answered(svc, fake, fake_openai, 42, "nothing changed")


async def test_each_live_key_reaches_the_running_part(svc, fake, fake_openai) -> None:
    import logging

    app = svc.app
    assert app.live is not None
    await app.live.stop()  # reloaded by hand below
    await answered(svc, fake, fake_openai, 42, "with the old settings")
    assert "task" in tool_names(fake_openai.requests[-1])
    raw = yaml.safe_load(svc.path.read_text(encoding="utf-8"))
    raw["logging"] = {"level": "warning"}
    raw["default_model"] = "smart"
    raw["schedules"] = {"max_per_person": 3, "poll_seconds": 5}
    raw["channels"]["max_upload_mb"] = 1
    raw["channels"]["telegram"]["group_trigger"] = "all"
    raw["agent"] = {**raw["agent"], "memory": {"max_facts": 7}, "subagents": {"enabled": False}}
    write_config(svc.path, raw)
    hands = app.hands
    level = logging.getLogger().level
    try:
        change = await app.live.reload()
        assert change.ok
        assert change.channels_restarted == []
        assert sorted(change.applied) == sorted(change.changed)
        assert logging.getLogger().level == logging.WARNING
        assert app.runner.resolve_model(None).name == "smart"
        assert app.schedules.config.max_per_person == 3
        assert app.schedules.scheduler.poll == 5
        assert app.turns.max_upload_bytes == 1024 * 1024
        assert app.gate.configs["telegram"].group_trigger == "all"
        assert app.runner.memory.config.max_facts == 7
        assert app.hands is not hands
        assert app.hands.subagents is None
        assert hands.tools not in app.runner.tool_providers
    finally:
        logging.getLogger().setLevel(level)
    await answered(svc, fake, fake_openai, 42, "with the new settings")
    assert fake_openai.requests[-1].model == "fake-smart"
    assert "task" not in tool_names(fake_openai.requests[-1])  # subagents are off now


def tool_names(request: Any) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


async def test_an_edit_of_a_broken_file_is_refused(svc) -> None:
    assert svc.app.live is not None
    await svc.app.live.stop()
    svc.path.write_text("models: [unclosed\n", encoding="utf-8")
    status, body = await svc.call("PATCH", "/api/config/channels/telegram", {"enabled": True})
    assert status == 422
    (error,) = body["detail"]["errors"]
    assert error.startswith(f"{svc.path}: not valid YAML")
    assert svc.path.read_text(encoding="utf-8") == "models: [unclosed\n"
