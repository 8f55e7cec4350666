"""One budget, three workers (`antler serve` × 3 on one PostgreSQL and one Redis, the fake
Telegram and the fake model): thirty chats ask at once, the model calls overlap across the
workers, and the budget is overshot by less than one model call (the holds of
bot/cluster/spend_holds.py); every other chat gets the refusal, once."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.workers import Worker, own_database, running, workers
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram

LIMIT, CALL, CHATS = 1_000, 100, 30
USAGE = {"prompt_tokens": 80, "completion_tokens": 20, "total_tokens": CALL}
REFUSED = "The telegram channel's daily budget of 1,000 tokens is used up."


@pytest.fixture
def cluster(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    pg_server: str,
    redis_bus: dict[str, Any],
) -> Iterator[tuple[list[Worker], FakeTelegram]]:
    usage = {"budgets": [{"scope": "channel", "name": "telegram", "tokens": LIMIT}]}
    with own_database(pg_server) as dsn, FakeTelegram().start() as telegram:
        group = workers(tmp_path, fake_openai.base_url, telegram, dsn, redis_bus, 3, usage=usage)
        with running(group):
            yield group, telegram


def used(worker: Worker) -> int:
    port = re.findall(r"admin server on http://127\.0\.0\.1:(\d+)", worker.logs[-1].read_text())
    url = f"http://127.0.0.1:{port[-1]}/api/usage?group_by=channel"
    with urllib.request.urlopen(url, timeout=5) as resp:
        return int(json.loads(resp.read())["total"]["total_tokens"])


def test_three_workers_overshoot_one_budget_by_less_than_one_call(
    cluster: tuple[list[Worker], FakeTelegram], fake_openai: FakeOpenAI
) -> None:
    group, telegram = cluster
    fake_openai.responder = lambda body: Reply(text="counted", usage=USAGE, delay=0.3)
    chats = [-5000 - c for c in range(CHATS)]  # groups: their partitions spread over the workers
    for chat in chats:
        telegram.push_message(chat, f"@antler_bot hello from {chat}")

    def settled() -> dict[int, str]:
        found = {}
        for chat in chats:
            shown = " ".join(telegram.shown_texts(chat))
            if "counted" in shown or REFUSED in shown:
                found[chat] = shown
        return found

    deadline = time.monotonic() + 120
    while len(settled()) < CHATS:
        assert time.monotonic() < deadline, f"{len(settled())} of {CHATS} chats settled"
        time.sleep(0.5)
    answers = [c for c, shown in settled().items() if "counted" in shown]
    spent = used(group[0])
    assert spent == len(fake_openai.requests) * CALL  # every call counted, on any worker
    assert LIMIT <= spent < LIMIT + CALL  # the bound: less than one model call
    assert len(answers) == spent // CALL
    assert sum(REFUSED in shown for shown in settled().values()) == CHATS - len(answers)
