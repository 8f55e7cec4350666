from __future__ import annotations

import threading

from channels.base import ReplyDoc
from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until


async def test_message_over_long_connection_is_acked_and_published(fake, ctx, make_channel):
    channel = await make_channel()
    frame = fake.push_event(payloads.message_event("hello feishu", message_id="om_in1"))
    ack = fake.wait_ack(frame)
    assert ack.code == 200
    [msg] = await ctx.wait_published()
    assert msg.text == "hello feishu"
    assert msg.event_id == "om_in1"
    handle = await channel.open_reply(msg, ReplyDoc(status="working"))
    await channel.update_reply(handle, ReplyDoc(text="hel", status="working"))
    await channel.finish_reply(handle, ReplyDoc(text="hello world", status="done"))
    card = fake.card_of(handle.parts[0].message_id)
    assert card.elements["answer"] == "hello world"
    assert not card.streaming
    assert fake.violations == []
    await channel.stop()
    assert fake.open_websockets == 0 or await until(lambda: fake.open_websockets == 0)
    assert not [t for t in threading.enumerate() if t.name == "feishu-ws"]
