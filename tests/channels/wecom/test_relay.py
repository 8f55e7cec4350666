"""A WeCom channel without the bot's connection sends through the one holding it (the send
relay on a real Redis, both channels on the fake WeCom): the stream, a refused final pushed
instead, a file's upload commands, and WeCom's errors raised again on the sender as on the
holder (a frequency limit as RateLimited, a refusal as WeComRefused)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.cluster.send_relay import RedisRelay
from channels.base import RateLimited, ReplyDoc
from channels.wecom.channel import WeComChannel
from channels.wecom.connection import WeComRefused
from tests.channels.wecom.conftest import Make
from tests.channels.wecom.test_channel import stream_hello
from tests.fakes.wecom_payloads import USER, text_body
from tests.fakes.wecom_server import FakeWeCom
from tests.polling import until

Pair = tuple[WeComChannel, WeComChannel, Any]


@pytest.fixture
async def pair(make_channel: Make, redis_bus: dict[str, Any]) -> AsyncIterator[Pair]:
    """The holder (connected, serving) and a worker without the connection."""
    client = aioredis.Redis.from_url(redis_bus["redis"]["url"], decode_responses=True)
    base = f"{redis_bus['redis']['key_prefix']}:relay:wecom:bot"

    def relay(worker: str) -> RedisRelay:
        return RedisRelay(lambda: client, base, lambda: worker, lambda: True, wait=5, repost=1)

    holder, ctx = await make_channel(start=False)
    holder.relay = relay("w1")
    await holder.start()
    other, _ = await make_channel(start=False)
    other.relay = relay("w2")
    yield holder, other, ctx
    await holder.stop()
    await client.aclose()


async def test_a_reply_and_a_file_written_elsewhere_go_through_the_holder(
    fake_wecom: FakeWeCom, pair: Pair, tmp_path: Path
) -> None:
    _, other, ctx = pair
    fake_wecom.push_message(text_body("hello"))
    await until(lambda: ctx.published)
    msg = ctx.published[-1]
    assert other.connection is None
    handle = await stream_hello(other, msg, fake_wecom)
    report = tmp_path / "report.pdf"
    report.write_bytes(bytes(range(256)) * 2600)  # two chunks
    await other.send_file(handle, report)
    assert fake_wecom.uploads[0]["data"] == report.read_bytes()
    assert fake_wecom.violations == []


async def test_wecom_errors_are_raised_on_the_sender_as_on_the_holder(
    fake_wecom: FakeWeCom, pair: Pair
) -> None:
    _, other, ctx = pair
    fake_wecom.push_message(text_body("hi"))
    await until(lambda: ctx.published)
    msg = ctx.published[-1]
    handle = await other.open_reply(msg, ReplyDoc())
    fake_wecom.fail("aibot_respond_msg", 40058, lambda body: body["stream"]["finish"])
    await other.finish_reply(handle, ReplyDoc(text="The answer", status="done"))
    assert fake_wecom.chat_messages(USER)[-1]["content"] == "The answer"  # pushed instead
    fake_wecom.fail("aibot_send_msg", 93000)
    with pytest.raises(WeComRefused) as refused:
        await other.send_text(msg.chat, "refused")
    assert refused.value.code == 93000
    fake_wecom.fail("aibot_send_msg", 45009)
    with pytest.raises(RateLimited) as limited:
        await other.send_text(msg.chat, "too fast")
    assert limited.value.scope == "chat"
