"""Signs of life on Telegram: a reaction on the person's message while the agent works and when
it is done (setMessageReaction), typing while a message waits for a run slot. Real
python-telegram-bot against the fake Bot API server (which checks the emoji and the bot-wide
limit), on a virtual clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from channels.telegram.reactions import DONE, WORKING
from tests.channels.telegram.served import DM, SLOW, answering_slowly, reached
from tests.channels.telegram.served import telegram_service as service
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram

OTHER = 556


def reactions(fake: FakeTelegram, chat: int, message_id: int) -> list[list[str]]:
    """The reactions the bot set on one message, in order (each a list: empty clears)."""
    return [
        [r["emoji"] for r in c.body["reaction"]]
        for c in fake.calls_of("setMessageReaction")
        if (int(c.body["chat_id"]), int(c.body["message_id"])) == (chat, message_id)
    ]


async def test_the_persons_message_shows_working_then_done(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with service(tmp_path, fake_openai, fake) as svc:
        message = await reached(fake_openai, fake, DM, "hello")
        await svc.idle(timeout=20)
        await fake.wait_for(lambda: fake.reactions.get((DM, message["message_id"])) == [DONE])
    assert reactions(fake, DM, message["message_id"]) == [[WORKING], [DONE]]
    assert fake.shown_texts(DM) == ["echo: hello"]
    assert fake.violations == []


async def test_a_stopped_answer_clears_the_reaction(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with answering_slowly(tmp_path, fake_openai, fake, "hello", 5) as (svc, message):
        fake.push_message(DM, "/stop")
        await svc.idle(timeout=20)
        await fake.wait_for(lambda: fake.reactions.get((DM, message["message_id"])) == [])
    assert reactions(fake, DM, message["message_id"]) == [[WORKING], []]


async def test_a_message_waiting_for_a_run_slot_shows_typing_and_no_reaction_is_sent_when_off(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    fake_openai.script(Reply(text=SLOW, tokens_per_second=5))
    async with service(tmp_path, fake_openai, fake, runs=1, status_reactions=False) as svc:
        fake.push_message(DM, "first")
        await fake_openai.wait_requests(1, timeout=20)
        fake.push_message(OTHER, "second")  # another chat: it waits for the one run slot
        await fake.wait_for(lambda: any("Queued" in t for t in fake.sent_texts(OTHER)), 10)
        await fake_openai.wait_requests(2, timeout=20)
        await svc.idle(timeout=20)
    calls = [(c.method, c.body.get("chat_id"), str(c.body.get("text"))) for c in fake.calls]
    typing = calls.index(("sendChatAction", OTHER, "None"))
    first_final = next(i for i, c in enumerate(calls) if c[0] == "sendMessage" and c[2] == SLOW)
    assert typing < first_final  # typing while it waited, before the first reply was done
    assert fake.calls_of("setMessageReaction") == []
    assert fake.shown_texts(OTHER) == ["echo: second"]


async def test_typing_for_many_chats_is_in_flight_at_once(
    make_channel: Any, fake: FakeTelegram
) -> None:
    """20 chats' "typing…" all reach Telegram while none has been answered (issue 34)."""
    from channels.base import ChatRef
    from channels.telegram.actions import TYPING_AT_ONCE

    chats = [1000 + i for i in range(TYPING_AT_ONCE)]

    def for_chat(chat: int) -> Callable[[dict[str, Any]], bool]:
        return lambda body: int(body["chat_id"]) == chat

    holds = [fake.hold("sendChatAction", for_chat(c)) for c in chats]
    channel = await make_channel()
    sends = [
        asyncio.create_task(channel.sender.typing(ChatRef(channel="telegram", chat_id=str(c))))
        for c in chats
    ]
    try:
        await fake.wait_for(lambda: all(h.reached.is_set() for h in holds), timeout=10)
    finally:
        for held in holds:
            held.release()
        await asyncio.gather(*sends)
    assert len(fake.calls_of("sendChatAction")) == TYPING_AT_ONCE
    assert fake.violations == []
