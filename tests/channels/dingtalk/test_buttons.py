"""Button cards through the real dingtalk-stream SDK against the fake DingTalk: the card's shape
(a card-platform template with msgButtons), and what odd presses do (nothing to a live choice)."""

from __future__ import annotations

import logging

import pytest

from channels.base import Button, InboundMessage, ReplyDoc
from channels.dingtalk.channel import DingTalkChannel
from channels.dingtalk.config import AI_MARKDOWN_TEMPLATE
from tests.channels.dingtalk.conftest import MakeChannel, dingtalk_config
from tests.fakes.dingtalk_server import CARD_CALLBACK_TOPIC, FakeDingTalk
from tests.fakes.recording_context import RecordingContext

CHOICES = (Button(label="Fast", value="/models fast"), Button(label="Smart", value="/models smart"))


async def _card_with_buttons(
    channel: DingTalkChannel, ctx: RecordingContext, fake: FakeDingTalk
) -> tuple[str, InboundMessage]:
    """A group message answered with two buttons; returns the button card's id."""
    fake.push_message(fake.chatbot_data(text="/models", group=True, conversation_id="cid-g"))
    [msg] = await ctx.wait_published(1)
    doc = ReplyDoc(text="Pick a model", buttons=CHOICES, status="done")
    await channel.finish_reply(await channel.open_reply(msg, ReplyDoc()), doc)
    [card_id] = fake.button_cards()
    return card_id, msg


async def _acked(fake: FakeDingTalk, frame: str) -> None:
    await fake.until(lambda: fake.ack_for(frame))


def _card_puts(fake: FakeDingTalk, card_id: str) -> list[dict[str, object]]:
    return [c.body for c in fake.requests("PUT", "/v1.0/card/instances")
            if c.body["outTrackId"] == card_id]  # fmt: skip


async def test_buttons_go_on_a_card_platform_template_with_msg_buttons(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    channel, ctx = await make_channel()
    card_id, _ = await _card_with_buttons(channel, ctx, fake_dingtalk)
    [created] = fake_dingtalk.requests("POST", "/v1.0/card/instances")
    assert created.body["cardTemplateId"] == AI_MARKDOWN_TEMPLATE
    assert created.body["callbackType"] == "STREAM"
    params = fake_dingtalk.card_params(card_id)
    assert params["staticMsgContent"] == "Pick a model"
    assert params["flowStatus"] == "3"
    assert fake_dingtalk.card_buttons(card_id) == {"Fast": "antler_btn_0", "Smart": "antler_btn_1"}
    assert fake_dingtalk.cards[card_id]["delivered_to"] == "dtv1.card//IM_GROUP.cid-g"


async def test_the_fake_refuses_standard_card_on_card_instances(
    fake_dingtalk: FakeDingTalk, make_channel: MakeChannel
) -> None:
    """StandardCard belongs to the robot's interactiveCards/send; the card-instance API answers
    it with param.templateNotExist, as DingTalk does. A config naming it is refused at once."""
    channel, _ = await make_channel()
    with pytest.raises(Exception, match="templateNotExist"):
        await channel.api.call("POST", "/v1.0/card/instances", {
            "cardTemplateId": "StandardCard", "outTrackId": "x",
            "cardData": {"cardParamMap": {"sys_full_json_obj": "{}"}},
        })  # fmt: skip
    with pytest.raises(ValueError, match="card-platform template id"):
        dingtalk_config(fake_dingtalk, button_card_template_id="StandardCard")


async def test_an_unknown_action_on_a_live_card_leaves_its_choice_pending(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, caplog: pytest.LogCaptureFixture
) -> None:
    channel, ctx = await make_channel()
    card_id, _ = await _card_with_buttons(channel, ctx, fake_dingtalk)
    for actions in (["antler_btn_7"], ["someone_elses_button"], []):
        await _acked(fake_dingtalk, fake_dingtalk.push_card_callback(card_id, actions))
    await fake_dingtalk.until(
        lambda: caplog.text.count("naming no button") == 3 or _card_puts(fake_dingtalk, card_id)
    )
    assert _card_puts(fake_dingtalk, card_id) == []  # the card keeps its buttons
    assert ctx.publishes == 1  # only the /models message
    # the choice can still be made
    fake_dingtalk.push_card_press(card_id, fake_dingtalk.card_buttons(card_id)["Smart"])
    [_, press] = await ctx.wait_published(2)
    assert press.text == "/models smart"
    assert "✓ Smart" in fake_dingtalk.card_params(card_id)["staticMsgContent"]
    assert fake_dingtalk.card_buttons(card_id) == {}


async def test_a_redelivered_press_keeps_the_confirmation(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    channel, ctx = await make_channel()
    card_id, _ = await _card_with_buttons(channel, ctx, fake_dingtalk)
    frame = fake_dingtalk.push_card_press(card_id, "antler_btn_1")
    await ctx.wait_published(2)
    await fake_dingtalk.until(lambda: _card_puts(fake_dingtalk, card_id))
    shown = fake_dingtalk.card_params(card_id)
    # DingTalk lost the ack and delivers the same callback again: the same message (the
    # journal takes it once), the card untouched
    fake_dingtalk.redeliver(frame)
    await fake_dingtalk.until(
        lambda: ctx.publishes == 3 or len(_card_puts(fake_dingtalk, card_id)) > 1
    )
    # the other button's press arrives late (a second person in the group, a stale client)
    fake_dingtalk.push_card_callback(card_id, ["antler_btn_0"], user="staff-2")
    await fake_dingtalk.until(
        lambda: "already answered" in caplog.text or len(_card_puts(fake_dingtalk, card_id)) > 1
    )
    assert fake_dingtalk.card_params(card_id) == shown  # still "✓ Smart"
    assert len(_card_puts(fake_dingtalk, card_id)) == 1
    assert [m.text for m in ctx.published] == ["/models", "/models smart"]  # once


async def test_a_forged_card_id_is_one_warning_without_a_traceback(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk, caplog: pytest.LogCaptureFixture
) -> None:
    _, ctx = await make_channel()
    caplog.set_level(logging.INFO)
    frames = [
        fake_dingtalk.push_card_callback("antler-btn-0123456789abcdef", ["antler_btn_0"]),
        fake_dingtalk.push_card_callback("made-up-card", ["antler_btn_0"]),
        fake_dingtalk.push_frame(
            "CALLBACK", CARD_CALLBACK_TOPIC, {"outTrackId": "x", "content": "{not json"}
        ),
    ]
    for frame in frames:
        await _acked(fake_dingtalk, frame)
    await fake_dingtalk.until(
        lambda: (
            len([r for r in caplog.records if r.name == "channels.dingtalk.buttons"]) >= 3
            or any(r.levelno >= logging.ERROR for r in caplog.records)
        )
    )
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
    warnings = [r for r in caplog.records if r.name == "channels.dingtalk.buttons"]
    assert [r.levelno for r in warnings] == [logging.WARNING] * 3
    assert all("\n" not in r.getMessage() for r in warnings)
    assert fake_dingtalk.requests("PUT", "/v1.0/card/instances") == []
    assert ctx.published == []
    assert [a["code"] for a in fake_dingtalk.acks] == [200] * 3  # each acked at once


async def test_a_reply_that_goes_on_after_its_choice_shows_in_its_button_card(
    make_channel: MakeChannel, fake_dingtalk: FakeDingTalk
) -> None:
    """Without an AI card the button card is the reply: restored (an approval decided on any
    worker), its final shows in the card, the buttons gone, and no message is added."""
    channel, ctx = await make_channel()
    fake_dingtalk.push_message(fake_dingtalk.chatbot_data(text="deploy"))
    [msg] = await ctx.wait_published(1)
    reply = await channel.open_reply(msg, ReplyDoc())
    await channel.finish_reply(reply, ReplyDoc(text="Pick a model", buttons=CHOICES))
    [card_id] = fake_dingtalk.button_cards()
    state = channel.handle_state(reply)
    assert state == {"buttons_card": card_id}  # kept in the journal with the reply
    restored = channel.restore_handle(msg, state)
    sent = len(fake_dingtalk.calls)
    await channel.update_reply(restored, ReplyDoc(text="Pick a model\n\n✅ Approved"))
    await channel.finish_reply(restored, ReplyDoc(text="Pick a model\n\n✅ Approved\n\nDone."))
    params = fake_dingtalk.card_params(card_id)
    assert params["staticMsgContent"] == "Pick a model\n\n✅ Approved\n\nDone."
    assert fake_dingtalk.card_buttons(card_id) == {}
    added = [c for c in fake_dingtalk.calls[sent:] if c.method == "POST"]
    assert added == []
    assert channel.handle_state(restored) == {"buttons_card": card_id}
