"""Property tests of every parser of platform input (channels/*/parse.py): whatever a platform
(or someone posting to a webhook) sends, a parser answers an InboundMessage or a clean skip (None,
or its own Malformed* error, which the channel logs and drops), never another exception.

Inputs are arbitrary JSON and, to get past the first checks, JSON shaped like each platform's
real payloads with every key optional and every value possibly of the wrong type.
Derandomized and bounded: the same inputs every run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from channels.base import InboundMessage
from channels.dingtalk import parse as dingtalk
from channels.feishu import parse as feishu
from channels.slack import parse as slack
from channels.telegram import parse as telegram
from channels.wecom import parse as wecom
from tests.repeatable import REPEATABLE

EXAMPLES = 200
PROPERTY = settings(REPEATABLE, max_examples=EXAMPLES)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def shaped(template: Any) -> st.SearchStrategy[Any]:
    """Values like `template` (a dict: its keys, each optional; a list: items like its one
    element; a tuple: one of these leaves), or now and then any JSON at all."""
    like: st.SearchStrategy[Any]
    if isinstance(template, dict):
        like = st.fixed_dictionaries({}, optional={k: shaped(v) for k, v in template.items()})
    elif isinstance(template, list):
        like = st.lists(shaped(template[0]), max_size=3)
    else:
        like = st.sampled_from(template)
    return st.one_of(like, like, like, json_values)


def payloads(template: dict[str, Any]) -> st.SearchStrategy[Any]:
    return st.one_of(shaped(template), st.dictionaries(st.text(max_size=10), json_values))


TEXT = ("hi", "/new@Antler x", "@Antler hi", "", " ", "<@UBOT> new", "@_user_1 hi")
IDS = (1, -100123, "1", "", "D1", "C1", 0)

TELEGRAM_MESSAGE = {
    "message_id": IDS,
    "message_thread_id": IDS,
    "is_topic_message": (True, False),
    "chat": {"id": IDS, "type": ("private", "group", "supergroup", "channel")},
    "from": {
        "id": IDS,
        "is_bot": (True, False),
        "first_name": TEXT,
        "last_name": TEXT,
        "username": TEXT,
    },
    "sender_chat": {"id": IDS, "title": TEXT},
    "text": TEXT,
    "caption": TEXT,
    "photo": [{"file_id": TEXT, "file_unique_id": TEXT, "width": IDS, "height": IDS}],
    "document": {"file_id": TEXT, "file_unique_id": TEXT, "file_name": TEXT, "mime_type": TEXT},
    "voice": {"file_id": TEXT, "file_unique_id": TEXT, "file_size": IDS},
    "sticker": {"file_id": TEXT},
    "reply_to_message": {"message_id": IDS, "from": {"id": IDS}, "text": TEXT},
    "quote": {"text": TEXT},
}
TELEGRAM = {
    "update_id": IDS,
    "message": TELEGRAM_MESSAGE,
    "callback_query": {
        "id": TEXT,
        "data": TEXT,
        "from": {"id": IDS, "is_bot": (False,), "first_name": TEXT},
        "message": TELEGRAM_MESSAGE,
    },
}
SLACK_EVENT = {
    "type": ("message", "app_mention", "reaction_added"),
    "subtype": (None, "file_share", "bot_message", "thread_broadcast"),
    "channel": IDS,
    "channel_type": ("im", "channel", "group", ""),
    "user": ("U1", "UBOT", ""),
    "bot_id": (None, "B1"),
    "ts": ("1.1", "2.2", ""),
    "thread_ts": ("1.1", "0.5", None),
    "text": TEXT,
    "team": TEXT,
    "client_msg_id": TEXT,
    "files": [{"name": TEXT, "id": TEXT, "url_private": TEXT, "mimetype": TEXT, "size": IDS}],
}
SLACK = {"event": SLACK_EVENT, "event_id": TEXT, "team_id": TEXT}
SLACK_COMMAND = {
    "command": ("/antler", "/other"),
    "channel_id": IDS,
    "user_id": IDS,
    "user_name": TEXT,
    "text": TEXT,
    "team_id": TEXT,
    "trigger_id": TEXT,
    "response_url": TEXT,
}
SLACK_ACTION = {
    "actions": [{"action_id": ("antler_btn_0", "x"), "value": TEXT, "action_ts": TEXT}],
    "channel": {"id": IDS},
    "container": {"channel_id": IDS, "thread_ts": TEXT, "is_ephemeral": (True, False)},
    "user": {"id": IDS, "username": TEXT, "team_id": TEXT},
    "team": {"id": TEXT},
    "message": {"ts": TEXT, "thread_ts": TEXT},
    "trigger_id": TEXT,
}
FEISHU_CONTENT = (
    '{"text": "@_user_1 hi"}',
    '{"title": "t", "content": [[{"tag": "text", "text": "x"}, {"tag": "img", "image_key": "k"}]]}',
    '{"zh_cn": {"content": [[{"tag": "at", "user_id": "@_user_1"}, {"tag": "a", "href": 1}]]}}',
    '{"content": [[1, {"tag": "code_block", "language": 5}], "x"]}',
    '{"image_key": "k"}',
    '{"file_key": "f", "file_name": 3}',
    "[]",
    "{",
    "",
)
FEISHU = {
    "header": {"event_type": (feishu.MESSAGE_EVENT, feishu.CARD_ACTION_EVENT), "event_id": TEXT},
    "event": {
        "sender": {"sender_id": {"open_id": TEXT, "user_id": TEXT}, "sender_type": ("user", "app")},
        "message": {
            "message_id": TEXT,
            "chat_id": TEXT,
            "chat_type": ("p2p", "group", "topic_group"),
            "message_type": ("text", "post", "image", "file", "audio", "media", "sticker"),
            "content": FEISHU_CONTENT,
            "root_id": TEXT,
            "parent_id": TEXT,
            "thread_id": TEXT,
            "mentions": [{"key": ("@_user_1",), "name": TEXT, "id": {"open_id": ("ou_bot", "x")}}],
        },
        "action": {"value": {"cmd": TEXT, "chat_type": ("group", "dm"), "topic": TEXT}},
        "context": {"open_chat_id": TEXT, "open_message_id": TEXT},
        "operator": {"open_id": TEXT},
        "token": TEXT,
    },
}
DINGTALK = {
    "msgId": TEXT,
    "msgtype": ("text", "richText", "picture", "file", "audio", "video", "sticker", "x"),
    "conversationType": ("1", "2", 2),
    "conversationId": TEXT,
    "senderStaffId": TEXT,
    "senderId": TEXT,
    "senderNick": TEXT,
    "isInAtList": (True, False),
    "text": {"content": TEXT},
    "content": {
        "richText": [{"text": TEXT, "downloadCode": TEXT}],
        "downloadCode": TEXT,
        "pictureDownloadCode": TEXT,
        "fileName": TEXT,
        "recognition": TEXT,
        "videoType": TEXT,
    },
    "sessionWebhook": TEXT,
    "sessionWebhookExpiredTime": IDS,
}

WECOM_MEDIA = {"url": TEXT, "aeskey": TEXT, "filename": TEXT}
WECOM = {
    "msgid": IDS,
    "chattype": ("single", "group", "other"),
    "chatid": IDS,
    "from": {"userid": IDS},
    "msgtype": ("text", "image", "file", "voice", "mixed", "video", "event"),
    "text": {"content": TEXT},
    "voice": {"content": TEXT},
    "image": WECOM_MEDIA,
    "file": WECOM_MEDIA,
    "mixed": {
        "msg_item": [
            {"msgtype": ("text", "image", "file"), "text": {"content": TEXT}, "image": WECOM_MEDIA}
        ]
    },
    "quote": {"msgtype": ("text", "image"), "text": {"content": TEXT}},
    "event": {
        "eventtype": ("template_card_event", "enter_chat"),
        "template_card_event": {"event_key": TEXT, "task_id": TEXT},
    },
}


def never_raises(
    parse: Callable[[Any], Any], skip: type[Exception] | None = None
) -> Callable[[Any], None]:
    """The property for one parser: a message, None, or its own `skip` error."""

    def check(payload: Any) -> None:
        try:
            result = parse(payload)
        except Exception as exc:
            if skip is None or not isinstance(exc, skip):
                raise
            return
        msg = result.msg if isinstance(result, telegram.Parsed) else result
        assert msg is None or isinstance(msg, InboundMessage), result

    return check


@PROPERTY
@given(payloads(TELEGRAM))
def test_telegram_updates(update: Any) -> None:
    bot = telegram.BotIdentity(id=1, username="Antler")
    never_raises(lambda u: telegram.parse_update(u, bot), telegram.MalformedUpdate)(update)


@PROPERTY
@given(payloads(SLACK))
def test_slack_events(body: Any) -> None:
    me = slack.BotIdentity(user_id="UBOT", bot_id="BBOT", team_id="T1")
    words = frozenset({"new", "models"})
    never_raises(lambda b: slack.parse_event(b, me, command_words=words))(body)


@PROPERTY
@given(payloads(SLACK_COMMAND))
def test_slack_slash_commands(body: Any) -> None:
    never_raises(lambda b: slack.parse_slash_command(b, "/antler"))(body)


@PROPERTY
@given(payloads(SLACK_ACTION))
def test_slack_button_presses(body: Any) -> None:
    never_raises(slack.parse_block_action)(body)


@PROPERTY
@given(payloads(FEISHU))
def test_feishu_messages(envelope: Any) -> None:
    bot = feishu.BotIdentity(open_id="ou_bot", name="Antler")
    never_raises(lambda e: feishu.parse_message(e, bot=bot), feishu.MalformedEvent)(envelope)


@PROPERTY
@given(payloads(FEISHU))
def test_feishu_card_actions(envelope: Any) -> None:
    never_raises(feishu.parse_card_action, feishu.MalformedEvent)(envelope)


@PROPERTY
@given(payloads(DINGTALK))
def test_dingtalk_messages(data: Any) -> None:
    parse = never_raises(
        lambda d: dingtalk.parse_message(d, channel="dingtalk", received_at=0.0),
        dingtalk.MalformedEvent,
    )
    parse(data)
    url, expires = dingtalk.webhook_of(data)
    assert isinstance(url, str)
    assert isinstance(expires, int)


def test_dingtalk_webhook_expiry_of_any_number() -> None:
    """Python's JSON reads `Infinity`: an expiry no integer holds is no expiry."""
    for odd in (float("inf"), float("-inf"), float("nan"), "soon", [1], 1e300):
        data = {"sessionWebhook": "u", "sessionWebhookExpiredTime": odd}
        url, expires = dingtalk.webhook_of(data)
        assert url == "u"
        assert isinstance(expires, int)


@PROPERTY
@given(payloads(WECOM))
def test_wecom_callbacks(body: Any) -> None:
    never_raises(lambda b: wecom.parse_message(b, "req-1"), wecom.MalformedCallback)(body)
    never_raises(lambda b: wecom.parse_press(b, "req-2", "/new"), wecom.MalformedCallback)(body)
