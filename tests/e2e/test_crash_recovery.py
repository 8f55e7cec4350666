"""Crash safety, tried from outside: `antler serve` as a subprocess with the real
python-telegram-bot against the fake Telegram, SIGKILLed around the final, restarted on the same
data dir. Every message ends with exactly one complete visible answer and no orphaned partial."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.service_process import ServiceProcess, wait_until
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import TOKEN, FakeTelegram

FULL = "The complete answer: " + " ".join(f"word{i}" for i in range(40)) + "."
GROUP, DM = -100, 555


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    server = FakeTelegram().start()
    yield server
    server.stop()


@pytest.fixture
def service(
    tmp_path: Path, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> Iterator[ServiceProcess]:
    tg = {"enabled": True, "bot_token": TOKEN, "api_base": telegram.api_base, "poll_timeout": 1}
    svc = ServiceProcess(tmp_path, fake_openai.base_url, {"telegram": tg})
    yield svc
    svc.stop()


def start(svc: ServiceProcess, telegram: FakeTelegram) -> None:
    polls = len(telegram.calls_of("getUpdates"))
    svc.start()
    wait_until(lambda: len(telegram.calls_of("getUpdates")) > polls, 60, "the service to poll")


def journal_states(svc: ServiceProcess) -> list[str]:
    with sqlite3.connect(svc.dir / "data" / "antler.db") as db:
        return [state for (state,) in db.execute("SELECT state FROM journal")]


def settled(svc: ServiceProcess) -> bool:
    states = journal_states(svc)
    return bool(states) and all(s in ("delivered", "failed") for s in states)


def test_kill_mid_stream_continues_in_the_message_already_shown(
    service: ServiceProcess, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> None:
    fake_openai.script(Reply(text=FULL, tokens_per_second=50, stall_after=6), Reply(text=FULL))
    start(service, telegram)
    telegram.push_message(GROUP, "@antler_bot tell me")
    wait_until(lambda: telegram.calls_of("editMessageText"), 20, "a streamed edit")
    service.kill()
    start(service, telegram)
    wait_until(lambda: telegram.shown_texts(GROUP) == [FULL], 30, "the full answer")
    wait_until(lambda: settled(service), 10, "the journal to settle")
    assert journal_states(service) == ["delivered"]
    edits = [c.body.get("text", "") for c in telegram.calls_of("editMessageText")]
    assert any("answering again" in text for text in edits)
    assert len(telegram.calls_of("sendMessage")) == 1  # one message, edited throughout
    assert len(fake_openai.requests) == 2


def kill_at_the_final(
    service: ServiceProcess,
    telegram: FakeTelegram,
    method: str,
    chat: int,
    text: str,
    *,
    release: bool = False,
) -> None:
    """Ask in `chat`, hold the final (`method` with the whole answer) once Telegram has acted on
    it, SIGKILL the service there (or just after letting the answer through), start it again
    and wait until the journal has settled the message."""
    final = telegram.hold(method, lambda body: body.get("text") == FULL)
    start(service, telegram)
    telegram.push_message(chat, text)
    assert final.reached.wait(30)
    if release:
        final.release()
    service.kill()
    start(service, telegram)
    wait_until(lambda: settled(service), 30, "the journal to settle")


def test_kill_during_the_final_send_does_not_answer_twice(
    service: ServiceProcess, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> None:
    fake_openai.script(Reply(text=FULL))
    # the user has the answer; the service never heard back
    kill_at_the_final(service, telegram, "sendMessage", DM, "hello")
    assert telegram.sent_texts(DM) == [FULL]
    assert len(fake_openai.requests) == 1
    assert journal_states(service) == ["delivered"]


def test_kill_during_the_final_edit_replays_it_harmlessly(
    service: ServiceProcess, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> None:
    fake_openai.script(Reply(text=FULL, tokens_per_second=100))
    kill_at_the_final(service, telegram, "editMessageText", GROUP, "@antler_bot hello")
    assert telegram.shown_texts(GROUP) == [FULL]
    assert len(telegram.calls_of("sendMessage")) == 1
    assert len(fake_openai.requests) == 1


def test_kill_just_after_the_final(
    service: ServiceProcess, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> None:
    fake_openai.script(Reply(text=FULL))
    kill_at_the_final(service, telegram, "sendMessage", DM, "hello", release=True)
    assert telegram.sent_texts(DM) == [FULL]
    assert len(fake_openai.requests) == 1


def test_kill_between_continuation_parts_sends_only_the_rest(
    service: ServiceProcess, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> None:
    paragraphs = [f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 40 for i in range(8)]
    long = "\n\n".join(paragraphs)  # ~9,000 characters: three messages
    fake_openai.script(Reply(text=long))
    second = telegram.hold("sendMessage", lambda body: "Paragraph 3" in body.get("text", ""))
    start(service, telegram)
    telegram.push_message(DM, "write a lot")
    assert second.reached.wait(30)
    service.kill()
    start(service, telegram)
    wait_until(lambda: settled(service), 30, "the journal to settle")
    shown = "".join(telegram.shown_texts(DM))
    assert len(fake_openai.requests) == 1
    for paragraph in paragraphs:  # parts out before the kill, the one in flight, the rest
        assert shown.count(paragraph[:20]) == 1, paragraph[:20]
