"""The long connection against the fake WeCom: the SDK's silent stops are restarted, an
authentication failure is final, a start outage is retried, redeliveries are published once,
and a worker whose hold lapsed publishes nothing."""

from __future__ import annotations

import aibot
import pytest

from channels.backoff import RetryState
from channels.base import ChannelError, ChatRef
from channels.wecom.connection import TAKEN_OVER, SdkLog
from tests.channels.fenced import lapsed
from tests.channels.wecom.conftest import Make
from tests.fakes.wecom_payloads import BOT_ID, SECRET, text_body
from tests.fakes.wecom_server import FakeWeCom
from tests.polling import until

_NO = RetryState(0, "", 0.0, 0.0)


async def reaches(fake: FakeWeCom, ctx: object, text: str) -> None:
    """A message pushed now is published (the connection works)."""
    fake.push_message(text_body(text))
    await until(lambda: any(m.text == text for m in ctx.published))  # type: ignore[attr-defined]


@pytest.mark.parametrize("code", [1000, 1001, 1011])
async def test_a_closed_socket_is_restarted(
    fake_wecom: FakeWeCom, make_channel: Make, code: int
) -> None:
    channel, ctx = await make_channel()
    await reaches(fake_wecom, ctx, "before")
    fake_wecom.disconnect(code)
    await until(lambda: fake_wecom.subscribes == 2 and channel.connection.connected)
    await reaches(fake_wecom, ctx, "after")
    assert channel.connection.restarts == 1
    assert ctx.reports[-1]["connected"] is True


async def test_missed_pongs_restart_the_connection(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, ctx = await make_channel()
    fake_wecom.drop_pongs = True  # the SDK closes the socket itself after two, and stops
    await until(lambda: fake_wecom.subscribes >= 2)
    fake_wecom.drop_pongs = False
    await until(lambda: channel.connection.connected)
    await reaches(fake_wecom, ctx, "still here")


async def test_refused_credentials_are_final_and_said_plainly(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    fake_wecom.auth_failure = True
    with pytest.raises(ChannelError, match="refused bot_id/secret") as raised:
        await make_channel()
    assert raised.value.retryable is False


async def test_credentials_refused_on_a_reconnect_stop_the_loop(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    _, ctx = await make_channel()
    fake_wecom.auth_failure = True
    fake_wecom.disconnect(1011)
    await until(lambda: "refused" in (ctx.reports[-1].get("error") or ""))
    assert ctx.reports[-1]["connected"] is False
    assert ctx.reports[-1]["retry"] is None
    assert fake_wecom.subscribes == 2  # tried once more, not again and again


async def test_a_start_outage_is_a_retryable_error_then_it_connects(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    fake_wecom.refuse_connections(1)
    channel, ctx = await make_channel(start=False)
    with pytest.raises(ChannelError) as raised:
        await channel.start()
    assert raised.value.retryable is True
    await channel.start()  # the service retries start
    await reaches(fake_wecom, ctx, "hello")


async def test_an_outage_during_a_reconnect_is_retried_with_backoff(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, ctx = await make_channel()
    fake_wecom.refuse_connections(3)
    fake_wecom.disconnect(1011)
    await until(lambda: fake_wecom.refused_upgrades == 3 and channel.connection.connected)
    retries = [r["retry"] for r in ctx.reports if r.get("retry")]
    assert [r.attempts for r in retries] == [1, 2, 3, 4]
    await reaches(fake_wecom, ctx, "back")


async def test_a_redelivered_message_is_published_once(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    _, ctx = await make_channel()
    body = text_body("once")
    fake_wecom.push_message(body)
    fake_wecom.push_message(dict(body))  # WeCom calls back again (same msgid)
    await until(lambda: ctx.publishes == 2)
    assert [m.text for m in ctx.published] == ["once"]


async def test_a_lapsed_holder_publishes_nothing(fake_wecom: FakeWeCom, make_channel: Make) -> None:
    channel, ctx = await make_channel()
    asked = lapsed(channel)
    fake_wecom.push_message(text_body("not mine"))
    await until(lambda: asked)  # the callback arrived and was checked
    channel.may_receive = lambda: True
    await reaches(fake_wecom, ctx, "mine")
    assert [m.text for m in ctx.published] == ["mine"]


async def test_a_standby_worker_does_not_connect_and_cannot_send(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, ctx = await make_channel(start=False)
    channel.receiving = False
    await channel.start()
    assert fake_wecom.subscribes == 0
    assert channel.exclusive_connection() == "aib-contract-bot"
    with pytest.raises(ChannelError, match="does not hold") as raised:
        await channel.send_text(ChatRef(channel="wecom", chat_id="zhangsan"), "hi")
    assert raised.value.retryable is True
    await channel.start_receiving()  # the lease is taken over
    await reaches(fake_wecom, ctx, "now mine")


async def test_a_second_connection_for_the_bot_takes_over_and_is_waited_out(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, ctx = await make_channel()
    channel.connection.takeover_wait = 0.3
    other = aibot.WSClient(
        aibot.WSClientOptions(
            bot_id=BOT_ID,
            secret=SECRET,
            ws_url=fake_wecom.ws_url,
            max_reconnect_attempts=0,
            logger=SdkLog(),
        )
    )
    other.on("error", lambda _error: None)
    await other.connect()  # another program on the same bot: WeCom ends Antler's connection
    await until(lambda: fake_wecom.subscribes == 2)
    await until(lambda: any((r.get("retry") or _NO).last_error == TAKEN_OVER for r in ctx.reports))
    retry = next(r["retry"] for r in ctx.reports if r.get("retry"))
    assert round(retry.next_retry_at - retry.failing_since, 3) >= 0.3  # no tug of war
    await until(lambda: fake_wecom.subscribes == 3 and channel.connection.connected)
    other.disconnect()
    await reaches(fake_wecom, ctx, "mine again")
