"""The channel contract: what every platform does for the service, through its real SDK and
fake server. Parametrized over the platforms in conftest.DRIVERS."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot import texts
from tests.channels.contract.driver import OUTPUTS, Driver
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.harness import ServiceHarness, answered

STREAMED = "Streaming works: " + "token " * 25


async def test_a_reply_opens_streams_and_finishes(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text=STREAMED, tokens_per_second=50))
    driver.send("hello", "e1")
    await answered(service, fake_openai, 1)
    assert driver.shown() == [STREAMED.strip()]
    assert driver.updates() >= 1  # the text showed before the final
    assert driver.violations() == []


async def test_a_long_answer_continues_in_more_messages(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    paragraphs = driver.max_part * 3 // 2 // 700 + 1  # one and a half messages' worth
    text = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum " * 57 for i in range(paragraphs))
    fake_openai.script(Reply(text=text))
    driver.send("write a lot", "e1")
    await answered(service, fake_openai, 1)
    parts = driver.shown()
    assert len(parts) >= 2
    assert all(len(p) <= driver.max_part for p in parts)
    assert " ".join(parts).split() == text.split()
    assert driver.violations() == []


async def test_a_file_in_reaches_the_agent(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    driver.send_file("read this", "notes.txt", b"secret notes")
    await answered(service, fake_openai, 1)
    assert "notes.txt" in json.dumps(fake_openai.requests[0].body)
    saved = [p for p in service.data_dir.rglob("notes.txt") if "uploads" in p.parts]
    assert [p.read_bytes() for p in saved] == [b"secret notes"]


async def test_a_file_out_follows_the_answer(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    report = f"{OUTPUTS}/report.md"
    fake_openai.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": report, "content": "# Report\nok"})]),
        Reply(tool_calls=[ToolCall("present_files", {"filepaths": [report]})]),
        Reply(text="Here is your report."),
    )
    driver.send("write a report", "e1")
    await answered(service, fake_openai, 3)
    assert driver.files_out() == {"report.md": b"# Report\nok"}
    assert driver.shown()[-1].endswith("Here is your report.")


async def test_buttons_are_shown_and_a_press_answers(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(
        Reply(
            tool_calls=[
                ToolCall(
                    "ask_clarification", {"question": "Which format?", "options": ["CSV", "Excel"]}
                )
            ]
        )
    )
    driver.send("export the data", "e1")
    await answered(service, fake_openai, 1)
    assert driver.buttons() == ["CSV", "Excel"]
    driver.press("Excel")
    await answered(service, fake_openai, 2)
    assert FakeOpenAI.user_texts(fake_openai.requests[1])[-1].endswith("Excel")
    assert driver.shown()[-1].endswith("echo: Excel")


async def test_a_message_behind_a_running_reply_gets_a_queued_notice(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="slow " * 20, tokens_per_second=40))
    driver.send("first", "e1")
    await fake_openai.wait_requests(1, timeout=20)
    driver.send("second", "e2")
    await answered(service, fake_openai, 2)
    assert driver.saw_queued()
    # the notice became the second reply, below the first: answers in the order asked
    assert driver.shown() == [("slow " * 20).strip(), "echo: second"]


async def test_a_429_on_the_final_is_waited_out(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    driver.rate_limit_final()
    driver.send("hello", "e1")
    await answered(service, fake_openai, 1)
    assert driver.rate_limits_served() == 1
    assert driver.shown() == ["echo: hello"]
    assert driver.violations() == []  # nothing reached the platform before the retry-after


async def test_a_commands_answer_waits_out_429s(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    driver.rate_limit_text(times=2)
    driver.send("/new", "e1")
    for _ in range(200):  # the 429s are waited out (about two seconds), then it shows
        if driver.shown():
            break
        await asyncio.sleep(0.05)
    await service.idle(timeout=20)
    assert driver.rate_limits_served() == 2
    (shown,) = driver.shown()  # the answer, once
    assert shown == texts.NEW_STARTED
    assert driver.violations() == []
    assert fake_openai.requests == []


async def test_a_redelivered_event_is_answered_once(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    driver.send("only once", "e1")
    await answered(service, fake_openai, 1)
    driver.redeliver("e1")
    driver.send("next", "e2")
    await answered(service, fake_openai, 2)
    assert driver.shown() == ["echo: only once", "echo: next"]
    assert len(fake_openai.requests) == 2


def needs_edits(driver: Driver) -> None:
    if not driver.edits:
        pytest.skip(f"{driver.name} delivers no edits of messages (docs/channels/README.md)")


async def test_an_edited_answered_message_is_answered_again_in_its_reply(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    needs_edits(driver)
    driver.send("hello", "e1")
    await answered(service, fake_openai, 1)
    driver.edit("e1", "goodbye")
    await answered(service, fake_openai, 2)
    driver.edit("e1", "goodbye", again=True)  # the same edit delivered again: one edit
    driver.send("next", "e2")
    await answered(service, fake_openai, 3)
    first, second = driver.shown()
    assert first.startswith("echo: goodbye")
    assert texts.EDIT_ANSWERED in first
    assert second == "echo: next"
    assert len(fake_openai.requests) == 3
    assert FakeOpenAI.user_texts(fake_openai.requests[1])[-2:] == ["hello", "goodbye"]
    assert driver.violations() == []


async def test_an_edit_of_the_running_message_is_answered_in_the_same_reply(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    needs_edits(driver)
    fake_openai.script(Reply(text="slow " * 30, tokens_per_second=20))
    driver.send("first", "e1")
    await fake_openai.wait_requests(1, timeout=20)
    driver.edit("e1", "first, edited")
    await answered(service, fake_openai, 2)
    (shown,) = driver.shown()
    assert shown.startswith("echo: first, edited")
    assert texts.EDIT_ANSWERED in shown
    assert driver.violations() == []


async def test_the_persons_message_shows_working_then_answered(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    if driver.done_reaction is None:
        pytest.skip(f"{driver.name} shows no status reactions (docs/channels/README.md)")
    fake_openai.script(Reply(text="slow " * 30, tokens_per_second=20))
    driver.send("hello", "e1")
    await fake_openai.wait_requests(1, timeout=20)
    working: list[str] = []
    for _ in range(500):  # the working reaction goes out beside the reply
        if working := driver.reactions("e1"):
            break
        await asyncio.sleep(0.01)
    await answered(service, fake_openai, 1)
    for _ in range(500):
        if driver.reactions("e1") == [driver.done_reaction]:
            break
        await asyncio.sleep(0.01)
    assert working
    assert working != [driver.done_reaction]  # while it worked, it showed working
    assert driver.reactions("e1") == [driver.done_reaction]
    assert driver.violations() == []


async def test_a_voice_note_is_transcribed_and_answered(
    driver: Driver, service: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    if not driver.audio:
        pytest.skip(f"{driver.name}: no voice notes in its driver")
    fake_openai.script_transcripts("book a table for two")
    driver.send_audio("note.ogg", b"OggS" + bytes(500), 3, recognition="book a table for two")
    await answered(service, fake_openai, 1)
    assert FakeOpenAI.user_texts(fake_openai.requests[0])[-1].startswith("book a table for two")
    (shown,) = driver.shown()
    assert "echo: book a table for two" in shown
    if driver.own_recognition:  # the platform's own text is the message: nothing transcribed
        assert fake_openai.transcriptions == []
        return
    assert [t["size"] for t in fake_openai.transcriptions] == [504]
    assert shown.startswith("🎤")
