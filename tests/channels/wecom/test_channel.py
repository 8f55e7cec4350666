"""Messages, replies, cards and files of the WeCom channel against the fake WeCom."""

from __future__ import annotations

from pathlib import Path

import pytest

from channels.base import Button, FileTooLarge, InboundMessage, ReplyDoc, ReplyHandle
from channels.wecom import stream
from channels.wecom.channel import WeComChannel
from tests.channels.wecom.conftest import Make
from tests.fakes.recording_context import RecordingContext
from tests.fakes.wecom_payloads import GROUP, USER, media_body, mixed_body, press_body, text_body
from tests.fakes.wecom_server import FakeWeCom
from tests.polling import until


async def received(
    fake: FakeWeCom, ctx: RecordingContext, body: dict[str, object]
) -> InboundMessage:
    count = len(ctx.published)
    fake.push_message(body)
    await until(lambda: len(ctx.published) > count)
    return ctx.published[-1]


async def reply_opened(
    fake: FakeWeCom, make_channel: Make, text: str
) -> tuple[WeComChannel, ReplyHandle]:
    """A started channel, `text` received in the DM and its reply opened."""
    channel, ctx = await make_channel()
    msg = await received(fake, ctx, text_body(text))
    return channel, await channel.open_reply(msg, ReplyDoc())


async def stream_hello(channel: WeComChannel, msg: InboundMessage, fake: FakeWeCom) -> ReplyHandle:
    """A reply to `msg` streamed ("Hel", then "Hello there"): one entry of three frames."""
    handle = await channel.open_reply(msg, ReplyDoc())
    await channel.update_reply(handle, ReplyDoc(text="Hel"))
    await channel.update_reply(handle, ReplyDoc(text="Hel"))  # unchanged: no frame
    await channel.finish_reply(handle, ReplyDoc(text="Hello there", status="done"))
    (entry,) = fake.chat_messages(USER)
    assert [(f["content"], f["finish"]) for f in entry["frames"]] == [
        ("…", False),
        ("Hel", False),
        ("Hello there", True),
    ]
    return handle


async def test_a_dm_streams_its_reply_and_finishes_it(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, ctx = await make_channel()
    msg = await received(fake_wecom, ctx, text_body("hello"))
    assert (msg.chat.chat_type, msg.chat.chat_id, msg.text) == ("dm", USER, "hello")
    await stream_hello(channel, msg, fake_wecom)
    assert fake_wecom.violations == []


async def test_a_group_mention_is_for_the_bot_and_answered_in_the_group(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, ctx = await make_channel()
    msg = await received(fake_wecom, ctx, text_body("status please", chatid=GROUP))
    assert (msg.chat.chat_type, msg.chat.chat_id) == ("group", GROUP)
    assert (msg.text, msg.mentions_bot, msg.sender.id) == ("status please", True, USER)
    await channel.send_text(msg.chat, "All good")
    assert [m.get("content") for m in fake_wecom.chat_messages(GROUP)] == ["All good"]


async def test_an_image_is_downloaded_and_decrypted(
    fake_wecom: FakeWeCom, make_channel: Make, tmp_path: Path
) -> None:
    channel, ctx = await make_channel()
    picture = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 7  # not a multiple of 32
    url, key = fake_wecom.add_media("chart.png", picture)
    assert len(key) == 43
    assert not key.endswith("=")
    msg = await received(fake_wecom, ctx, media_body("image", url, key))
    (att,) = msg.attachments
    saved = await channel.fetch_file(msg, att, tmp_path / "in")
    assert (saved.name, saved.read_bytes()) == ("chart.png", picture)


async def test_a_mixed_message_gives_its_text_and_images(
    fake_wecom: FakeWeCom, make_channel: Make, tmp_path: Path
) -> None:
    channel, ctx = await make_channel()
    url, key = fake_wecom.add_media("a.jpg", b"jpeg bytes")
    items = [
        {"msgtype": "text", "text": {"content": "what is this?"}},
        {"msgtype": "image", "image": {"url": url, "aeskey": key}},
    ]
    msg = await received(fake_wecom, ctx, mixed_body(items))
    assert msg.text == "what is this?"
    saved = await channel.fetch_file(msg, msg.attachments[0], tmp_path / "in")
    assert saved.read_bytes() == b"jpeg bytes"


async def test_a_file_over_the_limit_is_refused_while_downloading(
    fake_wecom: FakeWeCom, make_channel: Make, tmp_path: Path
) -> None:
    channel, ctx = await make_channel()
    url, key = fake_wecom.add_media("big.bin", b"x" * 4096)
    msg = await received(fake_wecom, ctx, media_body("file", url, key))
    with pytest.raises(FileTooLarge):
        await channel.fetch_file(msg, msg.attachments[0], tmp_path / "in", limit=1000)
    assert not (tmp_path / "in").exists() or not list((tmp_path / "in").iterdir())


async def test_buttons_go_out_as_cards_of_six_and_a_press_answers(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, ctx = await make_channel()
    msg = await received(fake_wecom, ctx, text_body("/models"))
    buttons = tuple(Button(label=f"Model {i}", value=f"/models m{i}") for i in range(8))
    handle = await channel.open_reply(msg, ReplyDoc())
    await channel.finish_reply(handle, ReplyDoc(text="Pick one", buttons=buttons, status="done"))
    cards = fake_wecom.cards(USER)
    assert [len(c["button_list"]) for c in cards] == [6, 2]
    second = cards[1]
    fake_wecom.push_press(press_body(second["task_id"], second["button_list"][1]["key"]))
    await until(lambda: ctx.published[-1].is_button)
    press = ctx.published[-1]
    assert (press.text, press.chat.chat_id) == ("/models m7", USER)
    (updated,) = fake_wecom.card_updates
    assert updated["task_id"] == second["task_id"]
    assert updated["replace_text"] == "✓ Model 7"
    reply = await channel.open_reply(press, ReplyDoc())  # an event takes no stream: a push
    await channel.finish_reply(reply, ReplyDoc(text="Now on m7", status="done"))
    assert fake_wecom.chat_messages(USER)[-1]["content"] == "Now on m7"
    assert fake_wecom.violations == []


async def test_a_press_on_an_unknown_card_is_answered_plainly(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    _, ctx = await make_channel()
    await received(fake_wecom, ctx, text_body("hi"))
    fake_wecom.push_press(press_body("antler-forgotten", "0"))
    await until(lambda: fake_wecom.chat_messages(USER))
    assert fake_wecom.chat_messages(USER)[-1]["content"] == ctx.choice_expired
    assert len(ctx.published) == 1


async def test_a_refused_final_frame_is_pushed_instead(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, handle = await reply_opened(fake_wecom, make_channel, "hi")
    fake_wecom.fail("aibot_respond_msg", 40058, lambda body: body["stream"]["finish"])
    await channel.finish_reply(handle, ReplyDoc(text="The answer", status="done"))
    assert fake_wecom.chat_messages(USER)[-1]["content"] == "The answer"


async def test_past_the_streams_six_minutes_the_final_is_pushed(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, handle = await reply_opened(fake_wecom, make_channel, "a long task")
    assert handle.started is not None
    handle.started -= stream.STREAM_WINDOW + 1  # the first frame went out long ago
    await channel.update_reply(handle, ReplyDoc(text="more"))
    await channel.finish_reply(handle, ReplyDoc(text="Done at last", status="done"))
    first, final = fake_wecom.chat_messages(USER)
    assert [f["content"] for f in first["frames"]] == ["…"]  # no frame after the window
    assert final["content"] == "Done at last"


async def test_a_reply_is_taken_up_again_after_a_restart(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, ctx = await make_channel()
    msg = await received(fake_wecom, ctx, text_body("hi"))
    handle = await channel.open_reply(msg, ReplyDoc(text="half"))
    state = channel.handle_state(handle)
    other, _ = await make_channel(start=False)
    assert isinstance(other, WeComChannel)
    restored = other.restore_handle(msg, state)
    assert restored is not None
    await channel.finish_reply(restored, ReplyDoc(text="whole", status="done"))
    (entry,) = fake_wecom.chat_messages(USER)
    assert entry["frames"][-1] == {"content": "whole", "finish": True}


async def test_files_out_are_uploaded_in_chunks_and_sent(
    fake_wecom: FakeWeCom, make_channel: Make, tmp_path: Path
) -> None:
    channel, handle = await reply_opened(fake_wecom, make_channel, "make files")
    report = tmp_path / "report.pdf"
    report.write_bytes(bytes(range(256)) * 2600)  # 665,600 bytes: two chunks
    picture = tmp_path / "plot.png"
    picture.write_bytes(b"\x89PNG tiny")
    await channel.send_file(handle, report)
    await channel.send_file(handle, picture)
    assert [(u["name"], u["type"]) for u in fake_wecom.uploads] == [
        ("report.pdf", "file"),
        ("plot.png", "image"),
    ]
    assert fake_wecom.uploads[0]["data"] == report.read_bytes()
    chunks = [c for c in fake_wecom.calls if c.method == "aibot_upload_media_chunk"]
    assert len(chunks) == 3
    sent = [m for m in fake_wecom.chat_messages(USER) if m["kind"] in ("file", "image")]
    assert [m["media_id"] for m in sent] == ["media-1", "media-2"]
    assert fake_wecom.violations == []


async def test_a_long_preview_shows_its_end_within_the_bytes_of_a_message(
    fake_wecom: FakeWeCom, make_channel: Make
) -> None:
    channel, handle = await reply_opened(fake_wecom, make_channel, "write in Chinese")
    text = "中文" * 4000 + "END"  # 24,003 bytes
    await channel.update_reply(handle, ReplyDoc(text=text))
    shown = fake_wecom.chat_messages(USER)[0]["frames"][-1]["content"]
    assert shown.endswith("END")
    assert shown.startswith("…")
    assert len(shown.encode()) <= 20480
    assert fake_wecom.violations == []
