"""Configuration at run time, end to end: the agent's settings, the admin token and edits of
config.yaml itself (good, bad, broken and unwritable files) reach the running service."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import yaml

from bot import texts
from bot.config.secrets import secrets_path
from tests.e2e.config.service import (
    NEW_TOKEN,
    answered,
    system_text,
    tool_names,
    wait_change,
    write_config,
)


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


async def test_an_edit_of_a_broken_file_is_refused(svc) -> None:
    assert svc.app.live is not None
    await svc.app.live.stop()
    svc.path.write_text("models: [unclosed\n", encoding="utf-8")
    status, body = await svc.call("PATCH", "/api/config/channels/telegram", {"enabled": True})
    assert status == 422
    (error,) = body["detail"]["errors"]
    assert error.startswith(f"{svc.path}: not valid YAML")
    assert svc.path.read_text(encoding="utf-8") == "models: [unclosed\n"
