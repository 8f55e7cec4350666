"""Edited messages on Telegram (bot/edits.py): python-telegram-bot against the fake Bot API
server, the agent against the fake OpenAI server, on a virtual clock for the pacer."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from bot import texts
from tests.channels.contract.test_contract import answered
from tests.channels.telegram.served import DM, SLOW, answering_slowly
from tests.channels.telegram.served import telegram_service as service
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness


def edit_answer(text: str) -> str:
    return f"{text}\n\n{texts.EDIT_ANSWERED}"


async def answered_message(
    svc: ServiceHarness, fake_openai: FakeOpenAI, fake: FakeTelegram, text: str, requests: int
) -> dict[str, Any]:
    """`text` sent in the DM and answered (the model's `requests`-th request done): the message."""
    message: dict[str, Any] = fake.push_message(DM, text)["message"]
    await answered(svc, fake_openai, requests)
    return message


async def settled(svc: ServiceHarness) -> None:
    """A moment for an update to be taken (or passed over), then the service idle."""
    await asyncio.sleep(0.5)
    await svc.idle(timeout=20)


async def test_an_answered_message_edited_is_answered_again_in_its_reply(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with service(tmp_path, fake_openai, fake) as svc:
        message = await answered_message(svc, fake_openai, fake, "hello", 1)
        assert fake.shown_texts(DM) == ["echo: hello"]
        edited = fake.push_edit(message, "goodbye")
        await answered(svc, fake_openai, 2)
        fake.push_update({"edited_message": dict(edited)})  # the same edit delivered again
        await settled(svc)
        twice = fake.push_edit(edited, "good night")
        await answered(svc, fake_openai, 3)
    assert twice["edit_date"] > edited["edit_date"]
    assert fake.shown_texts(DM) == [edit_answer("echo: good night")]  # one message, rewritten
    assert len(fake_openai.requests) == 3  # the redelivered edit was one edit
    # the earlier answers stay in the thread's history
    assert FakeOpenAI.user_texts(fake_openai.requests[2])[-3:] == ["hello", "goodbye", "good night"]
    assert fake.violations == []


async def test_an_edit_of_the_message_being_answered_restarts_it_in_the_same_reply(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with answering_slowly(tmp_path, fake_openai, fake, "first") as (svc, message):
        fake.push_edit(message, "first, edited")
        await answered(svc, fake_openai, 2)
    assert fake.shown_texts(DM) == [edit_answer("echo: first, edited")]
    assert FakeOpenAI.user_texts(fake_openai.requests[1])[-1] == "first, edited"
    stopped = [c for c in fake.calls if texts.STOPPED_FOR_EDIT in str(c.body.get("text"))]
    assert stopped  # the stopped reply said why before it answered the edit
    assert fake.violations == []


async def test_an_edit_racing_its_answers_final_rewrites_the_final(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    final = fake.hold("sendMessage", lambda body: "echo: first" in str(body.get("text")))
    async with service(tmp_path, fake_openai, fake) as svc:
        message = fake.push_message(DM, "first")["message"]
        await asyncio.to_thread(final.reached.wait, 10)  # the final is shown, its answer held
        fake.push_edit(message, "second")
        await fake_openai.wait_requests(1, timeout=20)
        await asyncio.sleep(0.3)  # the edit is taken while the final is still on its way
        final.release()
        await answered(svc, fake_openai, 2)
    assert fake.shown_texts(DM) == [edit_answer("echo: second")]  # one message: no second answer
    assert len(fake.calls_of("sendMessage")) == 1
    assert fake.violations == []


async def test_an_edit_of_a_queued_message_replaces_its_text(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with answering_slowly(tmp_path, fake_openai, fake, "first") as (svc, _):
        queued = fake.push_message(DM, "second")["message"]
        await fake.wait_for(lambda: any("Queued" in t for t in fake.sent_texts(DM)), 10)
        fake.push_edit(queued, "second, edited")
        await answered(svc, fake_openai, 2)
    assert len(fake_openai.requests) == 2
    assert FakeOpenAI.user_texts(fake_openai.requests[1])[-1] == "second, edited"
    assert fake.shown_texts(DM) == [SLOW, edit_answer("echo: second, edited")]


async def test_edits_policies_ignore_requeue_and_the_window(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with service(tmp_path / "ignore", fake_openai, fake, edits="ignore") as svc:
        message = await answered_message(svc, fake_openai, fake, "hello", 1)
        fake.push_edit(message, "goodbye")
        await settled(svc)
        assert len(fake_openai.requests) == 1
        entries = await svc.running.journal.recent()
        assert any(e.reason.startswith("an edit") for e in entries)
    async with service(tmp_path / "requeue", fake_openai, fake, edits="requeue") as svc:
        message = await answered_message(svc, fake_openai, fake, "again", 2)
        fake.push_edit(message, "again, edited")
        await answered(svc, fake_openai, 3)
    assert fake.shown_texts(DM)[-2:] == ["echo: again", edit_answer("echo: again, edited")]
    async with service(tmp_path / "window", fake_openai, fake, edit_window_minutes=1) as svc:
        old = fake.push_message(DM, "old", date=int(time.time()) - 120)["message"]
        await answered(svc, fake_openai, 4)
        fake.push_edit(old, "old, edited")
        await settled(svc)
        assert len(fake_openai.requests) == 4  # past the window: passed over


async def test_an_edit_after_a_restart_finds_its_reply_in_the_journal(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with service(tmp_path, fake_openai, fake) as svc:
        message = await answered_message(svc, fake_openai, fake, "hello", 1)
        await svc.restart()  # the service's memory of recent messages is gone
        fake.push_edit(message, "goodbye")
        await answered(svc, fake_openai, 2)
    assert fake.shown_texts(DM) == [edit_answer("echo: goodbye")]


async def test_an_edit_waiting_behind_another_reply_shows_queued_in_its_reply(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with service(tmp_path, fake_openai, fake) as svc:
        message = await answered_message(svc, fake_openai, fake, "hello", 1)
        (first,) = [m for (chat, m) in fake.messages if chat == DM]
        fake_openai.script(Reply(text=SLOW, tokens_per_second=10))
        fake.push_message(DM, "second")
        await fake_openai.wait_requests(2, timeout=20)
        fake.push_edit(message, "hello, edited")
        await answered(svc, fake_openai, 3)
    edits = [c.body for c in fake.calls_of("editMessageText") if c.body["message_id"] == first]
    assert "Queued" in str(edits[0]["text"])  # at once, before its turn
    assert fake.shown_texts(DM) == [edit_answer("echo: hello, edited"), SLOW]
    assert fake.violations == []
