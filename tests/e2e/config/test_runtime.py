"""Configuration at run time, end to end: the admin API and edits of config.yaml change the
running service (real python-telegram-bot against the fake Telegram, the agent against the fake
OpenAI server), without a restart."""

from __future__ import annotations

import stat
from typing import Any

from bot import texts
from bot.config.schema import load_settings
from bot.config.secrets import secrets_path
from tests.e2e.config.service import (
    HEADER,
    NEW_TOKEN,
    answered,
    start_service,
)
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import TOKEN


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
