"""Scheduled runs on Feishu and DingTalk: the real SDKs against their fake servers, the
scheduler on a virtual clock. A run is a new message in the chat, not a reply."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until
from tests.fakes.clock import VirtualClock
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import ServiceHarness


async def test_feishu_run_is_a_new_card_in_the_chat(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    clock = VirtualClock(time.time(), sleep_moves=False)
    conf = feishu.channel_config()
    async with ServiceHarness(
        tmp_path, fake_openai, {"feishu": conf}, only=["feishu"], schedule_clock=clock
    ) as svc:
        feishu.wait_ack(
            feishu.push_event(
                payloads.message_event("/schedule in 1h summarise the tracker", message_id="om_s")
            )
        )
        await until(lambda: feishu.replies_to("om_s"))
        await svc.idle()
        clock.advance(3600)
        await svc.fire_schedules()
        await svc.fire_schedules()
    created = [
        v for v in feishu.messages.values() if v["chat_id"] == "oc_dm" and not v.get("reply_to")
    ]
    assert len(created) == 1
    assert created[0]["msg_type"] == "interactive"
    [mid] = [m for m, v in feishu.messages.items() if v is created[0]]
    card = feishu.card_of(mid)
    assert card is not None
    assert card.elements["answer"].endswith("summarise the tracker")
    assert len(fake_openai.requests) == 1
    assert feishu.violations == []


def _robot_texts(fake: FakeDingTalk) -> list[str]:
    out = []
    for body in fake.robot_messages():
        param: dict[str, Any] = json.loads(body.get("msgParam") or "{}")
        out.append(str(param.get("text", "")))
    return out


async def test_dingtalk_run_is_sent_through_the_robot_api(
    tmp_path: Path, fake_openai: FakeOpenAI, dingtalk: FakeDingTalk
) -> None:
    clock = VirtualClock(time.time(), sleep_moves=False)
    values = dingtalk.channel_config("ding-e2e")
    async with ServiceHarness(
        tmp_path, fake_openai, {"dingtalk": values}, schedule_clock=clock
    ) as svc:
        frame = dingtalk.push_message(
            dingtalk.chatbot_data("/schedule in 1h summarise the tracker", webhook_ttl=0)
        )
        await dingtalk.until(lambda: dingtalk.ack_for(frame))
        await dingtalk.until(
            lambda: dingtalk.robot_messages() or dingtalk.webhook_messages(), timeout=10
        )
        await svc.idle()
        clock.advance(3600)
        await svc.fire_schedules()
        await svc.fire_schedules()
    texts = _robot_texts(dingtalk)
    assert texts[0].startswith("Scheduled #1")
    assert len(texts) == 2
    assert texts[1].endswith("summarise the tracker")
    assert len(fake_openai.requests) == 1
