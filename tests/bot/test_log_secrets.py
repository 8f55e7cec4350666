"""Secrets never reach a log: `antler serve --log-level debug` runs Telegram, Feishu, Slack and
DingTalk against their fakes, answers a message, serves an authorised admin call, and the whole
output is grepped for every configured secret."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.logs import MASK, RedactSecrets, secrets_of
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.discord_server import TOKEN as DISCORD_TOKEN
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.fakes.wecom_payloads import BOT_ID as WECOM_BOT
from tests.fakes.wecom_payloads import SECRET as WECOM_SECRET
from tests.fakes.wecom_payloads import USER as WECOM_USER
from tests.fakes.wecom_payloads import text_body as wecom_text
from tests.fakes.wecom_server import FakeWeCom

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {
    "model": "sk-model-key-0123456789",
    "admin": "admin-token-abcdef123456",
    "feishu": "feishu-app-secret-987654",
    "feishu_token": "feishu-verify-token-5555",
    "telegram": TOKEN,
    "slack_bot": BOT_TOKEN,
    "slack_app": APP_TOKEN,
    "dingtalk": "dingtalk-client-secret-4242",
    "discord": DISCORD_TOKEN,
    "wecom": WECOM_SECRET,
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


Fakes = tuple[FakeTelegram, FakeFeishu, FakeSlack, FakeDingTalk, FakeDiscord, FakeWeCom]


@pytest.fixture
def fakes() -> Iterator[Fakes]:
    started = (
        FakeTelegram().start(),
        FakeFeishu().start(),
        FakeSlack().start(),
        FakeDingTalk().start(),
        FakeDiscord().start(),
        FakeWeCom().start(),
    )
    yield started
    for fake in started:
        fake.stop()


def _config(tmp_path: Path, fake_openai: FakeOpenAI, fakes: Fakes, port: int) -> dict[str, Any]:
    """Every channel enabled against its fake, every secret of SECRETS in its place."""
    tg, feishu, slack, dingtalk, discord, wecom = fakes
    return {
        "storage": {"data_dir": str(tmp_path / "data")},
        "gateway": {"host": "127.0.0.1", "port": port, "auth_token": SECRETS["admin"]},
        "models": [
            {
                "name": "m",
                "model": "fake",
                "api_key": SECRETS["model"],
                "base_url": fake_openai.base_url,
                "max_retries": 0,
            }
        ],
        "agent": {"title": {"enabled": False}},
        "channels": {
            "telegram": tg.channel_config(),
            "feishu": {
                "enabled": True,
                "app_id": "cli_logs",
                "app_secret": SECRETS["feishu"],
                "verification_token": SECRETS["feishu_token"],
                "domain": feishu.base,
            },
            "slack": {
                "enabled": True,
                "bot_token": BOT_TOKEN,
                "app_token": APP_TOKEN,
                "api_base": slack.api_base,
            },
            "dingtalk": {
                "enabled": True,
                "client_id": "ding-client",
                "client_secret": SECRETS["dingtalk"],
                "robot_code": "robot-code",
                "api_base": dingtalk.base,
            },
            "discord": {
                "enabled": True,
                "bot_token": DISCORD_TOKEN,
                "api_base": discord.api_base,
            },
            "wecom": {
                "enabled": True,
                "bot_id": WECOM_BOT,
                "secret": WECOM_SECRET,
                "ws_url": wecom.ws_url,
                "ca_file": wecom.ca_file,
            },
        },
    }


def test_debug_log_of_a_running_service_holds_no_secret(
    tmp_path: Path, fake_openai: FakeOpenAI, fakes: Fakes
) -> None:
    tg, discord, wecom = fakes[0], fakes[4], fakes[5]
    port = free_port()
    config = _config(tmp_path, fake_openai, fakes, port)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(config))
    log_path = tmp_path / "out.log"
    with log_path.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gateway",
                "serve",
                "--config",
                str(cfg),
                "--log-level",
                "debug",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=dict(os.environ),
        )
        try:
            _wait(lambda: tg.calls_of("getUpdates"), proc)
            tg.push_message(555, "hello")
            _wait(lambda: tg.sent_texts(555), proc)
            _wait(lambda: discord.open_sockets, proc)
            discord.push_message(discord.message_payload(5555, "hello"))
            _wait(lambda: discord.bot_messages(5555), proc)
            _wait(lambda: wecom.connected, proc)
            wecom.push_message(wecom_text("hello"))
            _wait(lambda: wecom.chat_messages(WECOM_USER), proc)
            _admin_call(port)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    log = log_path.read_text()
    assert " DEBUG " in log
    assert MASK in log  # the SDKs did try to log a secret: the filter masked it
    for name, secret in SECRETS.items():
        assert secret not in log, f"the {name} secret is in the log"


def _wait(cond: object, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    """Until `cond()` (a bound on a hang, not a speed check: four SDKs load at debug level,
    30 s ran out once on a machine loaded with six test workers)."""
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert proc.poll() is None, "the service exited"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _admin_call(port: int) -> None:
    import urllib.request

    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/models",
        headers={"Authorization": f"Bearer {SECRETS['admin']}"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        body = resp.read().decode()
    assert SECRETS["model"] not in body  # nor in an API response


def test_filter_masks_arguments_tracebacks_and_url_encoded_forms() -> None:
    redact = RedactSecrets(["tok:en/1234", "ab"])  # too short to mask: left alone
    record = logging.LogRecord(
        "sdk",
        logging.DEBUG,
        __file__,
        1,
        "GET %s and %s",
        ("https://x/bottok:en/1234/getMe", "tok%3Aen%2F1234"),
        None,
    )
    try:
        raise RuntimeError("failed with tok:en/1234")
    except RuntimeError:
        record.exc_info = sys.exc_info()
    assert redact.filter(record)
    text = logging.Formatter().format(record)
    assert "tok:en/1234" not in text
    assert "tok%3Aen%2F1234" not in text
    assert text.count(MASK) == 4  # message, argument, source line and exception text


def test_secrets_are_collected_from_the_whole_tree() -> None:
    from bot.config.schema import settings_from_dict

    settings = settings_from_dict(
        {
            "models": [{"name": "m", "model": "x", "api_key": "sk-1234"}],
            "gateway": {"auth_token": "gw-1234"},
            "channels": {
                "slack": {
                    "bot_token": "xoxb-1",
                    "signing_secret": "sign-1",
                    "bots": [{"name": "desk", "bot_token": "xoxb-2", "signing_secret": "sign-2"}],
                }
            },
        }
    )
    found = set(secrets_of(settings))
    assert {"sk-1234", "gw-1234", "xoxb-1", "sign-1", "xoxb-2", "sign-2"} <= found
