"""The long connection: acks, ignored events, chunked frames, card actions, reconnects, stop."""

from __future__ import annotations

import asyncio
import json
import logging
import threading

from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until
from tests.fakes.virtual_time import VirtualTime


def _ws_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "feishu-ws"]


async def test_event_acked_and_published(fake, ctx, make_channel):
    await make_channel()
    frame = fake.push_event(payloads.message_event("hello feishu", message_id="om_in1"))
    assert fake.wait_ack(frame).code == 200
    [msg] = await ctx.wait_published()
    assert (msg.text, msg.event_id, msg.chat.chat_id) == ("hello feishu", "om_in1", "oc_dm")
    assert fake.ws.pings >= 1  # the client pings right after connecting


async def test_ignored_events_are_acked_quietly(fake, ctx, make_channel):
    await make_channel()
    frame = fake.push_event(payloads.other_event("im.message.message_read_v1"))
    assert fake.wait_ack(frame).code == 200
    frame = fake.push_event(payloads.message_event("after"))
    fake.wait_ack(frame)
    [msg] = await ctx.wait_published()
    assert msg.text == "after"


async def test_chunked_event_is_reassembled(fake, ctx, make_channel):
    await make_channel()
    fake.push_event(payloads.message_event("x" * 3000), chunks=3)
    [msg] = await ctx.wait_published()
    assert msg.text == "x" * 3000


async def test_card_action_over_ws_acked_with_toast_and_published(fake, ctx, make_channel):
    await make_channel()
    frame = fake.push_event(
        payloads.card_action(
            {"cmd": "/models smart", "chat_type": "dm", "topic": ""}, event_id="cb1"
        )
    )
    ack = fake.wait_ack(frame)
    assert ack.code == 200
    assert ack.data["toast"]["content"]
    [msg] = await ctx.wait_published()
    assert (msg.text, msg.is_button, msg.event_id) == ("/models smart", True, "cb1")


async def test_reconnects_after_server_drop(fake, ctx, make_channel):
    channel = await make_channel()
    fake.drop_connections()
    await until(lambda: fake.ws.connects == 2)
    await until(lambda: fake.open_websockets == 1)
    fake.push_event(payloads.message_event("back again"))
    [msg] = await ctx.wait_published()
    assert msg.text == "back again"
    assert channel.connection.reconnects == 1
    lost = {"connected": False, "error": "feishu long connection lost; reconnecting", "retry": None}
    assert lost in ctx.reports


async def test_reconnects_when_connection_goes_silent(fake, ctx, make_channel):
    fake.ws.ping_interval = 0.1  # pongs every 0.1 s keep it alive ...
    channel = await make_channel(silence_timeout=0.5)
    await asyncio.sleep(0.7)
    assert fake.ws.connects == 1
    fake.ws.silent = True  # ... until the server stops answering
    await until(lambda: fake.ws.connects >= 2)
    fake.ws.silent = False
    await until(lambda: channel.connection.reconnects >= 1)  # counted once the SDK is back


async def test_stop_leaves_no_thread_or_connection(fake, ctx, make_channel):
    channel = await make_channel()
    assert len(_ws_threads()) == 1
    await until(lambda: fake.open_websockets == 1)  # the fake's own thread registers it
    await channel.stop()
    await until(lambda: fake.open_websockets == 0)
    assert _ws_threads() == []
    await channel.start()  # and it can start again
    await until(lambda: fake.open_websockets == 1)
    await channel.stop()
    await until(lambda: fake.open_websockets == 0)
    assert _ws_threads() == []


async def test_endpoint_called_with_credentials(fake, make_channel):
    channel = await make_channel()
    [call] = fake.recorded("ws_endpoint")
    assert call.body == {"AppID": channel.config.app_id, "AppSecret": "sec"}
    assert json.dumps(call.body)


async def test_start_outage_is_retried_until_the_endpoint_recovers(fake, ctx, make_channel, caplog):
    vt = VirtualTime()
    fake.fail_http("ws_endpoint", 503, times=3)
    caplog.set_level(logging.INFO, logger="channels.feishu")
    channel = await make_channel(backoff=vt.policy())  # does not raise: the start goes on
    await until(lambda: fake.ws.connects == 1)
    fake.push_event(payloads.message_event("after the outage"))
    [msg] = await ctx.wait_published()
    assert msg.text == "after the outage"
    assert len(fake.recorded("ws_endpoint")) == 4
    assert [r.attempts for r in ctx.retries] == [1, 2, 3]
    assert "503" in ctx.retries[0].last_error
    assert len(vt.slept) == 3  # each wait taken on virtual time
    assert ctx.reports[-1] == {"connected": True, "error": None, "retry": None}
    assert channel.connection.reconnects == 0
    ours = [r for r in caplog.records if r.name == "channels.feishu"]
    assert [r.levelname for r in ours] == ["WARNING", "INFO"]  # one failure line, one recovery
    assert not any(r.exc_info for r in ours)


async def test_reconnect_outage_is_retried_with_backoff(fake, ctx, make_channel):
    vt = VirtualTime()
    channel = await make_channel(backoff=vt.policy())
    fake.fail_http("ws_endpoint", 503, times=2)
    fake.drop_connections()
    await until(lambda: fake.ws.connects == 2)
    await until(lambda: ctx.reports[-1] == {"connected": True, "error": None, "retry": None})
    assert channel.connection.reconnects == 1
    assert [r.attempts for r in ctx.retries] == [1, 2]
    assert len(vt.slept) == 2
    fake.push_event(payloads.message_event("back"))
    [msg] = await ctx.wait_published()
    assert msg.text == "back"
