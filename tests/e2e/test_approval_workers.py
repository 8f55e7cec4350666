"""An approval with three workers (`antler serve` × 3 on one PostgreSQL and one Redis, the fake
Telegram): the run pauses on the worker that owns the chat; that worker leaves; the Approve
button is pressed twice, the presses arrive on the worker holding the Telegram connection and
are answered by the chat's new owner, which did not start the run: the run resumes there once
(the call runs once, the model is asked once more), the card is updated in place."""

from __future__ import annotations

from pathlib import Path

from tests.deploy import WRITE, deployed
from tests.e2e.service_process import wait_until
from tests.e2e.workers import PARTITIONS, Worker, chat_owned_by, worker_group
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram

ACCESS = {"default_role": "admin", "approvals": {"tools": {"write_file": "always"}}}


group = worker_group(access=ACCESS)


def written(tmp_path: Path) -> list[str]:
    return deployed(tmp_path / "data")


def approve_data(telegram: FakeTelegram) -> str:
    markup = next(
        c.body["reply_markup"]
        for c in reversed(telegram.calls_of("sendMessage", "editMessageText"))
        if c.body.get("reply_markup")
    )
    return str(next(b["callback_data"] for row in markup["inline_keyboard"] for b in row))


def test_a_press_answered_by_a_worker_that_did_not_start_the_run_resumes_it_once(
    group: list[Worker], telegram: FakeTelegram, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    starter = next(w for w in group if not w.holds_connection())  # the press goes elsewhere
    others = [w for w in group if w is not starter]
    user = chat_owned_by(starter, range(500, 700))  # a DM: the chat is the user's id
    fake_openai.script(
        WRITE,
        Reply(text="Deployed v7."),
    )
    telegram.push_message(user, "deploy v7", user_id=user)
    wait_until(
        lambda: any("Approval needed" in t for t in telegram.shown_texts(user)), 30, "the card"
    )
    card = max(m for (chat, m) in telegram.messages if chat == user)
    data = approve_data(telegram)
    assert starter.stop() == 0  # the worker that started the run leaves; its chats move on
    wait_until(
        lambda: sorted(p for w in others for p in w.partitions()) == list(range(PARTITIONS)),
        30,
        "the partitions taken over",
    )
    assert written(tmp_path) == []
    for _ in range(2):  # pressed twice (or delivered twice): one decision
        telegram.push_callback(user, card, data, user_id=user)
    wait_until(
        lambda: any("Deployed v7." in t for t in telegram.shown_texts(user)), 60, "the answer"
    )
    wait_until(
        lambda: any("already answered" in t for t in telegram.shown_texts(user)), 30, "the 2nd"
    )
    assert written(tmp_path) == ["v7"]
    assert len(fake_openai.requests) == 2  # resumed once, never started again
    [shown] = [t for t in telegram.shown_texts(user) if "Approval needed" in t]
    assert "✅ Approved by" in shown  # the card itself, updated on another worker
    assert shown.endswith("Deployed v7.")
    assert all("Traceback" not in w.output() for w in group)
