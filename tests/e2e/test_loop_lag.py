"""DESIGN rule 8: the SDKs that block (lark-oapi, dingtalk-stream) never block the service loop.

Each test streams a whole reply through the real SDK while sampling the loop every 20 ms. A
blocking HTTP call on the loop shows as a stall; the bound is generous so that only blocking
(not a busy CI machine) fails it.
"""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.channels.dingtalk.conftest import fake_dingtalk  # noqa: F401  (fixture)
from tests.channels.dingtalk.test_e2e import ANSWER, _ask, _service
from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until
from tests.channels.feishu.test_e2e import feishu  # noqa: F401  (fixture)
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.harness import LoopWatch, ServiceHarness

MAX_STALL = 0.5


@pytest.fixture(autouse=True)
def _heap_of_earlier_tests_frozen() -> Iterator[None]:
    """`antler serve` freezes its start-up objects out of the collector (bot/runtime.py); here
    the heap also holds every earlier test's leftovers, whose full collection alone can take
    longer than the bound. Freeze them the same way, so only the service's own work is timed."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


async def test_feishu_reply_never_stalls_the_loop(
        tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu) -> None:  # noqa: F811
    fake_openai.script(Reply(text="lag check " * 30, tokens_per_second=150))
    conf = {"enabled": True, "app_id": f"cli_{uuid.uuid4().hex[:12]}", "app_secret": "sec",
            "domain": feishu.base, "stream_interval": 0.1}
    svc = ServiceHarness(tmp_path, fake_openai, {"feishu": conf}, only=["feishu"])
    async with svc, LoopWatch() as watch:
        feishu.push_event(payloads.message_event("hi", message_id="om_lag"))
        await until(lambda: feishu.replies_to("om_lag"))
        await svc.idle()
    assert watch.samples > 5
    assert watch.max_lag < MAX_STALL, f"loop stalled for {watch.max_lag:.2f}s"


async def test_dingtalk_card_reply_never_stalls_the_loop(
        tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk) -> None:  # noqa: F811
    fake_openai.script(Reply(text=ANSWER, tokens_per_second=60))
    service = _service(tmp_path, fake_openai, fake_dingtalk, card_template_id="tpl")
    async with service as svc, LoopWatch() as watch:
        await _ask(svc, fake_dingtalk,
                   lambda: fake_dingtalk.requests("PUT", "/v1.0/card/instances"),
                   text="stream please")
    assert watch.samples > 5
    assert watch.max_lag < MAX_STALL, f"loop stalled for {watch.max_lag:.2f}s"
