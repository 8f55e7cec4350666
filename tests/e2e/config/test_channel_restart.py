"""A channel restarted at run time (a changed channel key over `/api/config`) loses no reply,
end to end: real python-telegram-bot against the fake Telegram, the agent against the fake
OpenAI server with an answer held mid-stream (`stall_after`) until the test lets it go."""

from __future__ import annotations

import asyncio
from typing import Any

from bot import texts
from bot.stores.journal import State
from tests.e2e.config.service import NEW_TOKEN, Service
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram, visible_text

ANSWER = "The whole answer, every word of it, from the first to the very last one."
CHAT = 42
PROMPT = 10.0  # the config API answers within this (a drain would hold it for the grace)


async def grace(svc: Service, seconds: float) -> None:
    status, change = await svc.call(
        "PATCH", "/api/config/channels", {"shutdown_grace_seconds": seconds}
    )
    assert status == 200
    assert change["applied"] == ["channels.shutdown_grace_seconds"], change


async def reply_under_way(fake: FakeTelegram, fake_openai: FakeOpenAI) -> None:
    """A message whose answer streams its first words, then holds."""
    fake_openai.script(Reply(text=ANSWER, stall_after=3))
    fake.push_message(CHAT, "tell me everything", user_id=CHAT)
    await fake_openai.wait_requests(1, timeout=10)
    await fake.wait_for(lambda: any("whole" in t for t in shown(fake, "sendMessageDraft")), 10)


async def cut_by_the_grace(svc: Service, fake: FakeTelegram, fake_openai: FakeOpenAI) -> None:
    """A half-second grace, a reply under way that outlasts it, and the answer asked again."""
    await grace(svc, 0.5)
    await reply_under_way(fake, fake_openai)
    fake_openai.script(Reply(text=ANSWER))


async def restart(svc: Service, keys: dict[str, Any]) -> dict[str, Any]:
    """Change keys of the Telegram section (it restarts the channel); answered promptly."""
    status, change = await asyncio.wait_for(
        svc.call("PATCH", "/api/config/channels/telegram", keys), PROMPT
    )
    assert status == 200, change
    assert change["channels_restarted"] == ["telegram"]
    assert change["errors"] == []
    return change


def shown(fake: FakeTelegram, *methods: str) -> list[str]:
    """What the bot showed in the chat, call by call (drafts, messages, edits)."""
    calls = fake.calls_of(*(methods or ("sendMessage", "editMessageText", "sendMessageDraft")))
    return [
        visible_text(c.body.get("text", ""), c.body.get("parse_mode"))[0]
        for c in calls
        if str(c.body.get("chat_id")) == str(CHAT) and not c.refused
    ]


def finals(fake: FakeTelegram) -> list[str]:
    return [t for t in fake.shown_texts(CHAT) if ANSWER in t]


async def settled(svc: Service) -> None:
    await svc.idle()
    (entry,) = await svc.app.journal.recent()
    assert entry.state is State.delivered


async def test_a_reply_shorter_than_the_grace_finishes_on_the_old_instance(
    svc, fake, fake_openai
) -> None:
    await grace(svc, 60)
    await reply_under_way(fake, fake_openai)
    old = svc.app.channels["telegram"]
    await restart(svc, {"poll_timeout": 2})  # answered while the reply is held: no waiting
    assert svc.app.channels["telegram"] is not old
    assert not finals(fake)
    fake_openai.release()
    await fake.wait_for(lambda: finals(fake), timeout=10)
    await settled(svc)
    assert fake.shown_texts(CHAT) == [ANSWER]  # complete, one final, in one message
    assert not any(texts.CHANNEL_RESTARTED in t for t in shown(fake))
    assert len(fake_openai.requests) == 1  # not answered again


async def test_a_reply_longer_than_the_grace_gets_a_note_and_is_answered_again(
    svc, fake, fake_openai
) -> None:
    await cut_by_the_grace(svc, fake, fake_openai)
    await restart(svc, {"poll_timeout": 2})
    await fake.wait_for(lambda: any(texts.CHANNEL_RESTARTED in t for t in shown(fake)), 10)
    await fake.wait_for(lambda: finals(fake), timeout=10)
    await settled(svc)
    assert len(fake_openai.requests) == 2
    assert fake.shown_texts(CHAT) == [ANSWER]  # the cut reply became the answer: nothing twice
    seen = shown(fake)
    note = next(i for i, t in enumerate(seen) if texts.CHANNEL_RESTARTED in t)
    assert ANSWER not in "".join(seen[:note])  # the note first, then the answer
    assert [t for t in shown(fake, "sendMessage") if ANSWER in t] == []  # the final is an edit
    assert sum(ANSWER in t for t in shown(fake, "editMessageText")) == 1


async def test_the_config_api_answers_before_the_drain_ends(svc, fake, fake_openai) -> None:
    await grace(svc, 60)
    await reply_under_way(fake, fake_openai)
    writing = svc.app.channels["telegram"]
    await restart(svc, {"poll_timeout": 2})
    await restart(svc, {"poll_timeout": 3})  # a second change while the first instance still drains
    status, channels = await asyncio.wait_for(svc.call("GET", "/api/channels"), PROMPT)
    info = channels["channels"]["telegram"]
    assert (info["running"], info["status"]) == (True, "connected")
    assert list(svc.app.restarts.draining.values()) == [writing]  # the other had no reply
    assert not finals(fake)  # the reply is still being written
    fake_openai.release()
    await fake.wait_for(lambda: finals(fake), timeout=10)
    await settled(svc)
    assert fake.shown_texts(CHAT) == [ANSWER]
    for _ in range(200):  # the replaced instances stop once their replies are done
        if not svc.app.restarts.draining:
            break
        await asyncio.sleep(0.025)
    assert not svc.app.restarts.draining
    status, channels = await svc.call("GET", "/api/channels")
    assert status == 200
    assert channels["channels"]["telegram"]["status"] == "connected"  # not the old ones' word
    fake_openai.script(Reply(text="Still here."))
    fake.push_message(CHAT, "and now?", user_id=CHAT)
    await fake.wait_for(lambda: "Still here." in fake.shown_texts(CHAT), timeout=10)


async def test_a_reply_the_revoked_token_cannot_finish_moves_to_the_new_token(
    svc, fake, fake_openai
) -> None:
    """A regenerated bot token: the old one is refused at once, so the old instance cannot
    finish its reply; the new instance sends the final the old one could not (kept in the
    journal: the model is not asked again), shown once."""
    await grace(svc, 60)
    await reply_under_way(fake, fake_openai)
    fake.token = NEW_TOKEN  # the platform now accepts the new token only
    await restart(svc, {"bot_token": NEW_TOKEN})
    fake_openai.release()  # the old instance's final is refused: Unauthorized
    await fake.wait_for(lambda: finals(fake), timeout=10)
    await settled(svc)
    assert len(fake_openai.requests) == 1
    assert fake.shown_texts(CHAT) == [ANSWER]


async def test_a_reply_cut_by_switching_off_is_answered_when_switched_on(
    svc, fake, fake_openai
) -> None:
    await cut_by_the_grace(svc, fake, fake_openai)
    status, change = await svc.call("PATCH", "/api/config/channels/telegram", {"enabled": False})
    assert (status, change["channels_restarted"]) == (200, ["telegram"])
    await fake.wait_for(lambda: any(texts.CHANNEL_SWITCHED_OFF in t for t in shown(fake)), 10)
    await svc.idle()
    (entry,) = await svc.app.journal.recent()
    assert entry.state is State.running  # not lost: it waits for the channel
    await restart(svc, {"enabled": True})
    await fake.wait_for(lambda: finals(fake), timeout=10)
    await settled(svc)
    assert len(fake_openai.requests) == 2
    assert fake.shown_texts(CHAT) == [ANSWER]
