"""A restart cuts a streaming reply short; the restart answers in the very message (Slack) or card
(Feishu) the user already sees: one reply per message, never a cut-off one beside a new one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.stores.journal import State
from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until
from tests.channels.slack import events
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.harness import ServiceHarness

FULL = "The whole answer, streamed again after the restart: " + "tok " * 40
GRACE = 0.3  # shutdown waits this long for running replies, then cuts them short


def stalled_then_full(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(
        Reply(text="A first try " * 20, tokens_per_second=100, stall_after=4), Reply(text=FULL)
    )


async def journal_states(svc: ServiceHarness) -> list[State]:
    assert svc.app is not None
    return [e.state for e in await svc.app.journal.recent()]


def visible(message: dict[str, Any]) -> str:
    blocks = message.get("blocks") or []
    if blocks and blocks[0].get("type") == "markdown":
        return str(blocks[0]["text"])
    return str(message["text"])


async def test_slack_reply_continues_in_the_streamed_message(
    tmp_path: Path, fake_openai: FakeOpenAI, slack: FakeSlack
) -> None:
    stalled_then_full(fake_openai)
    cfg = {
        "enabled": True,
        "bot_token": BOT_TOKEN,
        "app_token": APP_TOKEN,
        "signing_secret": SIGNING_SECRET,
        "api_base": slack.api_base,
    }
    svc = ServiceHarness(tmp_path, fake_openai, {"slack": cfg, "shutdown_grace_seconds": GRACE})
    root = "1700000001.000100"
    async with svc:
        slack.push_event(events.dm("hello", ts=root), event_id="Ev1")
        await slack.until(lambda f: f.calls_of("chat.startStream"), timeout=10)
        await fake_openai.wait_requests(1)
        await svc.restart()
        await slack.until(
            lambda f: [
                m for m in f.thread_messages("D0001", root) if visible(m).strip() == FULL.strip()
            ],
            timeout=15,
        )
        await svc.idle()
        assert await journal_states(svc) == [State.delivered]
    bot = [m for m in slack.thread_messages("D0001", root) if m.get("bot_id")]
    assert [visible(m).strip() for m in bot] == [FULL.strip()]
    assert len(fake_openai.requests) == 2


async def test_feishu_reply_continues_in_the_same_card(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    stalled_then_full(fake_openai)
    conf = feishu.channel_config()
    svc = ServiceHarness(
        tmp_path, fake_openai, {"feishu": conf, "shutdown_grace_seconds": GRACE}, only=["feishu"]
    )
    async with svc:
        feishu.wait_ack(feishu.push_event(payloads.message_event("hi", message_id="om_1")))
        await until(lambda: feishu.replies_to("om_1"))
        await fake_openai.wait_requests(1)
        await svc.restart()
        await fake_openai.wait_requests(2, timeout=15)
        await svc.idle()
        assert await journal_states(svc) == [State.delivered]
    [card_message] = feishu.replies_to("om_1", "interactive")
    card = feishu.card_of(card_message)
    assert card is not None
    assert card.elements["answer"].strip() == FULL.strip()
    assert not card.streaming
    assert feishu.violations == []


async def test_telegram_dm_continues_in_the_shutdown_notice(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    from tests.fakes.telegram_server import TOKEN, FakeTelegram

    telegram = FakeTelegram().start()
    try:
        stalled_then_full(fake_openai)
        tg = {"enabled": True, "bot_token": TOKEN, "api_base": telegram.api_base, "poll_timeout": 1}
        svc = ServiceHarness(
            tmp_path, fake_openai, {"telegram": tg, "shutdown_grace_seconds": GRACE}
        )
        async with svc:
            telegram.push_message(555, "hello")
            await telegram.wait_for(lambda: telegram.calls_of("sendMessageDraft"), 10)
            await fake_openai.wait_requests(1)
            await svc.restart()  # the draft's reply ends as a "restarting" message
            await fake_openai.wait_requests(2, timeout=15)
            await telegram.wait_for(lambda: telegram.shown_texts(555) == [FULL.strip()], 15)
            await svc.idle()
            assert await journal_states(svc) == [State.delivered]
        assert len(telegram.calls_of("sendMessage")) == 1  # the notice, edited into the answer
    finally:
        telegram.stop()
