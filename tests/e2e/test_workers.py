"""Workers as subprocesses (`antler serve` × 3) on one PostgreSQL and one Redis with the fake
Telegram: one live getUpdates connection; 1,000 messages over 200 conversations each answered
once and in order; /stop through a worker that is not writing the reply; failover after kill -9.

Telegram's bot-wide budget (30 sends a second) would make 1,000 answers take over half a
minute on its own, so here the bot is one Telegram allows more (`messages_per_second: 300`, as
with paid broadcasts) and the fake holds it to that: every visible call is counted against it."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator

import pytest

from bot import texts
from tests.e2e.service_process import wait_until
from tests.e2e.workers import Worker, chat_owned_by, worker_group
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram

CHATS, PER_CHAT = 200, 5  # the figure: 1,000 messages over 200 conversations
MESSAGES_PER_SECOND = 300.0
LEASE_SECONDS = 10  # the default: on a busy 2-core machine a worker's loop can stall for seconds,
# and a shorter lease would hand partitions to and fro under the load (failover takes longer)


def shown(telegram: FakeTelegram) -> dict[int, list[str]]:
    """chat → the texts of its messages in message-id order (one look at the fake)."""
    found: dict[int, list[str]] = defaultdict(list)
    for (chat, _), text in sorted(telegram.messages.items()):
        found[chat].append(text)
    return found


def answered(telegram: FakeTelegram, expected: dict[int, list[str]]) -> int:
    """How many chats show exactly their expected answers, in order."""
    found = shown(telegram)
    return sum(found[chat] == texts for chat, texts in expected.items())


def unanswered(telegram: FakeTelegram, expected: dict[int, list[str]]) -> str:
    found = shown(telegram)
    wrong = {chat: found[chat] for chat, texts in expected.items() if found[chat] != texts}
    return f"{len(wrong)} conversations not answered as asked, e.g. {list(wrong.items())[:3]}"


def finished_order(telegram: FakeTelegram, finals: set[str]) -> dict[int, list[str]]:
    """chat → the answers among `finals` in the order they were first shown whole (sent, or
    edited into a queued notice; partial texts streamed before are not answers)."""
    found: dict[int, list[str]] = defaultdict(list)
    for c in telegram.calls_of("sendMessage", "editMessageText"):
        text = c.body.get("text", "")
        shown = found[int(c.body["chat_id"])]
        if text in finals and text not in shown:
            shown.append(text)
    return found


def edits(telegram: FakeTelegram, chat: int) -> list[str]:
    return [
        c.body.get("text", "")
        for c in telegram.calls_of("editMessageText")
        if c.body.get("chat_id") == chat
    ]


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    with FakeTelegram(messages_per_second=MESSAGES_PER_SECOND).start() as server:
        yield server


group = worker_group(bus={"lease_seconds": LEASE_SECONDS})


def test_three_workers_in_order_stop_through_any_and_failover(
    group: list[Worker], telegram: FakeTelegram, fake_openai: FakeOpenAI
) -> None:
    # many conversations at once: each message answered once, in order in its conversation
    chats = [1000 + c for c in range(CHATS)]
    for i in range(PER_CHAT):
        for chat in chats:
            telegram.push_message(chat, f"chat {chat} message {i}")
    expected = {c: [f"echo: chat {c} message {i}" for i in range(PER_CHAT)] for c in chats}
    deadline = time.monotonic() + 240
    while answered(telegram, expected) < CHATS:  # each once, nothing else
        assert time.monotonic() < deadline, unanswered(telegram, expected)
        time.sleep(0.5)  # (looking costs the fakes' CPU: not too often)
    order = finished_order(telegram, {t for texts in expected.values() for t in texts})
    assert all(order[c] == expected[c] for c in chats)  # finished in order, too
    assert len(fake_openai.requests) == CHATS * PER_CHAT
    assert not [v for v in telegram.violations if "over the bot" in v]  # the bot-wide budget
    wait_until(
        lambda: all(w.health()["bus"]["in_flight"] == 0 for w in group),
        10,
        "every stream entry acknowledged",
    )
    holder = next(w for w in group if w.holds_connection())
    others = [w for w in group if w is not holder]
    # /stop received by the connection holder for a reply another worker is writing
    chat = chat_owned_by(others[0], range(-100, -200, -1))
    fake_openai.reset()
    fake_openai.script(Reply(text="a long story " * 30, tokens_per_second=20, stall_after=4))
    telegram.push_message(chat, "@antler_bot tell me a story")
    wait_until(lambda: edits(telegram, chat), 20, "the reply streaming")
    telegram.push_message(chat, "/stop")
    wait_until(lambda: texts.stopped(1) in telegram.sent_texts(chat), 20, "/stop answered")
    wait_until(
        lambda: any(t.endswith(texts.STOPPED) for t in telegram.shown_texts(chat)),
        20,
        "the reply marked stopped",
    )
    fake_openai.reset()
    # the holder dies mid-reply in a conversation it owns: another worker takes the connection
    # and the partition, finishes the reply in the message already shown, answers what came later
    chat = chat_owned_by(holder, range(-300, -400, -1))
    full = "The complete answer: " + " ".join(f"word{i}" for i in range(40)) + "."
    fake_openai.script(Reply(text=full, tokens_per_second=50, stall_after=6), Reply(text=full))
    telegram.push_message(chat, "@antler_bot tell me")
    wait_until(lambda: edits(telegram, chat), 20, "a streamed edit")
    holder.kill()
    telegram.push_message(chat, "@antler_bot and then?")
    wait_until(lambda: any(w.holds_connection() for w in others), 60, "a survivor connected")
    later = "echo: Ada wrote:\nand then?"  # (in a group the sender is named)
    wait_until(lambda: telegram.shown_texts(chat) == [full, later], 60, "both answered")
    assert any("answering again" in text for text in edits(telegram, chat))
    assert len(fake_openai.requests) == 3  # the reply (twice: resumed), the later message
