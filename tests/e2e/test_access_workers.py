"""Access with three workers (`antler serve` × 3 on one PostgreSQL and one Redis, the fake
Telegram): a role given through one worker's API, a /link code asked for on one worker and
spent on another, and a denied command, each answered by whichever worker owns the chat."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

from bot import texts
from tests.e2e.service_process import wait_until
from tests.e2e.workers import Worker, chat_owned_by, worker_group
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.threaded import fake_fixture

telegram = fake_fixture(FakeTelegram, "telegram")


group = worker_group(
    agent={"title": {"enabled": False}, "memory": {"debounce_seconds": 300}},
    access={"default_role": "guest"},
)


def api(worker: Worker, method: str, path: str, body: object) -> dict[str, Any]:
    port = re.findall(r"admin server on http://127\.0\.0\.1:(\d+)", worker.logs[-1].read_text())
    request = urllib.request.Request(
        f"http://127.0.0.1:{port[-1]}{path}",
        data=json.dumps(body).encode(),
        method=method,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        found: dict[str, Any] = json.loads(resp.read())
        return found


def said(telegram: FakeTelegram, user: int, text: str) -> str:
    """`user` sends `text` in their DM; the one new answer."""
    before = len(telegram.sent_texts(user))
    telegram.push_message(user, text, user_id=user)
    wait_until(lambda: len(telegram.sent_texts(user)) > before, 30, f"an answer to {text!r}")
    return telegram.sent_texts(user)[-1]


def test_roles_and_links_hold_on_every_worker(group: list[Worker], telegram: FakeTelegram) -> None:
    first, second, third = (
        chat_owned_by(w, range(start, start + 100))
        for w, start in zip(group, (100, 200, 300), strict=True)
    )
    person = f"telegram:{first}"
    assert api(group[2], "PUT", f"/api/people/{person}/role", {"role": "admin"})["role"] == "admin"
    answer = said(telegram, first, "/link")
    code = re.search(r"Your link code: (\w+)", answer)
    assert code is not None, answer
    assert said(telegram, second, f"/link {code.group(1)}") == texts.linked(person)
    assert said(telegram, second, "/models fast") == texts.model_switched("Fast")
    assert said(telegram, third, "/models fast") == texts.command_denied(
        "/models NAME", "guest", ["admin", "member"]
    )
