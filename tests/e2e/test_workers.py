"""Workers as subprocesses (`antler serve` × N) on one PostgreSQL and one Redis with the fake
Telegram: one live getUpdates connection, every message answered once and in order, failover
after kill -9, /stop through a worker that is not writing the reply.

(The issue's figure, 1,000 messages over 200 conversations on 3 workers, is run by
`python -m bench scaleout`; here 60 over 20 keep the suite's time modest.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot import texts
from tests.e2e.service_process import wait_until
from tests.e2e.workers import Worker, chat_owned_by, own_database, start_all, workers
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram


def answers(telegram: FakeTelegram, chat: int) -> list[str]:
    """The answers in `chat` in the order they were given (sent, or edited into a notice)."""
    return [
        c.body["text"]
        for c in telegram.calls_of("sendMessage", "editMessageText")
        if c.body.get("chat_id") == chat and c.body.get("text", "").startswith("echo: ")
    ]


def edits(telegram: FakeTelegram, chat: int) -> list[str]:
    return [
        c.body.get("text", "")
        for c in telegram.calls_of("editMessageText")
        if c.body.get("chat_id") == chat
    ]


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    server = FakeTelegram().start()
    yield server
    server.stop()


@pytest.fixture
def own_db(pg_server: str) -> Iterator[str]:
    with own_database(pg_server) as dsn:
        yield dsn


@pytest.fixture
def cluster(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    telegram: FakeTelegram,
    own_db: str,
    redis_bus: dict[str, Any],
) -> Iterator[list[Worker]]:
    group = workers(tmp_path, fake_openai.base_url, telegram, own_db, redis_bus, request.param)
    try:
        start_all(group)
        yield group
    finally:
        for w in group:
            w.stop()


@pytest.mark.parametrize("cluster", [2], indirect=True)
def test_two_workers_in_order_stop_through_either_and_failover(
    cluster: list[Worker], telegram: FakeTelegram, fake_openai: FakeOpenAI
) -> None:
    # many conversations at once: each message answered once, in order in its conversation
    chats = [1000 + c for c in range(20)]
    for i in range(3):
        for chat in chats:
            telegram.push_message(chat, f"chat {chat} message {i}")
    expected = {chat: [f"echo: chat {chat} message {i}" for i in range(3)] for chat in chats}
    wait_until(
        lambda: all(answers(telegram, c) == expected[c] for c in chats),
        60,
        "every message answered",
    )
    assert all(sorted(telegram.shown_texts(c)) == expected[c] for c in chats)  # no extra message
    wait_until(
        lambda: all(w.health()["bus"]["in_flight"] == 0 for w in cluster),
        10,
        "every stream entry acknowledged",
    )
    holder = next(w for w in cluster if w.holds_connection())
    other = next(w for w in cluster if w is not holder)
    # /stop received by the connection holder for a reply the other worker is writing
    chat = chat_owned_by(other, range(-100, -200, -1))
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
    # the holder dies mid-reply in a conversation it owns: the other worker takes the connection
    # and the partition, finishes the reply in the message already shown, answers what came later
    chat = chat_owned_by(holder, range(-300, -400, -1))
    full = "The complete answer: " + " ".join(f"word{i}" for i in range(40)) + "."
    fake_openai.script(Reply(text=full, tokens_per_second=50, stall_after=6), Reply(text=full))
    telegram.push_message(chat, "@antler_bot tell me")
    wait_until(lambda: edits(telegram, chat), 20, "a streamed edit")
    holder.kill()
    telegram.push_message(chat, "@antler_bot and then?")
    wait_until(other.holds_connection, 30, "the survivor to take the connection")
    later = "echo: Ada wrote:\nand then?"  # (in a group the sender is named)
    wait_until(lambda: telegram.shown_texts(chat) == [full, later], 40, "both answered")
    assert any("answering again" in text for text in edits(telegram, chat))
    assert len(fake_openai.requests) == 3  # the reply (twice: resumed), the later message
