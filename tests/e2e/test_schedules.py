"""Schedules end to end: recording channel → bus → dispatcher → agent (fake OpenAI) → channel,
with the scheduler on a virtual clock."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from bot import i18n, texts
from bot.app import App
from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")


def harness(
    tmp_path: Path, fake: FakeOpenAI, clock: VirtualClock, **schedules: object
) -> ServiceHarness:
    return ServiceHarness(
        tmp_path,
        fake,
        {"test": {"enabled": True}},
        schedule_clock=clock,
        schedules={"default_timezone": "Europe/Berlin", **schedules},
    )


def chan(svc: ServiceHarness) -> RecordingChannel:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    return channel


def app(svc: ServiceHarness) -> App:
    assert svc.app is not None
    return svc.app


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(time.time(), sleep_moves=False)


async def test_schedule_by_command_runs_through_the_agent_at_its_time(
    tmp_path: Path, fake_openai: FakeOpenAI, clock: VirtualClock
) -> None:
    async with harness(tmp_path, fake_openai, clock) as svc:
        ch = chan(svc)
        await ch.inject("/schedule in 2h remind me to call Ann")
        await ch.inject("/status")
        await svc.idle()
        assert ch.texts()[0].startswith("Scheduled #1: once, ")
        assert "Next scheduled run: #1 once" in ch.texts()[1]
        clock.advance(7200 - 60)
        await svc.fire_schedules()
        assert fake_openai.requests == []
        clock.advance(60)
        await svc.fire_schedules()
        await svc.fire_schedules()
    assert len(fake_openai.requests) == 1
    assert FakeOpenAI.user_texts(fake_openai.requests[0])[-1].endswith("remind me to call Ann")
    assert "scheduled task #1" in str(fake_openai.requests[0].body["messages"])
    finals = ch.of("finish")
    assert len(finals) == 1
    assert finals[0].text.endswith("remind me to call Ann")
    assert len(ch.of("open")) == 1
    assert ch.of("open")[0].chat == finals[-1].chat


async def test_the_agent_schedules_through_its_tool(
    tmp_path: Path, fake_openai: FakeOpenAI, clock: VirtualClock
) -> None:
    fake_openai.script(
        Reply(
            tool_calls=[
                ToolCall(
                    "schedule_task", {"when": "tomorrow 8:00", "task": "Remind u1 to call Ann"}
                )
            ]
        ),
        Reply(text="Done: I'll remind you tomorrow at 8:00."),
    )
    async with harness(tmp_path, fake_openai, clock) as svc:
        ch = chan(svc)
        await ch.inject("remind me tomorrow at 8 to call Ann")
        await svc.idle()
        tool_answer = str(fake_openai.requests[1].body["messages"][-1])
        assert "Scheduled #1: once, " in tool_answer
        assert "08:00 (Europe/Berlin)" in tool_answer
        assert ch.texts() == ["Done: I'll remind you tomorrow at 8:00."]
        schedule = await app(svc).schedules.store.get(1)
        assert schedule is not None
        assert schedule.creator.id == "u1"
        assert schedule.next_run is not None
        clock.set(schedule.next_run)
        await svc.fire_schedules()
    assert FakeOpenAI.user_texts(fake_openai.requests[2])[-1].endswith("Remind u1 to call Ann")
    assert len(ch.of("open")) == 2


async def test_list_cancel_and_timezone_commands(
    tmp_path: Path, fake_openai: FakeOpenAI, clock: VirtualClock
) -> None:
    async with harness(tmp_path, fake_openai, clock) as svc:
        ch = chan(svc)
        await ch.say(
            "/timezone America/New_York",
            "/schedule every weekday 09:00 summarise the tracker",
            "/schedule list",
        )
        await svc.idle()
        await ch.inject("/schedule cancel 1", user="someone-else")
        await ch.say(
            "/schedule pause 1", "/schedule cancel 1", "/schedule list", "/schedule nonsense"
        )
        await svc.idle()
    texts = ch.texts()
    assert texts[0] == "Time zone set to America/New_York. New scheduled tasks here use it."
    assert "every weekday at 09:00" in texts[1]
    assert "(America/New_York)" in texts[1]
    listing = ch.of("finish")[0]
    assert listing.text.startswith("Scheduled tasks in this chat:\n#1 every weekday at 09:00")
    assert listing.doc is not None
    assert [b.value for b in listing.doc.buttons] == ["/schedule pause 1", "/schedule cancel 1"]
    assert "Only the person who created #1" in texts[3]
    assert texts[4:7] == [
        "Scheduled task #1 paused.",
        "Scheduled task #1 cancelled.",
        "No scheduled tasks in this chat. /schedule WHEN TASK creates one.",
    ]
    assert texts[7].startswith("I could not read the time.")


async def test_a_due_run_is_answered_once_across_a_restart(
    tmp_path: Path, fake_openai: FakeOpenAI, clock: VirtualClock
) -> None:
    fake_openai.script(Reply(text="the report is long " * 10, stall_after=2))
    svc = harness(tmp_path, fake_openai, clock)
    await svc.start()
    ch = chan(svc)
    await ch.inject("/schedule in 1h write the report")
    await svc.idle()
    clock.advance(3600)
    await app(svc).schedules.scheduler.tick()
    await fake_openai.wait_requests(1)
    await svc.stop()  # the run is cut off mid-answer
    fake_openai.release()
    await svc.start()
    ch2 = chan(svc)
    await svc.idle()
    await svc.fire_schedules()
    clock.advance(3600)
    await svc.fire_schedules()
    await svc.stop()
    done = [c for c in ch2.of("finish") if c.doc is not None and c.doc.status == "done"]
    assert len(done) == 1
    assert done[0].text.endswith("write the report")
    assert len(fake_openai.requests) == 2  # the cut-off run and its one resumption


async def test_fresh_thread_per_run(
    tmp_path: Path, fake_openai: FakeOpenAI, clock: VirtualClock
) -> None:
    async with harness(tmp_path, fake_openai, clock) as svc:
        ch = chan(svc)
        await ch.inject("/schedule every hour --fresh hourly report")
        await ch.inject("/schedule every hour same-thread report")
        await svc.idle()
        for _ in range(2):
            clock.advance(3600)
            await svc.fire_schedules()
    by_task: dict[str, list[int]] = {}
    for request in fake_openai.requests:
        users = FakeOpenAI.user_texts(request)
        by_task.setdefault(users[-1].split()[-2], []).append(len(users))
    assert by_task["hourly"] == [1, 1]  # each run starts a new thread
    assert by_task["same-thread"] == [1, 2]  # runs build on the conversation's thread
    assert len(ch.of("finish")) == 4


@pytest.mark.parametrize(
    ("option", "runs", "notice"),
    [
        ("", 1, "while I was offline; running it now"),
        ("--skip-missed ", 0, "while I was offline and was skipped"),
    ],
)
async def test_runs_missed_while_down_follow_the_policy_and_the_chat_is_told(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    clock: VirtualClock,
    option: str,
    runs: int,
    notice: str,
) -> None:
    svc = harness(tmp_path, fake_openai, clock)
    await svc.start()
    await chan(svc).inject(f"/schedule every hour {option}stand up and stretch")
    await svc.idle()
    await svc.stop()
    clock.advance(3 * 3600 + 900)  # down through three runs
    await svc.start()
    ch = chan(svc)
    await svc.fire_schedules()
    await svc.fire_schedules()
    await svc.stop()
    assert len(fake_openai.requests) == runs
    notices = ch.of("text")
    assert len(notices) == 1
    assert notice in notices[0].text
    assert len(ch.of("finish")) == runs


async def test_the_missed_run_notice_speaks_the_owners_language(
    tmp_path: Path, fake_openai: FakeOpenAI, clock: VirtualClock
) -> None:
    svc = harness(tmp_path, fake_openai, clock)
    await svc.start()
    await chan(svc).inject("/lang zh")  # the schedule's owner chose Chinese
    await chan(svc).inject("/schedule every hour stand up and stretch")
    await svc.idle()
    await svc.stop()
    clock.advance(3 * 3600 + 900)
    await svc.start()
    ch = chan(svc)
    await svc.fire_schedules()
    await svc.fire_schedules()
    await svc.stop()
    (notice,) = ch.of("text")
    with i18n.use("zh_CN"):
        expected = texts.schedule_ran_late(1, "DUE").split("DUE")[0]
    assert notice.text.startswith(expected), notice.text  # not the scheduler's English
    assert re.search(r"\d{4}年\d{1,2}月\d{1,2}日", notice.text)  # its date, the Chinese way
    assert "offline" not in notice.text
