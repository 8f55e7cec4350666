"""The whole service on WeCom (bus, dispatcher, agent on the fake OpenAI, the SDK on the fake
WeCom): a long answer in Chinese within the bytes of a message, streamed and continued; a
command's answer pushed; `/api/channels` showing the connection go and come back; a start
outage retried by the service."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp

from bot import texts
from tests.channels.wecom.conftest import FAST, wecom_config
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.wecom_payloads import GROUP, USER, shown_text, text_body
from tests.fakes.wecom_server import FakeWeCom
from tests.harness import ServiceHarness
from tests.polling import until

LONG = "\n\n".join(f"第{i}段：" + "企业微信流式消息。" * 300 for i in range(3))  # ~24,000 bytes


def service(tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeWeCom) -> ServiceHarness:
    channels = {"wecom": wecom_config(fake, stream_interval=0.1)}
    return ServiceHarness(
        tmp_path,
        fake_openai,
        channels,
        only=["wecom"],
        backoff=FAST,
        channel_kwargs={"wecom": {"backoff": FAST}},
    )


async def channel_info(svc: ServiceHarness) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.get(svc.gateway_url + "/api/channels") as r:
        assert r.status == 200
        info: dict[str, Any] = (await r.json())["channels"]["wecom"]
        return info


async def test_a_long_answer_streams_within_a_message_and_continues(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_wecom: FakeWeCom
) -> None:
    fake_openai.script(Reply(text=LONG, tokens_per_second=1000))
    async with service(tmp_path, fake_openai, fake_wecom) as svc:
        fake_wecom.push_message(text_body("写很多"))
        await fake_openai.wait_requests(1, timeout=30)
        await svc.idle(timeout=30)
    shown = [shown_text(m) for m in fake_wecom.chat_messages(USER)]
    stream, *pushed = fake_wecom.chat_messages(USER)
    assert stream["kind"] == "stream"
    assert len([f for f in stream["frames"] if not f["finish"]]) >= 3  # it streamed
    assert pushed
    assert all(m["kind"] == "markdown" for m in pushed)
    assert "".join(str(t) for t in shown).replace("\n", "") == LONG.replace("\n", "")
    assert fake_wecom.violations == []


async def test_a_command_is_answered_by_a_push_without_the_model(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_wecom: FakeWeCom
) -> None:
    async with service(tmp_path, fake_openai, fake_wecom) as svc:
        fake_wecom.push_message(text_body("/new"))
        await until(lambda: fake_wecom.chat_messages(USER))
        await svc.idle()
    (answer,) = fake_wecom.chat_messages(USER)
    assert (answer["kind"], answer["content"]) == ("markdown", texts.NEW_STARTED)
    assert fake_openai.requests == []


async def test_api_channels_shows_the_connection_lost_and_back(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_wecom: FakeWeCom
) -> None:
    async with service(tmp_path, fake_openai, fake_wecom) as svc:
        assert (await channel_info(svc))["status"] == "connected"
        fake_wecom.refuse_connections(2)
        fake_wecom.disconnect(1000)  # the SDK would stop here for good
        await until(lambda: fake_wecom.refused_upgrades == 2 and fake_wecom.connected)
        for _ in range(200):
            info = await channel_info(svc)
            if info["status"] == "connected":
                break
            await asyncio.sleep(0.02)
        assert info["status"] == "connected"
        fake_wecom.push_message(text_body("hello again"))
        await fake_openai.wait_requests(1, timeout=30)
        await svc.idle()
    assert shown_text(fake_wecom.chat_messages(USER)[-1]) == "echo: hello again"


async def test_a_start_outage_is_retried_until_it_connects(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_wecom: FakeWeCom
) -> None:
    fake_wecom.refuse_connections(2)
    async with service(tmp_path, fake_openai, fake_wecom) as svc:
        await until(lambda: fake_wecom.connected, timeout=30)
        fake_wecom.push_message(text_body("are you there"))
        await fake_openai.wait_requests(1, timeout=30)
        await svc.idle()
    assert fake_wecom.refused_upgrades == 2
    assert shown_text(fake_wecom.chat_messages(USER)[-1]) == "echo: are you there"


async def test_a_restart_ends_the_stream_with_its_notice_and_answers_below_it(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_wecom: FakeWeCom
) -> None:
    full = "The whole answer, streamed again after the restart: " + "tok " * 40
    fake_openai.script(
        Reply(text="A first try " * 20, tokens_per_second=100, stall_after=4), Reply(text=full)
    )
    svc = service(tmp_path, fake_openai, fake_wecom)
    svc.raw["channels"]["shutdown_grace_seconds"] = 0.3  # the restart cuts the reply short
    async with svc:
        fake_wecom.push_message(text_body("hello"))
        await until(lambda: fake_wecom.chat_messages(USER))
        await fake_openai.wait_requests(1)
        await svc.restart()
        await fake_openai.wait_requests(2, timeout=15)
        await svc.idle()
    stream, answer = fake_wecom.chat_messages(USER)
    # a finished stream takes no more frames: the notice stays, the answer is pushed below it
    assert stream["frames"][-1]["finish"] is True
    assert texts.RESTARTING in stream["frames"][-1]["content"]
    assert (answer["kind"], answer["content"]) == ("markdown", full.strip())
    assert fake_wecom.subscribes == 2
    assert fake_wecom.violations == []


async def test_the_allowlists_refuse_in_one_line_and_admit_the_listed(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_wecom: FakeWeCom
) -> None:
    channels = {"wecom": wecom_config(fake_wecom, allowed_users=["lisi"], allowed_chats=[GROUP])}
    async with ServiceHarness(tmp_path, fake_openai, channels, only=["wecom"]) as svc:
        fake_wecom.push_message(text_body("let me in"))  # zhangsan's DM: not on either list
        await until(lambda: fake_wecom.chat_messages(USER))
        fake_wecom.push_message(text_body("hi", user="lisi", chatid=GROUP))
        await fake_openai.wait_requests(1, timeout=30)
        await svc.idle()
    (refusal,) = fake_wecom.chat_messages(USER)
    assert refusal["content"] == texts.NOT_ALLOWED
    assert shown_text(fake_wecom.chat_messages(GROUP)[-1]) == "echo: hi"
    assert len(fake_openai.requests) == 1
