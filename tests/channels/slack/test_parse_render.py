"""Pure parse/render functions with recorded payload shapes."""

from __future__ import annotations

import pytest

from channels.base import Button, ReplyDoc, ToolStep
from channels.slack import parse, render
from tests.channels.slack import events

ME = parse.BotIdentity(user_id="UBOT", bot_id="B0001", team_id="T0001")


def test_strip_mentions_and_commands():
    assert parse.strip_mentions("<@UBOT|antler>  hello <@UBOT>", "UBOT") == "hello <@UBOT>"
    assert parse.normalise_command("/new@Antler") == "/new"
    words = frozenset({"models", "help"})
    assert parse.normalise_command("models gpt-4o", words) == "/models gpt-4o"
    assert parse.normalise_command("Help", words) == "/help"
    assert parse.normalise_command("help me write", words) == "help me write"
    assert parse.normalise_command("help") == "help"  # not a command word of this service


def test_parse_dm_and_thread_reply():
    body = {"event_id": "Ev1", "team_id": "T0001", "event": events.dm("hi")}
    msg = parse.parse_event(body, ME)
    assert msg is not None
    assert msg.chat.chat_type == "dm"
    assert msg.reply_to is None
    ev = events.channel_message("x", "2.0", thread_ts="1.0")
    msg = parse.parse_event({"event_id": "Ev2", "event": ev}, ME)
    assert msg.chat.topic_id == "1.0"
    assert msg.reply_to == "1.0"
    assert msg.raw["in_thread"]


def changed(message: dict, before: dict) -> dict:
    inner = {k: v for k, v in message.items() if k not in ("channel", "channel_type")}
    was = {k: v for k, v in before.items() if k not in ("channel", "channel_type")}
    event = {"type": "message", "subtype": "message_changed", "channel": "D0001",
             "channel_type": "im", "message": inner, "previous_message": was}  # fmt: skip
    return {"event_id": "EvEdit", "team_id": "T0001", "event": event}


def test_a_message_changed_by_its_sender_is_an_edit_of_it():
    original = events.dm("hi", ts="1700000001.000100")
    edited = {**original, "text": "hello", "edited": {"user": "U0001", "ts": "1700000050.0"}}
    msg = parse.parse_event(changed(edited, original), ME)
    assert msg is not None
    assert msg.text == "hello"
    assert msg.edit is not None
    assert (msg.edit.message_id, msg.edit.version) == ("1700000001.000100", "1700000050.0")
    assert msg.edit.sent_at == 1700000001.0001
    assert msg.event_id == "edit:D0001:1700000001.000100:1700000050.0"  # one per version
    # not edits: an unfurl (no `edited`, same text) and the bot's own chat.update
    unfurled = {**original, "attachments": [{"title": "a link"}]}
    assert parse.parse_event(changed(unfurled, original), ME) is None
    mine = events.dm("…", ts="9.0", user="UBOT")
    ours = {**mine, "text": "answer", "edited": {"user": "UBOT", "ts": "9.5"}}
    assert parse.parse_event(changed(ours, mine), ME) is None


def test_event_id_fallbacks():
    ev = events.dm("hi", ts="5.5")
    assert parse.parse_event({"event": ev}, ME).event_id == "c-5.5"
    ev.pop("client_msg_id")
    assert parse.parse_event({"event": ev}, ME).event_id == "D0001:5.5"


def test_files_parsed():
    ev = events.dm(
        "f",
        subtype="file_share",
        files=[
            {"id": "F1", "name": "a.png", "mimetype": "image/png", "size": 3, "url_private": "u"},
            {"id": "F2", "name": "nourl"},
        ],
    )
    msg = parse.parse_event({"event": ev}, ME)
    assert [(a.name, a.kind, a.size) for a in msg.attachments] == [("a.png", "image", 3)]


def test_malformed_events_return_none():
    assert parse.parse_event({"event": {"type": "message"}}, ME) is None
    assert parse.parse_event({"event": {"type": "reaction_added", "user": "U1"}}, ME) is None
    assert parse.parse_slash_command({"command": "/antler"}, "/antler") is None
    assert parse.parse_block_action({"actions": [{"action_id": "other"}]}) is None


def test_thread_context_orders_and_labels():
    replies = [
        {"ts": "1.0", "user": "U1", "text": "root"},
        {"ts": "2.0", "user": "UBOT", "text": "bot said"},
        {"ts": "2.5", "user": "U2", "subtype": "channel_join", "text": "joined"},
        {"ts": "3.0", "user": "U1", "text": "the summon"},
    ]
    ctx = parse.thread_context(replies, "3.0", ME)
    assert ctx.splitlines()[1:] == ["<@U1>: root", "assistant: bot said"]
    assert parse.thread_context(replies[:1], "1.0", ME) is None


def test_md_to_mrkdwn():
    md = "# Title\n**bold** and [link](https://x.y) <tag> `a **b**`\n> quote"
    assert render.md_to_mrkdwn(md) == (
        "*Title*\n\n*bold* and <https://x.y|link> &lt;tag&gt; `a **b**`\n\n> quote"
    )


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("***both***", "_*both*_"),
        ("**bold **text", "**bold **text"),  # not bold in CommonMark: the markers stay text
        ("[w](https://w.org/A_(b)?q=1&r=2)", "<https://w.org/A_(b)?q=1&amp;r=2|w>"),
        ("- a\n- **b** c", "• a\n• *b* c"),
        ("```py\nx < 1 && y\n```", "```\nx &lt; 1 &amp;&amp; y\n```"),
        ("> one\n> two **b**", "> one\n> two *b*"),
        ("| a | b |\n|---|---|\n| 1 | 2 |", "```\na | b\n--+--\n1 | 2\n```"),
    ],
)
def test_mrkdwn_from_the_tree(markdown: str, mrkdwn: str) -> None:
    assert render.md_to_mrkdwn(markdown) == mrkdwn


def test_message_payload_progress_buttons_note():
    doc = ReplyDoc(text="answer", progress=(ToolStep(id="1", label="search", state="done"),))
    body = render.body_markdown(doc)
    assert body.startswith(":white_check_mark: search")
    assert body.endswith("answer")
    final = ReplyDoc(
        text="answer",
        status="failed",
        note="model error",
        progress=doc.progress,
        buttons=(Button(label="Retry", value="/retry"),),
    )
    payload = render.message_payload(final)
    assert payload["blocks"][0]["text"] == "answer\n\n:warning: _model error_"
    assert payload["blocks"][1]["elements"][0]["value"] == "/retry"


def test_stream_pieces_and_status():
    assert [len(p) for p in render.stream_pieces("x" * 25_000)] == [12_000, 12_000, 1_000]
    doc = ReplyDoc(progress=(ToolStep(id="1", label="web_search"),))
    assert render.status_text(doc) == "is running web_search..."
    assert render.status_text(ReplyDoc()) == "is thinking..."


def test_config_rules():
    import pytest
    from pydantic import ValidationError

    from channels.slack.config import SlackConfig

    assert SlackConfig().enabled is False  # a disabled section needs no tokens
    with pytest.raises(ValidationError, match="bot_token"):
        SlackConfig(enabled=True)
    with pytest.raises(ValidationError, match="app_token"):
        SlackConfig(enabled=True, bot_token="xoxb-1")
    with pytest.raises(ValidationError, match="signing_secret"):
        SlackConfig(enabled=True, bot_token="xoxb-1", mode="http")
    cfg = SlackConfig(
        enabled=True,
        bot_token="xoxb-1",
        app_token="xapp-1",
        api_base="http://127.0.0.1:9/api",
        command_name="ask",
    )
    assert cfg.api_base == "http://127.0.0.1:9/api/"
    assert cfg.command_name == "/ask"
    assert "xoxb-1" not in repr(cfg)
