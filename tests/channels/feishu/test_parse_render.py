"""Pure parse/render tests on recorded-shape payloads."""

from __future__ import annotations

import json

import pytest

from channels.base import Button, ChatRef, ReplyDoc, ToolStep
from channels.feishu import render
from channels.feishu.parse import BotIdentity, MalformedEvent, parse_card_action, parse_message
from channels.markdown import parser
from tests.channels.feishu import payloads

BOT = BotIdentity(open_id=payloads.BOT_OPEN_ID, name="Antler")


def test_text_dm() -> None:
    msg = parse_message(payloads.message_event("hi", message_id="om_1"), bot=BOT)
    assert msg is not None
    assert (msg.text, msg.event_id, msg.chat.chat_type, msg.chat.topic_id) == (
        "hi",
        "om_1",
        "dm",
        None,
    )
    assert msg.sender.id == "ou_alice"


def test_leading_bot_mention_stripped_and_command_normalised() -> None:
    env = payloads.message_event(
        "@_user_1 /models@Antler smart",
        chat_type="group",
        chat_id="oc_g",
        mentions=[payloads.mention()],
    )
    msg = parse_message(env, bot=BOT)
    assert msg is not None
    assert msg.text == "/models smart"
    assert msg.mentions_bot
    assert msg.chat.chat_type == "group"


def test_other_mentions_spelled_out() -> None:
    env = payloads.message_event(
        "@_user_1 ask @_user_2 please",
        chat_type="group",
        mentions=[payloads.mention(), payloads.mention("@_user_2", "ou_bob", "Bob")],
    )
    msg = parse_message(env, bot=BOT)
    assert msg is not None
    assert msg.text == "ask @Bob please"


def test_topic_scope_uses_root_then_own_id() -> None:
    top = parse_message(payloads.message_event("a", chat_type="group", message_id="om_r"), bot=BOT)
    inner = parse_message(
        payloads.message_event("b", chat_type="group", root_id="om_r", thread_id="omt_1"), bot=BOT
    )
    chat = parse_message(
        payloads.message_event("c", chat_type="group", root_id="om_r"), bot=BOT, group_scope="chat"
    )
    assert top
    assert inner
    assert chat
    assert top.chat.topic_id == inner.chat.topic_id == "om_r"
    assert chat.chat.topic_id is None


def test_post_with_image_and_code() -> None:
    post = {
        "title": "Report",
        "content": [
            [{"tag": "text", "text": "see "}, {"tag": "a", "text": "docs", "href": "https://x.y"}],
            [{"tag": "img", "image_key": "img_1"}],
            [{"tag": "code_block", "language": "PYTHON", "text": "print(1)"}],
        ],
    }
    msg = parse_message(payloads.message_event(post, msg_type="post"), bot=BOT)
    assert msg is not None
    assert msg.text.startswith("Report\nsee [docs](https://x.y)")
    assert "```python\nprint(1)\n```" in msg.text
    assert [a.ref for a in msg.attachments] == ["image:img_1"]


def test_image_and_file_messages() -> None:
    img = parse_message(payloads.message_event({"image_key": "img_9"}, msg_type="image"), bot=BOT)
    doc = parse_message(
        payloads.message_event({"file_key": "file_9", "file_name": "a.pdf"}, msg_type="file"),
        bot=BOT,
    )
    assert img
    assert doc
    assert (img.attachments[0].kind, img.attachments[0].ref) == ("image", "image:img_9")
    assert (doc.attachments[0].name, doc.attachments[0].ref) == ("a.pdf", "file:file_9")


def test_unusable_and_malformed() -> None:
    sticker = parse_message(payloads.message_event({}, msg_type="sticker"), bot=BOT)
    assert sticker is not None
    assert sticker.unsupported == "a sticker"  # answered, not dropped
    assert parse_message(payloads.message_event({"text": ""}), bot=BOT) is None
    bad = payloads.message_event("x")
    bad["event"]["message"]["content"] = "{not json"
    with pytest.raises(MalformedEvent):
        parse_message(bad, bot=BOT)
    with pytest.raises(MalformedEvent):
        parse_message({"schema": "2.0", "event": {}}, bot=BOT)


def test_card_action() -> None:
    env = payloads.card_action(
        {"cmd": "/models smart", "chat_type": "group", "topic": "om_r"},
        chat_id="oc_g",
        event_id="ev_1",
    )
    msg = parse_card_action(env)
    assert (msg.text, msg.is_button, msg.event_id) == ("/models smart", True, "ev_1")
    assert msg.chat.key == "feishu:oc_g:om_r"
    with pytest.raises(MalformedEvent):
        parse_card_action(payloads.card_action({"other": 1}))


def test_cardkit_card_shape() -> None:
    doc = ReplyDoc(
        text="hi",
        status="done",
        progress=(ToolStep(id="1", label="search"),),
        buttons=(Button(label="Smart", value="/models smart"),),
    )
    card = render.cardkit_card(
        doc, "hi", render.scope_of(ChatRef(channel="feishu", chat_id="c")), streaming=False
    )
    assert card["schema"] == "2.0"
    assert card["header"]["template"] == "green"
    ids = [e.get("element_id") for e in card["body"]["elements"]]
    assert ids[:2] == ["progress", "answer"]
    button = card["body"]["elements"][2]
    assert button["behaviors"][0]["value"]["cmd"] == "/models smart"
    assert json.loads(render.card_reference("card_1"))["data"]["card_id"] == "card_1"


def test_split_for_cards_bytes_and_tables() -> None:
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    parts = render.split_for_cards("\n\n".join([table] * 7))
    assert len(parts) == 2
    assert [count_tables(p) for p in parts] == [5, 2]
    # a table shown as code is no table: one card
    fenced = "```\n" + "\n".join([table] * 7) + "```"
    assert render.split_for_cards(fenced) == [fenced]
    cjk = "汉字" * 9000  # 54 KB of UTF-8 in 18,000 chars
    parts = render.split_for_cards(cjk)
    assert all(len(p.encode()) <= render.CARD_MAX_BYTES for p in parts)
    assert "".join(parts) == cjk


def test_config_validation() -> None:
    from pydantic import ValidationError

    from channels.feishu.config import FeishuConfig

    assert FeishuConfig(domain="lark").base_url == "https://open.larksuite.com"
    assert FeishuConfig(app_id=None, app_secret=None).app_id == ""
    with pytest.raises(ValidationError):
        FeishuConfig(enabled=True)
    with pytest.raises(ValidationError):
        FeishuConfig(enabled=True, app_id="a", app_secret="b", mode="webhook")
    with pytest.raises(ValidationError):
        FeishuConfig(domain="ftp://x")
    assert "hunter2" not in repr(FeishuConfig(app_secret="hunter2"))


def count_tables(markdown: str) -> int:
    return sum(1 for tok in parser().parse(markdown) if tok.type == "table_open")
