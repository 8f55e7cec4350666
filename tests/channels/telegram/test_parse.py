"""Recorded Bot API updates -> InboundMessage."""

from __future__ import annotations

import pytest

from channels.telegram.parse import BotIdentity, MalformedUpdate, parse_update

BOT = BotIdentity(id=999, username="antler_bot")
ADA = {"id": 42, "is_bot": False, "first_name": "Ada", "last_name": "L", "username": "ada"}
DM = {"id": 42, "type": "private", "first_name": "Ada"}
GROUP = {"id": -100123, "type": "supergroup", "title": "team", "is_forum": True}


def msg(text: str | None = "hi", chat: dict = DM, **extra: object) -> dict:
    body = {"message_id": 7, "date": 1700000000, "chat": chat, "from": ADA, **extra}
    if text is not None:
        body["text"] = text
    return {"update_id": 1001, "message": body}


def test_dm_text() -> None:
    parsed = parse_update(msg("hello"), BOT, now=5.0)
    assert parsed is not None
    assert parsed.addressed
    m = parsed.msg
    assert (m.event_id, m.text, m.message_id, m.received_at) == ("42:7", "hello", "7", 5.0)
    assert m.chat.key == "telegram:42"
    assert m.chat.chat_type == "dm"
    assert (m.sender.id, m.sender.name) == ("42", "Ada L")


def test_group_without_mention_is_not_addressed() -> None:
    parsed = parse_update(msg("just chatting", GROUP), BOT)
    assert parsed is not None
    assert not parsed.addressed


def test_group_mention_is_stripped() -> None:
    parsed = parse_update(msg("@Antler_Bot, what is 2+2?", GROUP), BOT)
    assert parsed is not None
    assert parsed.addressed
    assert parsed.msg.mentions_bot
    assert parsed.msg.text == "what is 2+2?"


def test_command_for_us_and_for_another_bot() -> None:
    ours = parse_update(msg("/models@antler_bot gpt-4o", GROUP), BOT)
    assert ours is not None
    assert ours.addressed
    assert ours.command == "models"
    assert ours.msg.text == "/models gpt-4o"
    other = parse_update(msg("/models@other_bot", GROUP), BOT)
    assert other is not None
    assert other.for_other_bot
    assert not other.addressed


def test_reply_to_bot_carries_the_quoted_text() -> None:
    reply = {"message_id": 5, "date": 1, "chat": GROUP, "from": {"id": 999, "is_bot": True,
             "first_name": "Antler"}, "text": "the earlier answer"}  # fmt: skip
    parsed = parse_update(msg("why?", GROUP, reply_to_message=reply), BOT)
    assert parsed is not None
    assert parsed.addressed
    assert (parsed.msg.reply_to, parsed.msg.quoted_text) == ("5", "the earlier answer")
    quoted = parse_update(
        msg("this", GROUP, reply_to_message=reply, quote={"text": "earlier"}), BOT
    )
    assert quoted is not None
    assert quoted.msg.quoted_text == "earlier"


def test_forum_topic_is_its_own_conversation_and_root_is_no_reply() -> None:
    root = {"message_id": 77, "date": 1, "chat": GROUP, "from": ADA, "forum_topic_created": {}}
    update = msg("@antler_bot hi", GROUP, message_thread_id=77, is_topic_message=True,
                 reply_to_message=root)  # fmt: skip
    parsed = parse_update(update, BOT)
    assert parsed is not None
    assert parsed.msg.chat.topic_id == "77"
    assert parsed.msg.chat.key == "telegram:-100123:77"
    assert parsed.msg.reply_to is None


def test_photo_takes_the_largest_size_and_caption() -> None:
    photos = [
        {"file_id": "small", "file_unique_id": "s", "width": 90, "height": 90, "file_size": 10},
        {"file_id": "big", "file_unique_id": "b", "width": 1280, "height": 960, "file_size": 900},
    ]
    parsed = parse_update(msg(None, photo=photos, caption="what is this?"), BOT)
    assert parsed is not None
    (att,) = parsed.msg.attachments
    assert (att.ref, att.kind, att.name, att.size) == ("big", "image", "photo-b.jpg", 900)
    assert parsed.msg.text == "what is this?"


def test_document_attachment() -> None:
    doc = {"file_id": "D", "file_unique_id": "d", "file_name": "report.pdf",
           "mime_type": "application/pdf", "file_size": 1234}  # fmt: skip
    parsed = parse_update(msg(None, document=doc), BOT)
    assert parsed is not None
    assert parsed.msg.attachments[0].name == "report.pdf"


def test_callback_query_is_a_button_press() -> None:
    update = {"update_id": 9, "callback_query": {
        "id": "cq1", "from": ADA, "chat_instance": "x", "data": "/models gpt",
        "message": {"message_id": 50, "date": 1, "chat": DM, "text": "pick"}}}  # fmt: skip
    parsed = parse_update(update, BOT)
    assert parsed is not None
    assert parsed.callback_id == "cq1"
    assert parsed.msg.is_button
    assert parsed.msg.text == "/models gpt"
    assert parsed.msg.event_id == "cb:cq1"


@pytest.mark.parametrize(
    "update",
    [
        {"update_id": 1, "message": {**msg()["message"], "chat": {"id": -5, "type": "channel"}}},
    ],
)
def test_updates_the_bot_does_not_act_on(update: dict) -> None:
    assert parse_update(update, BOT) is None


def test_an_edited_message_is_an_edit_of_its_message_at_its_edit_date() -> None:
    original = msg()["message"]
    edited = {**original, "text": "new words", "edit_date": original["date"] + 30}
    parsed = parse_update({"update_id": 9, "edited_message": edited}, BOT)
    assert parsed is not None
    first = parse_update({"update_id": 1, "message": original}, BOT)
    assert first is not None
    assert parsed.msg.text == "new words"
    assert parsed.msg.edit is not None
    assert parsed.msg.edit.message_id == str(original["message_id"])
    assert parsed.msg.edit.version == str(edited["edit_date"])
    assert parsed.msg.edit.original_event_id == first.msg.event_id
    assert parsed.msg.edit.sent_at == original["date"]
    # one event per edit: the same edit delivered again has the same id, a later one another
    again = parse_update({"update_id": 10, "edited_message": edited}, BOT)
    later = parse_update({"update_id": 11, "edited_message": {**edited, "edit_date": 99}}, BOT)
    assert again is not None
    assert later is not None
    assert again.msg.event_id == parsed.msg.event_id != later.msg.event_id


def test_malformed_update_raises_a_clear_error() -> None:
    with pytest.raises(MalformedUpdate, match="update 3"):
        parse_update({"update_id": 3, "message": {"text": "no chat"}}, BOT)


@pytest.mark.parametrize(
    ("extra", "label"),
    [
        ({"sticker": {"file_id": "s"}}, "a sticker"),
        ({"location": {"latitude": 1}}, "a location"),
        ({"poll": {"id": "p"}}, "a poll"),
    ],
)
def test_kinds_antler_cannot_read_are_reported(extra: dict, label: str) -> None:
    parsed = parse_update(msg(None, **extra), BOT)
    assert parsed is not None
    assert parsed.msg.unsupported == label


def test_callback_without_data_is_still_a_press_to_answer() -> None:
    update = {"update_id": 9, "callback_query": {
        "id": "cq2", "from": ADA, "chat_instance": "x",
        "message": {"message_id": 50, "date": 1, "chat": DM, "text": "pick"}}}  # fmt: skip
    parsed = parse_update(update, BOT)
    assert parsed is not None
    assert (parsed.callback_id, parsed.msg.text) == ("cq2", "")


def test_malformed_chat_id_is_a_malformed_update() -> None:
    bad = msg(None)
    bad["message"]["chat"] = {"id": "abc", "type": "private"}
    with pytest.raises(MalformedUpdate):
        parse_update(bad, BOT)
