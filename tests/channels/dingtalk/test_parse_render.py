"""Pure: recorded chatbot payloads -> InboundMessage; ReplyDoc -> DingTalk markdown."""

from __future__ import annotations

import pytest

from channels.base import Button, InboundMessage, ReplyDoc, ToolStep
from channels.dingtalk.config import DingTalkConfig
from channels.dingtalk.endpoint import upload_base
from channels.dingtalk.parse import MalformedEvent, clean_text, parse_message, webhook_of
from channels.dingtalk.render import adapt_markdown, card_text, title_of

DM_TEXT = {
    "conversationId": "cidDM==",
    "conversationType": "1",
    "msgId": "msgA1",
    "senderId": "$:LWCP_v1:$abc",
    "senderNick": "Li Lei",
    "senderStaffId": "manager123",
    "chatbotUserId": "$:LWCP_v1:$bot",
    "robotCode": "dingbot",
    "isInAtList": True,
    "sessionWebhook": "https://oapi.dingtalk.com/robot/sendBySession?session=s1",
    "sessionWebhookExpiredTime": 1700000000000,
    "createAt": 1699990000000,
    "msgtype": "text",
    "text": {"content": "  what is 2+2?"},
}
GROUP_RICH = {
    "conversationId": "cidGROUP==",
    "conversationType": "2",
    "msgId": "msgB2",
    "senderStaffId": "u2",
    "senderNick": "Han",
    "isInAtList": True,
    "msgtype": "richText",
    "content": {
        "richText": [
            {"text": "@Antler look at"},
            {"pictureDownloadCode": "pdc", "downloadCode": "dc1", "type": "picture"},
            {"text": "this"},
        ]
    },
}


def _parse(data: dict) -> InboundMessage:
    return parse_message(data, channel="dingtalk", received_at=1.0)


def test_dm_text() -> None:
    msg = _parse(DM_TEXT)
    assert msg.event_id == "msgA1"
    assert msg.chat.key == "dingtalk:manager123"
    assert msg.chat.chat_type == "dm"
    assert msg.text == "what is 2+2?"
    assert msg.sender.name == "Li Lei"
    assert msg.mentions_bot
    assert webhook_of(DM_TEXT) == (DM_TEXT["sessionWebhook"], 1700000000000)


def test_group_rich_text_with_picture() -> None:
    msg = _parse(GROUP_RICH)
    assert (msg.chat.chat_type, msg.chat.chat_id) == ("group", "cidGROUP==")
    assert msg.text == "look at\nthis"
    [att] = msg.attachments
    assert (att.kind, att.ref) == ("image", "dc1")


@pytest.mark.parametrize(
    ("msgtype", "content", "kind", "name", "text"),
    [
        ("picture", {"downloadCode": "d"}, "image", "image-msgA1.png", ""),
        ("file", {"downloadCode": "d", "fileName": "a.pdf"}, "file", "a.pdf", ""),
        (
            "audio",
            {"downloadCode": "d", "recognition": "hello"},
            "audio",
            "audio-msgA1.amr",
            "hello",
        ),
        ("video", {"downloadCode": "d", "videoType": "mp4"}, "video", "video-msgA1.mp4", ""),
    ],
)
def test_media_messages(msgtype: str, content: dict, kind: str, name: str, text: str) -> None:
    data = {**DM_TEXT, "msgtype": msgtype, "content": content}
    msg = _parse(data)
    [att] = msg.attachments
    assert (att.kind, att.name, att.ref, msg.text) == (kind, name, "d", text)


@pytest.mark.parametrize(
    ("msgtype", "label"), [("interactiveCard", "a card"), ("somethingNew", "this kind of message")]
)
def test_unsupported_kinds_are_reported_not_dropped(msgtype: str, label: str) -> None:
    msg = parse_message({**DM_TEXT, "msgtype": msgtype}, channel="dingtalk", received_at=0)
    assert (msg.unsupported, msg.text, msg.attachments) == (label, "", ())


@pytest.mark.parametrize(
    "data",
    [
        {**DM_TEXT, "msgId": ""},
        {**DM_TEXT, "senderStaffId": "", "senderId": ""},
        {**DM_TEXT, "msgtype": "picture", "content": {}},
    ],
)
def test_malformed(data: dict) -> None:
    with pytest.raises(MalformedEvent):
        _parse(data)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("@Antler /new", "/new"),
        (" @Antler @Bob  hi", "hi"),
        ("/models@Antler gpt-4o", "/models gpt-4o"),
        ("mail me at a@b.c", "mail me at a@b.c"),
    ],
)
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_card_text_shows_progress_note_and_buttons() -> None:
    doc = ReplyDoc(
        text="Answer",
        progress=(ToolStep(id="1", label="search"),),
        note="gpt-4o",
        buttons=(Button(label="Stop", value="/stop"),),
    )
    assert card_text(doc) == "- ⏳ search\n\nAnswer\n\n_gpt-4o_"  # buttons: their own card
    assert card_text(doc, links=True) == (  # the fallback when that card is refused
        "- ⏳ search\n\nAnswer\n\n_gpt-4o_\n\n"
        "[Stop](dtmd://dingtalkclient/sendMessage?content=%2Fstop)"
    )
    assert card_text(ReplyDoc(status="working")).startswith("⏳")
    assert "Stopped" in card_text(ReplyDoc(text="half", status="cancelled"))


def test_adapt_markdown_code_tables_rules() -> None:
    text = "Use `ls`:\n\n```bash\nls -la\n\tcd /\n```\n\n***\n| k | v |\n|:--|--:|\n| x | 1 |"
    assert adapt_markdown(text) == (
        "Use **ls**:\n\n> **bash**\n> ls -la\n>     cd /\n\n———————————\n- **k**: x\n- **v**: 1"
    )
    assert adapt_markdown("plain | pipe text") == "plain | pipe text"


def test_adapt_markdown_follows_the_tree_not_the_lines() -> None:
    # a fence inside a list item keeps the item's indentation; ``` inside a code block is code
    text = "1. step:\n   ```sh\n   make\n   ```\n2. done\n\n````md\n```\nnot a fence\n````"
    assert adapt_markdown(text) == (
        "1. step:\n   > **sh**\n   > make\n2. done\n\n> **md**\n> ```\n> not a fence"
    )
    # an unclosed fence while streaming runs to the end
    assert adapt_markdown("see:\n```py\nx = 1") == "see:\n> **py**\n> x = 1"


def test_title_of() -> None:
    assert title_of("# Hello world\nmore", "Antler") == "Hello world"
    assert title_of("", "Antler") == "Antler"


def test_upload_base_follows_api_base() -> None:
    assert upload_base(DingTalkConfig()) == "https://oapi.dingtalk.com"
    assert upload_base(DingTalkConfig(api_base="http://127.0.0.1:9/")) == "http://127.0.0.1:9"
    assert upload_base(DingTalkConfig(upload_base="https://up.example")) == "https://up.example"


def test_config_needs_credentials_only_when_enabled() -> None:
    assert DingTalkConfig(client_id=None, client_secret=None).client_id == ""
    with pytest.raises(ValueError, match="client_secret: required"):
        DingTalkConfig(enabled=True, client_id="x")  # client_secret missing
