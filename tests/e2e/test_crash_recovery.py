"""Crash safety, tried from outside: `antler serve` as a subprocess with the real
python-telegram-bot against the fake Telegram, SIGKILLed around the final, restarted on the same
data dir. Every message ends with exactly one complete visible answer and no orphaned partial.

Five conversations are each brought to their own point of the answer, then ONE kill and ONE
restart settle them all (a service start costs seconds of CPU; ten of them were a tenth of the
suite):

- group -100, mid-stream (edits shown, the model's stream stalled): asked again, answered in the
  same message;
- DM 555, the final sendMessage acted on, its answer not back: not sent again;
- group -101, the final edit acted on, its answer not back: replayed harmlessly;
- DM 556, just after the final went through: nothing more;
- DM 557, the second of three continuation parts in flight: only the rest is sent;
- DM 558, a second message while the first reply streams as a draft: the draft became a message
  and the journal knew it before the queued notice went out; killed with the notice in flight,
  the restart finishes the first answer in that message (no copy beside it), answers below it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.service_process import ServiceProcess, wait_until
from tests.fakes.openai_server import FakeOpenAI, text_of
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import TOKEN, FakeTelegram

FULL = "The complete answer: " + " ".join(f"word{i}" for i in range(40)) + "."
PARAGRAPHS = [f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 40 for i in range(8)]
LONG = "\n\n".join(PARAGRAPHS)  # ~9,000 characters: three messages
MID_STREAM, FINAL_SENT, FINAL_EDITED, AFTER_FINAL, CONTINUED, BEHIND = (
    -100,
    555,
    -101,
    556,
    557,
    558,
)
ASKED = {  # chat -> what the user writes there (first)
    MID_STREAM: "@antler_bot tell me",
    FINAL_SENT: "hello",
    FINAL_EDITED: "@antler_bot hello there",
    AFTER_FINAL: "hi",
    CONTINUED: "write a lot",
    BEHIND: "first",
}
SECOND = "second"  # in BEHIND, while "first" streams
STALLING = (ASKED[MID_STREAM], ASKED[BEHIND])  # streams that stall until the kill


class Model:
    """The fake model's answers by question; counts the requests each question got."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        last = text_of(users[-1].get("content")) if users else ""
        questions = [*ASKED.values(), SECOND]
        question = next(q for q in questions if last.endswith(q.removeprefix("@antler_bot ")))
        with self._lock:
            self.asked[question] += 1
            first = self.asked[question] == 1
        if question in STALLING and first:
            return Reply(text=FULL, tokens_per_second=50, stall_after=6)
        if question == SECOND:
            return Reply(text=f"echo: {SECOND}")
        if question == ASKED[FINAL_EDITED]:
            return Reply(text=FULL, tokens_per_second=100)
        return Reply(text=LONG if question == ASKED[CONTINUED] else FULL)


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
    return len(states) == len(ASKED) + 1 and all(s in ("delivered", "failed") for s in states)


def in_chat(chat: int, text: str) -> Any:
    return lambda body: body.get("chat_id") == chat and text in body.get("text", "")


def edits(telegram: FakeTelegram, chat: int) -> list[str]:
    calls = telegram.calls_of("editMessageText")
    return [c.body.get("text", "") for c in calls if c.body.get("chat_id") == chat]


def drafts(telegram: FakeTelegram, chat: int) -> list[str]:
    calls = telegram.calls_of("sendMessageDraft")
    return [c.body.get("text", "") for c in calls if c.body.get("chat_id") == chat]


def sends(telegram: FakeTelegram, chat: int) -> int:
    return sum(c.body.get("chat_id") == chat for c in telegram.calls_of("sendMessage"))


def test_one_kill_at_five_points_of_the_answer_then_each_answered_once(
    service: ServiceProcess, fake_openai: FakeOpenAI, telegram: FakeTelegram
) -> None:
    model = Model()
    fake_openai.responder = model
    held = {
        FINAL_SENT: telegram.hold("sendMessage", in_chat(FINAL_SENT, FULL)),
        FINAL_EDITED: telegram.hold("editMessageText", in_chat(FINAL_EDITED, FULL)),
        AFTER_FINAL: telegram.hold("sendMessage", in_chat(AFTER_FINAL, FULL)),
        CONTINUED: telegram.hold("sendMessage", in_chat(CONTINUED, "Paragraph 3")),
        BEHIND: telegram.hold("sendMessage", in_chat(BEHIND, "Queued"), act=False),
    }
    start(service, telegram)
    for chat, text in ASKED.items():
        telegram.push_message(chat, text)
    wait_until(lambda: edits(telegram, MID_STREAM), 30, "a streamed edit")
    wait_until(lambda: drafts(telegram, BEHIND), 30, "a streamed draft")
    telegram.push_message(BEHIND, SECOND)
    for chat, hold in held.items():
        assert hold.reached.wait(30), f"chat {chat} never reached its kill point"
    held[AFTER_FINAL].release()
    wait_until(lambda: telegram.sent_texts(AFTER_FINAL) == [FULL], 10, "the final through")
    service.kill()
    start(service, telegram)
    wait_until(lambda: settled(service), 30, "the journal to settle")
    assert journal_states(service) == ["delivered"] * (len(ASKED) + 1)

    # mid-stream: asked again, answered in the one message already shown
    wait_until(lambda: telegram.shown_texts(MID_STREAM) == [FULL], 30, "the full answer")
    assert any("answering again" in text for text in edits(telegram, MID_STREAM))
    assert sends(telegram, MID_STREAM) == 1
    assert model.asked[ASKED[MID_STREAM]] == 2
    # the final send the service never heard back about: the user has it once
    assert telegram.sent_texts(FINAL_SENT) == [FULL]
    # the final edit replayed: one message, the whole answer
    assert telegram.shown_texts(FINAL_EDITED) == [FULL]
    assert sends(telegram, FINAL_EDITED) == 1
    # just after the final: nothing more
    assert telegram.sent_texts(AFTER_FINAL) == [FULL]
    # continuation: the parts out before the kill, the one in flight, the rest; each once
    shown = "".join(telegram.shown_texts(CONTINUED))
    for paragraph in PARAGRAPHS:
        assert shown.count(paragraph[:20]) == 1, paragraph[:20]
    # behind a draft: the first answer in the message the draft became, once; the notice on its
    # way at the kill (Telegram acted on it, the service never heard back) stays; then answer 2
    queued = "Queued: I'll answer after the current reply."
    assert telegram.shown_texts(BEHIND) == [FULL, queued, f"echo: {SECOND}"]
    assert sends(telegram, BEHIND) == 3  # the partial, the notice, answer 2
    # nothing but the stalled streams was asked twice
    assert all(n == (2 if q in STALLING else 1) for q, n in model.asked.items()), model.asked
