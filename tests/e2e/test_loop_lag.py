"""DESIGN rule 8: the SDKs that block (lark-oapi, dingtalk-stream) never block the service loop.

Each test streams a whole reply through the real SDK while the interpreter's audit events record
which thread every blocking HTTP call (requests → http.client) and name lookup runs on: none may
run on the loop's thread, and the SDK's calls must have been seen on its worker threads. No
timing is measured, so a busy machine cannot fail it.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
import requests

from tests.channels.dingtalk.conftest import fake_dingtalk  # noqa: F401  (fixture)
from tests.channels.dingtalk.test_e2e import ANSWER, _ask, _service
from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until
from tests.channels.feishu.test_e2e import feishu  # noqa: F401  (fixture)
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.harness import BlockingIoWatch, ServiceHarness


async def test_feishu_reply_never_stalls_the_loop(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    feishu: FakeFeishu,  # noqa: F811
) -> None:
    fake_openai.script(Reply(text="lag check " * 30, tokens_per_second=150))
    conf = feishu.channel_config()
    svc = ServiceHarness(tmp_path, fake_openai, {"feishu": conf}, only=["feishu"])
    async with BlockingIoWatch() as watch, svc:
        feishu.push_event(payloads.message_event("hi", message_id="om_lag"))
        await until(lambda: feishu.replies_to("om_lag"))
        await svc.idle()
    assert "http.client.send" in watch.elsewhere  # the SDK's calls were seen
    assert watch.on_loop == []


async def test_dingtalk_card_reply_never_stalls_the_loop(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    fake_dingtalk: FakeDingTalk,  # noqa: F811
) -> None:
    fake_openai.script(Reply(text=ANSWER, tokens_per_second=60))
    service = _service(tmp_path, fake_openai, fake_dingtalk, card_template_id="tpl")
    async with BlockingIoWatch() as watch, service as svc:
        await _ask(
            svc,
            fake_dingtalk,
            lambda: fake_dingtalk.requests("PUT", "/v1.0/card/instances"),
            text="stream please",
        )
    assert "socket.connect" in watch.elsewhere  # the SDK thread's stream was seen
    assert watch.on_loop == []


async def test_the_watch_sees_a_blocking_call_on_the_loop() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with BlockingIoWatch() as watch:
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{port}/", timeout=5)  # noqa: ASYNC210  (the point)
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", port)  # non-blocking: fine
    assert "socket.connect" in watch.on_loop
    assert watch.on_loop.count("socket.connect") == 1
