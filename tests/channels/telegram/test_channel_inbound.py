"""Inbound: offset after publish, group trigger, allowlists, /start, buttons, webhook, files."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bot import texts
from bot.command_registry import CommandRegistry, SkillCommand
from channels.base import Attachment, FileTooLarge, InboundMessage, PublishResult
from channels.telegram.stream import TelegramReply
from tests.channels.telegram.conftest import ChannelFactory
from tests.fakes.recording_context import RecordingContext
from tests.fakes.telegram_server import FakeTelegram
from tests.menu import BUILT_INS


def offsets(fake: FakeTelegram) -> list[int]:
    return [int(c.body.get("offset") or 0) for c in fake.calls_of("getUpdates")]


async def test_start_registers_commands_and_polls(fake, ctx, make_channel) -> None:
    await make_channel()
    await fake.wait_for(lambda: fake.calls_of("getUpdates"))
    methods = [c.method for c in fake.calls[:6]]
    menus = ["setMyCommands"] * 3  # for everyone, then for English and for Chinese apps
    assert methods == ["getMe", *menus, "deleteWebhook", "getUpdates"]
    languages = [c.body.get("language_code") for c in fake.calls_of("setMyCommands")]
    assert languages == [None, "en", "zh"]
    commands = [c["command"] for c in fake.calls_of("setMyCommands")[0].body["commands"]]
    assert {"new", "stop", "models", "help"} <= set(commands)


async def test_offset_moves_only_after_publish_returned(fake, ctx, make_channel) -> None:
    gate = asyncio.Event()
    original = ctx.publish

    async def slow_publish(msg: InboundMessage) -> PublishResult:
        await gate.wait()
        return await original(msg)

    ctx.publish = slow_publish
    await make_channel()
    update = fake.push_message(555, "hello")
    await asyncio.sleep(0.3)
    assert max(offsets(fake)) <= update["update_id"]
    gate.set()
    await fake.wait_for(lambda: max(offsets(fake)) == update["update_id"] + 1)
    assert [m.text for m in ctx.published] == ["hello"]


async def test_closed_service_leaves_the_update_unconfirmed(fake, ctx, make_channel) -> None:
    ctx.result = PublishResult.closed
    channel = await make_channel()
    update = fake.push_message(555, "hello")
    await fake.wait_for(lambda: len(fake.calls_of("getUpdates")) >= 3)
    assert max(offsets(fake)) <= update["update_id"]
    channel._poll_task.cancel()


async def test_group_messages_are_reported_with_their_flags(fake, ctx, make_channel) -> None:
    """Only `/cmd@other_bot` is dropped here; the service's gate decides on the rest."""
    await make_channel()
    bot_msg = {"message_id": 1, "date": 1, "chat": fake.chat(-100),
               "from": fake.bot_user, "text": "earlier answer"}  # fmt: skip
    fake.push_message(-100, "just chatting")
    fake.push_message(-100, "/help@other_bot")
    fake.push_message(-100, "@antler_bot what time is it?")
    fake.push_message(-100, "and why?", reply_to=bot_msg)
    fake.push_message(-100, "/new@antler_bot")
    await fake.wait_for(lambda: len(ctx.published) == 4)
    await asyncio.sleep(0.1)
    flags = [(m.text, m.mentions_bot, m.replies_to_bot) for m in ctx.published]
    assert flags == [
        ("just chatting", False, False),
        ("what time is it?", True, False),
        ("and why?", False, True),
        ("/new", False, False),
    ]
    assert ctx.published[2].quoted_text == "earlier answer"
    assert fake.calls_of("sendMessage") == []


async def test_start_is_published_for_the_command_table(fake, ctx, make_channel) -> None:
    await make_channel()
    fake.push_message(555, "/start")
    await fake.wait_for(lambda: ctx.published)
    assert ctx.published[0].text == "/start"


async def test_button_press_is_answered_and_published(fake, ctx, make_channel) -> None:
    channel = await make_channel()
    data = channel.buttons.data_for("/models " + "x" * 70)
    fake.push_callback(555, 900, data)
    fake.push_callback(555, 900, "\x1fb:12345")  # a token from before a restart
    fake.push_callback(555, 900, "rm -rf / please")  # data that is not one of our buttons
    fake.push_callback(555, 900, "")  # no data at all: still answered
    await fake.wait_for(lambda: len(fake.calls_of("answerCallbackQuery")) == 4)
    await fake.wait_for(lambda: ctx.published)
    await asyncio.sleep(0.1)
    (press,) = ctx.published
    assert press.is_button
    assert press.text == "/models " + "x" * 70
    answers = [c.body.get("text") for c in fake.calls_of("answerCallbackQuery")]
    assert answers[0] is None
    assert answers[1:] == [texts.CHOICE_EXPIRED] * 3  # the service's text (bot/texts.py)


async def test_duplicate_update_is_published_once(fake, ctx, make_channel) -> None:
    await make_channel()
    message = fake.message(555, "same", message_id=77)
    fake.push_update({"message": message})
    fake.push_update({"message": dict(message)})
    await fake.wait_for(lambda: len(offsets(fake)) >= 3 and max(offsets(fake)) >= 3)
    assert [m.event_id for m in ctx.published] == ["555:77"]


async def test_malformed_update_is_skipped(fake, ctx, make_channel) -> None:
    await make_channel()
    fake.push_update({"message": {"message_id": 1, "text": "no chat"}})
    fake.push_message(555, "fine")
    await fake.wait_for(lambda: ctx.published)
    assert [m.text for m in ctx.published] == ["fine"]


async def test_webhook_checks_the_secret(fake, ctx, make_channel) -> None:
    await make_channel(
        mode="webhook", webhook_url="https://bot.example/tg/hook", webhook_secret="s3cret"
    )
    (set_hook,) = fake.calls_of("setWebhook")
    assert set_hook.body["url"] == "https://bot.example/tg/hook"
    assert set_hook.body["secret_token"] == "s3cret"
    assert fake.calls_of("getUpdates") == []
    app = web.Application()
    app.router.add_post("/tg/hook", ctx.routes[("POST", "/tg/hook")])
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    update = {"update_id": 5, "message": fake.message(555, "via webhook")}
    try:
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{port}/tg/hook"
            bad = await http.post(
                url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "x"}
            )
            assert bad.status == 403
            assert ctx.published == []
            good = await http.post(
                url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret"}
            )
            assert good.status == 200
    finally:
        await runner.cleanup()
    assert [m.text for m in ctx.published] == ["via webhook"]


async def test_fetch_file_downloads_and_enforces_the_limit(
    fake, ctx, make_channel, tmp_path: Path
) -> None:
    channel = await make_channel()
    fake.add_file("PHOTO", b"\xff\xd8jpeg-bytes")
    fake.add_file("HUGE", b"x", size=25 * 1024 * 1024)
    msg = await _photo_message(fake, ctx)
    path = await channel.fetch_file(msg, msg.attachments[0], tmp_path / "uploads")
    assert path.read_bytes() == b"\xff\xd8jpeg-bytes"
    assert path.parent == tmp_path / "uploads"
    with pytest.raises(FileTooLarge, match="20 MB"):
        await channel.fetch_file(msg, Attachment(name="big.zip", ref="HUGE"), tmp_path)
    with pytest.raises(FileTooLarge):
        await channel.fetch_file(
            msg, Attachment(name="b.zip", ref="HUGE", size=21 * 2**20), tmp_path
        )
    assert len(fake.calls_of("getFile")) == 2  # the declared size alone refuses the last one


async def _photo_message(fake: FakeTelegram, ctx) -> InboundMessage:
    photo = [
        {"file_id": "PHOTO", "file_unique_id": "ph", "width": 10, "height": 10, "file_size": 12}
    ]
    fake.push_message(555, None, photo=photo, caption="what is this?")
    await fake.wait_for(lambda: ctx.published)
    return ctx.published[-1]


async def test_send_file_as_photo_document_or_a_note(
    fake, ctx, make_channel, tmp_path: Path
) -> None:
    channel = await make_channel()
    msg = await _photo_message(fake, ctx)
    handles = [TelegramReply(chat=replace(msg.chat, chat_id=str(c)), reply_to=None, mode="edit")
               for c in (555, 556, 557)]  # fmt: skip
    chart = tmp_path / "chart.png"
    chart.write_bytes(b"png" * 10)
    report = tmp_path / "report.csv"
    report.write_text("a,b\n1,2\n")
    huge = tmp_path / "huge.bin"
    with huge.open("wb") as f:
        f.truncate(51 * 1024 * 1024)
    await channel.send_file(handles[0], chart)
    await channel.send_file(handles[1], report)
    with pytest.raises(FileTooLarge, match="50 MB"):  # the service says so (texts.py)
        await channel.send_file(handles[2], huge)
    assert fake.calls_of("sendPhoto")[0].body["photo"]["filename"] == "chart.png"
    assert fake.calls_of("sendDocument")[0].body["document"] == {
        "filename": "report.csv",
        "size": 8,
        "data": b"a,b\n1,2\n",
    }
    assert fake.sent_texts(557) == []
    assert fake.violations == []


async def test_the_service_limit_is_enforced_while_downloading(
    fake, ctx, make_channel, tmp_path: Path
) -> None:
    """getFile understates the size: the download stops at the limit and leaves no file."""
    channel = await make_channel()
    fake.add_file("LIAR", b"x" * 300_000, size=10)
    msg = await _photo_message(fake, ctx)
    uploads = tmp_path / "uploads"
    with pytest.raises(FileTooLarge, match=r"0\.25 MB"):
        await channel.fetch_file(msg, Attachment(name="a.bin", ref="LIAR"), uploads, limit=2**18)
    assert list(uploads.iterdir()) == []


async def test_the_menu_is_the_command_registry(
    fake: FakeTelegram, ctx: RecordingContext, make_channel: ChannelFactory
) -> None:
    """setMyCommands gets every built-in and the skills Telegram accepts as menu names."""
    skills = [SkillCommand("thread_digest", "sum up a thread"), SkillCommand("data-to-chart", "x")]
    ctx.menu = CommandRegistry(skills=lambda: skills).menu()
    await make_channel()
    call = fake.calls_of("setMyCommands")[0]  # the menu everyone gets
    commands = call.body["commands"]
    entries = json.loads(commands) if isinstance(commands, str) else commands
    names = [c["command"] for c in entries]
    assert names == [*BUILT_INS, "thread_digest"]
    assert entries[-1]["description"] == "sum up a thread"
