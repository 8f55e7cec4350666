"""The delivery journal end to end in-process: titles off the reply path, a sign of life when the
run pool is full, failing turns, and what a restart does with each state it finds."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot import texts
from bot.db import open_db
from bot.stores.journal import State
from bot.stores.journal.sqlite import SqliteJournal
from channels.base import ChannelError, ChatRef, InboundMessage, UserRef
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.recording_channel import Call, RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")


def harness(tmp_path: Path, fake: FakeOpenAI, **extra: Any) -> ServiceHarness:
    channels = {"test": {"enabled": True}, **extra.pop("channels", {})}
    return ServiceHarness(tmp_path, fake, channels, **extra)


ONE_SLOT: dict[str, Any] = {"channels": {"max_concurrent_runs": 1}}
"""One run at a time: a second message waits for the slot."""


async def queue_behind_a_run(ch: RecordingChannel, fake: FakeOpenAI, **where: Any) -> Call:
    """c1's message takes the only run slot (its model call stalls); "two", sent `where`, then
    waits for the slot: its queued notice."""
    await ch.inject("one", chat_id="c1")
    await fake.wait_requests(1)
    await ch.inject("two", **where)
    return (await ch.wait_for("queued"))[0]


def chan(svc: ServiceHarness) -> RecordingChannel:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    return channel


def stored(event_id: str, text: str = "question") -> InboundMessage:
    return InboundMessage(
        event_id=event_id,
        chat=ChatRef(channel="test", chat_id="c1"),
        sender=UserRef(id="u1", name="u1"),
        text=text,
        message_id=event_id,
    )


async def state_of(svc: ServiceHarness, msg: InboundMessage) -> tuple[State, str, bool]:
    assert svc.app is not None
    entry = await svc.app.journal.entry(msg)
    assert entry is not None
    return entry.state, entry.reason, entry.told


async def started(tmp_path: Path, msg: InboundMessage) -> tuple[SqliteJournal, InboundMessage]:
    """`msg` accepted and its turn started in the journal of a service not running yet."""
    journal = SqliteJournal(open_db(tmp_path), 24)
    await journal.accept(msg)
    await journal.start(msg)
    return journal, msg


@contextlib.asynccontextmanager
async def failing(
    tmp_path: Path, fake_openai: FakeOpenAI, call: str, errors: list[Exception]
) -> AsyncIterator[tuple[ServiceHarness, RecordingChannel]]:
    """The service whose channel raises `errors` on its next `call`s (open, finish, …)."""
    async with harness(tmp_path, fake_openai) as svc:
        ch = chan(svc)
        ch.failures[call] = list(errors)
        yield svc, ch


async def test_a_slow_title_call_does_not_hold_the_final(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="The answer."), Reply(text="Slow title", delay=25))
    async with harness(tmp_path, fake_openai, agent={"title": {"enabled": True}}) as svc:
        ch = chan(svc)
        await ch.inject("a question")
        await ch.wait_for("finish", timeout=10)
        requests = await fake_openai.wait_requests(2)
        assert not requests[1].finished  # the title is still being written
        assert ch.of("finish")[0].text == "The answer."


async def test_the_title_arrives_after_the_answer(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="Grow them in sun."), Reply(text="Kumquat care"))
    async with harness(tmp_path, fake_openai, agent={"title": {"enabled": True}}) as svc:
        await chan(svc).inject("how do I grow kumquats?")
        await fake_openai.wait_requests(2)
        await svc.idle()
        assert svc.app is not None
        for _ in range(500):
            conv = await svc.app.conversations.get("test:c1")
            if conv is not None and conv.title:
                break
            await asyncio.sleep(0.01)
        assert conv is not None
        assert conv.title == "Kumquat care"


async def test_a_full_run_pool_shows_a_queued_notice_at_admission(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="first answer " * 10, stall_after=2), Reply(text="second"))
    async with harness(tmp_path, fake_openai, **ONE_SLOT) as svc:
        ch = chan(svc)
        queued = await queue_behind_a_run(ch, fake_openai, chat_id="c2")
        assert queued.chat is not None
        assert queued.chat.chat_id == "c2"
        assert queued.doc is not None
        assert "Queued" in queued.doc.text
        assert svc.app is not None
        assert svc.app.dispatcher.waiting == 1
        assert svc.app.metrics.value("antler_messages_waiting_for_slot") == 1
        fake_openai.release()
        await svc.idle()
        metrics = svc.app.metrics.render()
    finish_c2 = ch.of("finish", "c2")[0]
    assert finish_c2.reply == queued.reply  # the notice became the answer
    assert finish_c2.text == "second"
    assert 'antler_admission_to_first_visible_seconds_count{channel="test"} 2.0' in metrics


async def stopped_in_its_notice(
    svc: ServiceHarness, ch: RecordingChannel, queued: Call, fake_openai: FakeOpenAI
) -> None:
    """The waiting message's queued notice is finished as stopped and nothing waits any more;
    then the running reply is let go and the service settles."""
    stopped = (await ch.wait_for("finish"))[0]
    assert stopped.reply == queued.reply
    assert stopped.doc is not None
    assert stopped.doc.status == "cancelled"
    assert svc.app is not None
    assert svc.app.dispatcher.waiting == 0
    fake_openai.release()
    await svc.idle()


async def test_stop_cancels_a_message_waiting_for_a_run_slot(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """A full pool: c2's message shows its queued notice; /stop in c2 stops it there (the notice
    says so, the journal settles it stopped) and the model is never asked; /status first counts
    it as waiting."""
    fake_openai.script(Reply(text="first answer " * 10, stall_after=2), Reply(text="never"))
    async with harness(tmp_path, fake_openai, **ONE_SLOT) as svc:
        ch = chan(svc)
        queued = await queue_behind_a_run(ch, fake_openai, chat_id="c2", event_id="two")
        await ch.inject("/status", chat_id="c2")
        status = (await ch.wait_for("text"))[0].text
        assert "Queued messages: 1" in status
        await ch.inject("/stop", chat_id="c2")
        await stopped_in_its_notice(svc, ch, queued, fake_openai)
        two = ch.message("two", "c2", event_id="two")
        assert await state_of(svc, two) == (State.delivered, "stopped", False)
    assert texts.stopped(1) in ch.texts("c2")  # the answer to /stop
    assert len(fake_openai.requests) == 1  # c2's message never reached the model
    assert ch.texts("c1")[-1].startswith("first answer")


async def test_stop_in_a_group_main_chat_stops_a_message_waiting_in_a_topic(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """A full pool: a message in a topic of group g waits for a slot; the sender's /stop in the
    group's main chat finds it (/status there counts it), stops it in its notice and the model
    is never asked for it."""
    fake_openai.script(Reply(text="first answer " * 10, stall_after=2), Reply(text="never"))
    group: dict[str, Any] = {"chat_id": "g", "chat_type": "group", "mentions_bot": True}
    async with harness(tmp_path, fake_openai, **ONE_SLOT) as svc:
        ch = chan(svc)
        queued = await queue_behind_a_run(ch, fake_openai, topic="t1", event_id="two", **group)
        await ch.inject("/status", in_main_chat=True, **group)
        status = (await ch.wait_for("text"))[0].text
        assert "Reply running: 1" in status  # the sender's reply waiting in the topic
        await ch.inject("/stop", in_main_chat=True, **group)
        await stopped_in_its_notice(svc, ch, queued, fake_openai)
        two = ch.message("two", topic="t1", event_id="two", **group)
        assert await state_of(svc, two) == (State.delivered, "stopped", False)
    assert texts.stopped(1) in ch.texts("g")  # the answer to /stop, in the main chat
    assert len(fake_openai.requests) == 1  # the topic's message never reached the model
    assert ch.texts("c1")[-1].startswith("first answer")


async def test_a_conversation_taken_over_by_another_worker_is_left_without_a_word(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """Another worker took the conversations over (this one lost their partition while paused):
    the running reply and the message waiting for a slot stop here silently: no "restarting"
    notice that could land on the new owner's answer, and the journal keeps them for it."""
    fake_openai.script(Reply(text="first answer " * 10, stall_after=2))
    async with harness(tmp_path, fake_openai, channels={"max_concurrent_runs": 1}) as svc:
        ch = chan(svc)
        await ch.inject("one", chat_id="c1", event_id="one")
        await ch.wait_for("update")
        await ch.inject("two", chat_id="c2", event_id="two")
        await ch.wait_for("queued")
        assert svc.app is not None
        before = len(ch.calls)
        await svc.app.dispatcher.abandon({"test:c1", "test:c2"})
        fake_openai.release()
        await svc.idle()
        assert ch.calls[before:] == []  # nothing more shown by this worker
        one = ch.message("one", "c1", event_id="one")
        two = ch.message("two", "c2", event_id="two")
        assert (await state_of(svc, one))[0] is State.running  # the new owner continues it
        assert (await state_of(svc, two))[0] is State.accepted  # the new owner answers it
        entry = await svc.app.journal.entry(one)
        assert entry is not None
        assert entry.attempts == 0  # a pause is no failure: it does not count toward giving up
    assert len(fake_openai.requests) == 1


async def test_a_turn_that_fails_unexpectedly_is_tried_once_more(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    async with failing(tmp_path, fake_openai, "open", [RuntimeError("boom")]) as (svc, ch):
        await ch.inject("hello")
        await svc.idle()
        assert ch.texts() == ["echo: hello"]


async def test_a_turn_that_fails_twice_is_told_and_settled(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    async with failing(
        tmp_path, fake_openai, "open", [RuntimeError("boom"), RuntimeError("boom again")]
    ) as (svc, ch):
        await ch.inject("hello", event_id="poison")
        await svc.idle()
        assert ch.texts() == [texts.TURN_FAILED]
        assert await state_of(svc, stored("poison")) == (State.failed, "failed twice", True)
        assert svc.app is not None
        assert (
            svc.app.metrics.value(
                "antler_deliveries_given_up_total", channel="test", reason="failed twice"
            )
            == 1
        )


async def test_a_definitive_refusal_is_recorded_with_its_reason(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    async with failing(tmp_path, fake_openai, "finish", [ChannelError("chat not found")]) as (
        svc,
        ch,
    ):
        await ch.inject("hello", event_id="gone")
        await svc.idle()
        assert await state_of(svc, stored("gone")) == (State.failed, "chat not found", False)


async def test_restart_gives_up_on_a_message_that_failed_twice(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    journal, msg = await started(tmp_path, stored("crashy"))
    await journal.start(msg)  # two runs, each ended by a crash
    async with harness(tmp_path, fake_openai) as svc:
        await svc.idle()
        assert chan(svc).texts() == [texts.TURN_FAILED]
        assert await state_of(svc, msg) == (State.failed, "failed twice", True)
    assert fake_openai.requests == []


async def test_restart_answers_a_running_message_in_its_reply(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    journal, msg = await started(tmp_path, stored("cut", "ping"))
    await journal.keep_handle(msg, {"id": 77})
    async with harness(tmp_path, fake_openai) as svc:
        await svc.idle()
        ch = chan(svc)
        assert ch.of("open") == []  # no second reply
        first = ch.calls[0]
        assert (first.kind, first.reply) == ("update", 77)
        assert first.doc is not None
        assert first.doc.note == texts.ANSWERING_AGAIN
        finals = [(c.kind, c.reply, c.text) for c in ch.of("finish")]
        assert finals == [("finish", 77, "echo: ping")]
        assert (await state_of(svc, msg))[0] is State.delivered


async def test_restart_sends_only_the_rest_of_a_final(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    journal, msg = await started(tmp_path, stored("half"))
    await journal.keep_handle(msg, {"id": 5})
    await journal.delivering(msg, {"status": "done", "parts": ["part one", "part two"]})
    await journal.part_done(msg, 1, {"id": 5})
    async with harness(tmp_path, fake_openai) as svc:
        await svc.idle()
        ch = chan(svc)
        assert [(c.kind, c.text) for c in ch.calls] == [("continuation", "part two")]
        assert (await state_of(svc, msg))[0] is State.delivered
    assert fake_openai.requests == []
