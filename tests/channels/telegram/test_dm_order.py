"""A message sent while a DM's reply streams as a draft: the answers stay in the order asked.

The draft has no message until its final, so before the queued notice goes out the running
reply is materialized as a message (bot/notices.py), which it then finishes by editing.
Real python-telegram-bot against tests/fakes/telegram_server.py, with the service's pacer and
the fake's limit checks on a virtual clock.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.channels.telegram.served import telegram_service as service
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram

DM = 555
FIRST = "The first answer: " + " ".join(f"word{i}" for i in range(30)) + "."


def queued(body: dict[str, Any]) -> bool:
    return "Queued" in str(body.get("text"))


def sent(fake: FakeTelegram) -> list[str]:
    return [str(c.body.get("text")) for c in fake.calls_of("sendMessage")]


async def test_a_drafted_reply_becomes_a_message_above_the_queued_notice(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    fake_openai.script(Reply(text=FIRST, tokens_per_second=25))
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(DM, "first")
        await fake.wait_for(lambda: fake.calls_of("sendMessageDraft"), 10)
        fake.push_message(DM, "second")
        await fake_openai.wait_requests(2, timeout=20)
        await svc.idle(timeout=20)
    assert fake.shown_texts(DM) == [FIRST, "echo: second"]  # by message id: as asked
    partial, notice = sent(fake)  # the draft as a message, then the notice; nothing else
    assert FIRST.startswith(partial)
    assert partial != FIRST
    assert queued({"text": notice})
    assert len(fake_openai.requests) == 2
    assert fake.violations == []


async def test_a_reply_with_no_text_yet_shows_its_placeholder_above_the_notice(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    fake_openai.script(Reply(text=FIRST, stall_after=-1))  # no text until released
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(DM, "first")
        await fake_openai.wait_requests(1)
        fake.push_message(DM, "second")
        await fake.wait_for(lambda: any(queued(c.body) for c in fake.calls_of("sendMessage")), 10)
        fake_openai.release()
        await fake_openai.wait_requests(2, timeout=20)
        await svc.idle(timeout=20)
    assert fake.shown_texts(DM) == [FIRST, "echo: second"]
    placeholder, notice = sent(fake)
    assert placeholder == "…"
    assert queued({"text": notice})
    assert fake.violations == []


async def test_the_journal_knows_the_materialized_message_before_the_notice(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    """A crash between the two must not make a restart send the first final as a new message."""
    fake_openai.script(Reply(text=FIRST, stall_after=3))  # no update after the draft
    notice = fake.hold("sendMessage", queued, act=False)
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(DM, "first")
        await fake.wait_for(lambda: fake.calls_of("sendMessageDraft"), 10)
        fake.push_message(DM, "second")
        assert await asyncio.to_thread(notice.reached.wait, 10)
        [materialized] = fake.shown_texts(DM)  # the notice is not shown yet
        assert svc.app is not None
        entries = {e.msg.text: e for e in await svc.app.journal.recent() if e.msg is not None}
        handle = entries["first"].handle or {}
        assert FIRST.startswith(materialized)
        assert handle.get("mode") == "edit"
        assert handle.get("message_id") == min(m for (chat, m) in fake.messages if chat == DM)
        notice.release()
        fake_openai.release()
        await fake_openai.wait_requests(2, timeout=20)
        await svc.idle(timeout=20)
    assert fake.shown_texts(DM) == [FIRST, "echo: second"]


async def test_under_a_429_storm_the_draft_still_becomes_a_message_above_the_notice(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    """Telegram blocks the whole bot meanwhile: nothing is sent before each retry_after passed
    (the fake records any call that is), and the answers still read in the order asked."""
    fake_openai.script(Reply(text=FIRST, tokens_per_second=25))
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(DM, "first")
        await fake.wait_for(lambda: fake.calls_of("sendMessageDraft"), 10)
        fake.storm(5.0)
        fake.push_message(DM, "second")
        await fake_openai.wait_requests(2, timeout=30)
        await svc.idle(timeout=30)
    assert fake.storm_429s > 0
    assert fake.shown_texts(DM) == [FIRST, "echo: second"]  # by message id: as asked
    assert any(queued({"text": text}) for text in sent(fake))  # a sign of life went out
    assert len(fake_openai.requests) == 2
    assert fake.violations == []


async def test_a_refused_draft_text_is_sent_plain_and_the_order_holds(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    """Telegram refuses the materialized draft's formatting: it goes out as plain text (the
    channel's fallback), still above the notice, and each message is answered once."""
    fake_openai.script(Reply(text=FIRST, tokens_per_second=25))
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(DM, "first")
        await fake.wait_for(lambda: fake.calls_of("sendMessageDraft"), 10)
        fake.fail_next("sendMessage", 400, "Bad Request: can't parse entities")
        fake.push_message(DM, "second")
        await fake_openai.wait_requests(2, timeout=30)
        await svc.idle(timeout=30)
    assert fake.shown_texts(DM) == [FIRST, "echo: second"]
    assert len(fake_openai.requests) == 2
    assert fake.violations == []
