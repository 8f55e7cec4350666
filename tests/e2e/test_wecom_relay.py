"""WeCom across three `antler serve` workers (subprocesses on one PostgreSQL and one Redis) with
the fake WeCom: one worker holds the bot's long connection, and the answers the other workers
write reach the chat through it (the send relay), each exactly once — also when the holder is
killed (SIGKILL) while those answers are streaming and another worker takes the connection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cluster.partitions import partition_of
from tests.e2e.service_process import wait_until
from tests.e2e.workers import Worker, own_database, shared_out
from tests.fakes.openai_server import FakeOpenAI, echo_responder
from tests.fakes.openai_wire import Reply
from tests.fakes.wecom_payloads import BOT_ID, SECRET, shown_text, text_body
from tests.fakes.wecom_server import FakeWeCom

PARTITIONS = 6
LEASE_SECONDS = 3


class WeComWorker(Worker):
    def role(self) -> str:
        return str(self.health()["channels"]["wecom"].get("connection"))


@pytest.fixture
def wecom() -> Iterator[FakeWeCom]:
    fake = FakeWeCom().start()
    yield fake
    fake.stop()


@pytest.fixture
def cluster(
    tmp_path: Path, fake_openai: FakeOpenAI, wecom: FakeWeCom, pg_server: str, redis_bus: Any
) -> Iterator[list[WeComWorker]]:
    channel = {
        "enabled": True,
        "bot_id": BOT_ID,
        "secret": SECRET,
        "ws_url": wecom.ws_url,
        "ca_file": wecom.ca_file,
        "heartbeat_seconds": 1,
        "stream_interval": 0.3,
    }
    redis = {**redis_bus["redis"], "partitions": PARTITIONS, "lease_seconds": LEASE_SECONDS}
    with own_database(pg_server) as dsn:
        storage = {"backend": "postgres", "postgres": {"dsn": dsn}}
        group = []
        for i in range(3):
            (tmp_path / f"w{i}").mkdir()
            group.append(
                WeComWorker(
                    tmp_path / f"w{i}",
                    fake_openai.base_url,
                    {"wecom": channel},
                    storage={**storage, "data_dir": str(tmp_path / "data")},
                    bus={**redis_bus, "redis": redis},
                    agent={"title": {"enabled": False}, "memory": {"enabled": False}},
                )
            )
        try:
            for w in group:
                w.start()
            for w in group:
                wait_until(w.ready, 60, "a worker to start")
            wait_until(lambda: sum(w.role() == "held" for w in group) == 1, 30, "one holder")
            shared_out(group, PARTITIONS)
            yield group
        finally:
            for w in group:
                w.stop()


def chats_of(owner: Worker, count: int, tag: str) -> list[str]:
    mine = set(owner.partitions())
    found = (f"grp-{tag}-{n}" for n in range(1000))
    return [c for c in found if partition_of(f"wecom:{c}", PARTITIONS) in mine][:count]


def answers(wecom: FakeWeCom, chat: str, text: str) -> int:
    """Messages in `chat` showing the answer to `text` (a stream counts by its last frame)."""
    return sum(f"echo: {text}" in (shown_text(m) or "") for m in wecom.chat_messages(chat))


def slow(body: dict[str, Any]) -> Reply:
    """The echo after a few seconds of streamed words: still streaming when the holder dies."""
    echo = echo_responder(body).text
    return Reply(text=" ".join(f"w{i}" for i in range(30)) + f" {echo}", tokens_per_second=8)


def test_answers_written_on_other_workers_reach_the_chat_once_through_a_holder_kill(
    cluster: list[WeComWorker], wecom: FakeWeCom, fake_openai: FakeOpenAI
) -> None:
    holder = next(w for w in cluster if w.role() == "held")
    others = [w for w in cluster if w is not holder]
    asked = {chat: f"hello {chat}" for w in others for chat in chats_of(w, 2, "a")}
    asked.update({chat: f"hello {chat}" for chat in chats_of(holder, 1, "a")})
    for chat, text in asked.items():
        wecom.push_message(text_body(text, chatid=chat))
    wait_until(lambda: all(answers(wecom, c, t) == 1 for c, t in asked.items()), 30, "all answered")

    fake_openai.responder = slow  # answers the other workers write, streaming as it dies
    streaming = {chat: f"story {chat}" for w in others for chat in chats_of(w, 2, "b")}
    for chat, text in streaming.items():
        wecom.push_message(text_body(text, chatid=chat))
    wait_until(
        lambda: all(
            any("w1" in (shown_text(m) or "") for m in wecom.chat_messages(c)) for c in streaming
        ),
        30,
        "every answer streaming",
    )
    holder.kill()
    wait_until(lambda: any(w.role() == "held" for w in others), 30, "a survivor connected")
    fake_openai.responder = echo_responder
    later = chats_of(others[0], 1, "c")[0]
    wecom.push_message(text_body("and later", chatid=later))
    asked.update(streaming)
    asked[later] = "and later"
    wait_until(lambda: all(answers(wecom, c, t) >= 1 for c, t in asked.items()), 40, "all answered")
    assert {c: answers(wecom, c, t) for c, t in asked.items()} == dict.fromkeys(asked, 1)
    assert not wecom.violations
    assert any("relayed" in w.output() for w in others)  # (the standby's start line)
