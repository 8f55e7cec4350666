"""Connections that come back: start outages on the real SDKs, retried on virtual time, shown by
`/api/channels`, recovered without restarting the service."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.channels.feishu import payloads
from tests.channels.slack import events
from tests.channels.slack.test_e2e import slack_cfg, visible
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.fakes.virtual_time import VirtualTime
from tests.harness import ServiceHarness


def telegram_service(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram, **kw: Any
) -> ServiceHarness:
    conf = {"enabled": True, "bot_token": TOKEN, "api_base": fake.api_base, "poll_timeout": 1}
    return ServiceHarness(tmp_path, fake_openai, {"telegram": conf}, only=["telegram"], **kw)


async def until(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := check()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)
    return value


async def channel_info(svc: ServiceHarness, name: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.get(svc.gateway_url + "/api/channels") as r:
        assert r.status == 200
        return (await r.json())["channels"][name]


async def until_status(svc: ServiceHarness, name: str, status: str) -> dict[str, Any]:
    for _ in range(500):
        info = await channel_info(svc, name)
        if info["status"] == status:
            return info
        await asyncio.sleep(0.02)
    raise AssertionError(f"{name} never became {status}: {info}")


async def test_telegram_start_outage_is_retried_shown_and_recovered(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    telegram: FakeTelegram,
    caplog: pytest.LogCaptureFixture,
) -> None:
    vt = VirtualTime()
    vt.hold()
    telegram.fail_next("getMe", 502, "Bad Gateway", times=2)
    caplog.set_level(logging.INFO, logger="bot.supervisor")
    async with telegram_service(tmp_path, fake_openai, telegram, backoff=vt.policy()) as svc:
        await until(lambda: vt.waiting == 1)
        info = await channel_info(svc, "telegram")
        assert (info["status"], info["attempts"], info["running"]) == ("retrying", 1, False)
        assert "Bad Gateway" in info["last_error"]
        assert info["next_retry_at"] == pytest.approx(vt.now)  # now: after the first wait
        vt.release()
        info = await until_status(svc, "telegram", "connected")
        assert (info["attempts"], info["next_retry_at"], info["running"]) == (0, None, True)
        telegram.push_message(555, "hello after the outage")
        await telegram.wait_for(lambda: telegram.sent_texts(555), timeout=10)
        await svc.idle()
    assert telegram.sent_texts(555) == ["echo: hello after the outage"]
    assert len(telegram.calls_of("getMe")) == 3
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "bot.supervisor"]
    assert [level for level, _ in lines] == ["WARNING", "INFO", "INFO"]
    assert "channel telegram: start failed" in lines[0][1]
    assert "recovered after 2 failed attempt(s)" in lines[1][1]
    assert not any(r.exc_info for r in caplog.records)


async def test_feishu_start_outage_recovers_without_a_restart(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    vt = VirtualTime()
    vt.hold()
    feishu.fail_http("ws_endpoint", 503, times=2)
    conf = feishu.channel_config()
    kwargs = {"feishu": {"backoff": vt.policy()}}
    async with ServiceHarness(
        tmp_path, fake_openai, {"feishu": conf}, only=["feishu"], channel_kwargs=kwargs
    ) as svc:
        info = await until_status(svc, "feishu", "retrying")
        assert (info["attempts"], info["running"], info["connected"]) == (1, True, False)
        assert "503" in info["last_error"]
        assert info["next_retry_at"] is not None
        assert feishu.ws.connects == 0
        vt.release()
        await until_status(svc, "feishu", "connected")
        feishu.wait_ack(feishu.push_event(payloads.message_event("hi", message_id="om_1")))
        await until(lambda: feishu.replies_to("om_1"))
        await svc.idle()
    assert len(feishu.recorded("ws_endpoint")) == 3
    assert feishu.ws.connects == 1
    [reply] = feishu.replies_to("om_1", "interactive")
    card = feishu.card_of(reply)
    assert card is not None
    assert "echo: hi" in json.dumps(card.elements)


async def test_restart_while_failing_keeps_retrying_and_stop_ends_it(
    tmp_path: Path, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> None:
    vt = VirtualTime()
    vt.hold()
    telegram.fail_next("getMe", 502, "Bad Gateway", times=1000)
    svc = telegram_service(tmp_path, fake_openai, telegram, backoff=vt.policy())
    await svc.start()
    try:
        await until(lambda: vt.waiting == 1)
        async with (
            aiohttp.ClientSession() as http,
            http.post(svc.gateway_url + "/api/channels/telegram/restart") as r,
        ):
            body = await r.json()
        assert body["success"] is False
        assert "retrying" in body["message"]
        assert body["channel"]["status"] == "retrying"
        await until(lambda: vt.waiting == 1)  # the old retry task is gone, the new one waits
    finally:
        await svc.stop()
    assert vt.waiting == 0
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("start-")]


async def test_slack_start_outage_is_retried_and_recovered(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    """Slack answers 503 to the Socket Mode URL request at start: the service starts anyway,
    shows the channel retrying (the SDK alone would retry unseen, a traceback every 10 s),
    connects on a later attempt and answers."""
    caplog.set_level(logging.INFO)
    vt = VirtualTime()
    vt.hold()
    fake_slack.fail("apps.connections.open", "service_unavailable", times=2, status=503)
    conf = slack_cfg(fake_slack)
    async with ServiceHarness(
        tmp_path, fake_openai, {"slack": conf}, only=["slack"], backoff=vt.policy()
    ) as svc:
        info = await until_status(svc, "slack", "retrying")
        assert (info["attempts"], info["connected"]) == (1, False)
        assert "apps.connections.open" in info["last_error"]
        vt.release()
        await until_status(svc, "slack", "connected")
        fake_slack.push_event(events.dm("hello after the outage"), event_id="EvOut")
        await fake_slack.until(lambda f: f.calls_of("chat.stopStream"), timeout=10)
        await svc.idle()
    shown = [visible(m) for m in fake_slack.messages.values() if m.get("bot_id")]
    assert shown == ["echo: hello after the outage"]
    assert len(fake_slack.calls_of("apps.connections.open")) == 3
    assert not any(r.exc_info for r in caplog.records)  # plain lines, no traceback
