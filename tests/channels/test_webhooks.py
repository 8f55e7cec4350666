"""Webhook modes cannot run unauthenticated: every malformed, unsigned or forged request on any
platform gets 401/403 with a fixed body and one WARNING line, never a 500 or a traceback.

The whole service runs with Telegram (webhook mode, no secret configured), Slack (HTTP mode) and
Feishu (webhook mode) against their fake platforms; the requests go to the service's own server.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.harness import ServiceHarness

ROUTES = {"telegram": "/tg/hook", "slack": "/slack/events", "feishu": "/feishu/events"}
BAD_REQUESTS: list[tuple[str, dict[str, str], bytes]] = [
    ("no headers, empty body", {}, b""),
    ("not json", {"Content-Type": "application/json"}, b"{not json"),
    (
        "a plausible event, unsigned",
        {"Content-Type": "application/json"},
        b'{"update_id": 1, "message": {"text": "hi"}, "header": {"event_type": "x"}}',
    ),
    (
        "forged signatures",
        {
            "X-Telegram-Bot-Api-Secret-Token": "guess",
            "X-Slack-Signature": "v0=00",
            "X-Slack-Request-Timestamp": "1",
            "X-Lark-Signature": "00",
            "X-Lark-Request-Timestamp": "1",
            "X-Lark-Request-Nonce": "n",
        },
        b'{"encrypt": "AAAA"}',
    ),
]


@pytest.fixture
def fakes() -> Iterator[tuple[FakeTelegram, FakeSlack, FakeFeishu]]:
    tg, slack, feishu = FakeTelegram().start(), FakeSlack().start(), FakeFeishu().start()
    yield tg, slack, feishu
    for fake in (tg, slack, feishu):
        fake.stop()


def _channels(tg: FakeTelegram, slack: FakeSlack, feishu: FakeFeishu) -> dict[str, Any]:
    return {
        "telegram": {
            "enabled": True,
            "bot_token": TOKEN,
            "api_base": tg.api_base,
            "mode": "webhook",
            "webhook_url": "https://bot.example/tg/hook",
        },
        "slack": {
            "enabled": True,
            "bot_token": BOT_TOKEN,
            "signing_secret": SIGNING_SECRET,
            "mode": "http",
            "api_base": slack.api_base,
        },
        "feishu": {
            "enabled": True,
            "app_id": "cli_webhooks",
            "app_secret": "sec",
            "domain": feishu.base,
            "mode": "webhook",
            "verification_token": "vtok",
            "encrypt_key": "ekey",
        },
    }


async def test_bad_webhook_requests_are_refused_plainly(
    tmp_path: Path, fake_openai: FakeOpenAI, fakes: Any, caplog: pytest.LogCaptureFixture
) -> None:
    tg, slack, feishu = fakes
    async with ServiceHarness(tmp_path, fake_openai, _channels(tg, slack, feishu)) as svc:
        (set_hook,) = tg.calls_of("setWebhook")
        generated = set_hook.body.get("secret_token")
        assert generated
        assert len(generated) >= 32  # no secret configured: one was generated and registered
        base = svc.gateway_url
        caplog.clear()
        answers: dict[tuple[str, str], tuple[int, str]] = {}
        async with aiohttp.ClientSession() as http:
            for platform, path in ROUTES.items():
                for what, headers, body in BAD_REQUESTS:
                    with caplog.at_level(logging.INFO):
                        before = len(caplog.records)
                        async with http.post(base + path, data=body, headers=headers) as resp:
                            answers[(platform, what)] = (resp.status, await resp.text())
                        records = caplog.records[before:]
                    warnings = [r for r in records if r.levelno >= logging.WARNING]
                    assert len(warnings) == 1, (platform, what, [r.getMessage() for r in records])
                    assert warnings[0].levelno == logging.WARNING
                    assert not any(r.exc_info for r in records), (platform, what)
        assert svc.app is not None
        assert svc.app.bus.counters.published == 0
    for (platform, what), (status, text) in answers.items():
        assert status in (401, 403), (platform, what, status, text)
    bodies = {p: {answers[(p, w)][1] for w, _, _ in BAD_REQUESTS} for p in ROUTES}
    assert all(len(b) == 1 for b in bodies.values()), bodies  # one fixed body per platform
    assert "Error" not in str(bodies)
    assert "Traceback" not in str(bodies)
