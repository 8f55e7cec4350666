"""Where Telegram commands and buttons act (docs/channels/README.md, "Scope"): a DM, a group and
each forum topic is one conversation. Through PTB against the fake Telegram and the service."""

from __future__ import annotations

import pytest

from tests.channels.telegram.test_e2e import service
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram, visible_text

PLACES = {"dm": (555, None), "group": (-100, None), "topic": (-200, 7)}


def keyboard_of(call) -> list[str]:
    rows = call.body["reply_markup"]["inline_keyboard"]
    return [b["text"] for row in rows for b in row]


@pytest.mark.parametrize("place", list(PLACES))
async def test_model_button_switches_its_conversation_and_moves_the_tick(
    place: str, tmp_path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    chat, topic = PLACES[place]
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(chat, "/models@antler_bot", thread_id=topic)
        await fake.wait_for(lambda: fake.calls_of("sendMessage"), timeout=10)
        await svc.idle()
        [listing] = fake.calls_of("sendMessage")
        assert keyboard_of(listing) == ["✓ Fast", "Smart"]
        assert "Fast ✓" in visible_text(listing.body["text"], "HTML")[0]
        pressed = max(m for (c, m) in fake.messages if c == chat)
        data = {
            b["text"]: b["callback_data"]
            for row in listing.body["reply_markup"]["inline_keyboard"]
            for b in row
        }
        fake.push_callback(chat, pressed, data["Smart"], thread_id=topic)
        await fake.wait_for(lambda: fake.calls_of("editMessageText"), timeout=10)
        await svc.idle()
        [edit] = fake.calls_of("editMessageText")
        assert edit.body["message_id"] == pressed  # the pressed keyboard itself changes
        assert keyboard_of(edit) == ["Fast", "✓ Smart"]
        assert "Model for this conversation: Smart." in edit.body["text"]
        fake.push_message(chat, "@antler_bot here", thread_id=topic)
        if topic:
            fake.push_message(chat, "@antler_bot other topic", thread_id=topic + 1)
        await fake_openai.wait_requests(2 if topic else 1)
        await svc.idle()
    models = {FakeOpenAI.user_texts(r)[-1].split()[-1]: r.model for r in fake_openai.requests}
    assert models["here"] == "fake-smart"
    if topic:
        assert models["topic"] == "fake-fast"  # another topic is another conversation
    assert fake.violations == []


async def test_stop_in_a_group_stops_its_running_reply(tmp_path, fake_openai, fake) -> None:
    fake_openai.responder = lambda body: Reply(text="slow " * 50, stall_after=1)
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(-100, "@antler_bot long job")
        await fake_openai.wait_requests(1)
        fake.push_message(-100, "/stop@antler_bot")
        await fake.wait_for(
            lambda: "Stopped the running reply." in fake.sent_texts(-100), timeout=10
        )
        await svc.idle()
        assert svc.running.dispatcher.active_runs == 0
