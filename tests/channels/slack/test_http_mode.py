"""HTTP Events API mode: signature checks, url_verification, ack before work."""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

from tests.channels.slack import events
from tests.fakes.slack_server import command_body, signed_post


async def test_signed_event_acked_and_published(make_channel, fake_slack):
    _, ctx = await make_channel(mode="http", app_token=None)
    body = json.dumps(fake_slack.event_body(events.dm("over http"), event_id="EvH")).encode()
    status, _ = await signed_post(ctx.url + "/slack/events", body)
    assert status == 200
    [msg] = await ctx.wait_published()
    assert msg.text == "over http"
    assert msg.event_id == "EvH"
    assert "apps.connections.open" not in fake_slack.methods()


async def test_retry_header_redelivery_published_once(make_channel, fake_slack):
    _, ctx = await make_channel(mode="http", app_token=None)
    body = json.dumps(fake_slack.event_body(events.dm("again"), event_id="EvR")).encode()
    assert (await signed_post(ctx.url + "/slack/events", body))[0] == 200
    assert (await signed_post(ctx.url + "/slack/events", body, retry_num=1))[0] == 200
    await ctx.wait_published()
    assert [m.event_id for m in ctx.published] == ["EvR"]


async def test_bad_signature_401(make_channel, fake_slack):
    _, ctx = await make_channel(mode="http", app_token=None)
    body = json.dumps(fake_slack.event_body(events.dm("forged"))).encode()
    status, _ = await signed_post(ctx.url + "/slack/events", body, secret="wrong")
    assert status == 401
    assert ctx.published == []


async def test_stale_timestamp_401(make_channel, fake_slack):
    _, ctx = await make_channel(mode="http", app_token=None)
    body = json.dumps(fake_slack.event_body(events.dm("old"))).encode()
    status, _ = await signed_post(
        ctx.url + "/slack/events", body, timestamp=int(time.time()) - 6 * 60
    )
    assert status == 401
    assert ctx.published == []


async def test_url_verification(make_channel):
    _, ctx = await make_channel(mode="http", app_token=None)
    body = json.dumps({"type": "url_verification", "challenge": "abc123", "token": "x"}).encode()
    status, text = await signed_post(ctx.url + "/slack/events", body)
    assert status == 200
    assert "abc123" in text


async def test_slash_command_over_http(make_channel):
    _, ctx = await make_channel(mode="http", app_token=None)
    body = urlencode(command_body("new", channel="D0001", user="U0001")).encode()
    status, _ = await signed_post(
        ctx.url + "/slack/events", body, content_type="application/x-www-form-urlencoded"
    )
    assert status == 200
    [msg] = await ctx.wait_published()
    assert msg.text == "/new"


async def test_malformed_body_does_not_crash(make_channel, fake_slack):
    _, ctx = await make_channel(mode="http", app_token=None)
    body = json.dumps(fake_slack.event_body({"type": "message", "text": "no channel"})).encode()
    status, _ = await signed_post(ctx.url + "/slack/events", body)
    assert status == 200
    good = json.dumps(fake_slack.event_body(events.dm("fine"), event_id="EvOK")).encode()
    await signed_post(ctx.url + "/slack/events", good)
    [msg] = await ctx.wait_published()
    assert msg.event_id == "EvOK"
