"""Approvals in a Telegram group, through python-telegram-bot against the fake Telegram: a press
by someone who may not approve gets one line and changes nothing; the approver's press resumes
the run after a restart between the request and the press, once however often the press is
delivered; a press after the deadline counts as expired; an unanswered request expires once."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

from bot import texts
from tests.channels.telegram.served import telegram_service
from tests.deploy import WRITE, deployed
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram
from tests.harness import ServiceHarness

GROUP = -100


def written(svc: ServiceHarness) -> list[str]:
    return deployed(svc.data_dir)


def telegram(tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram) -> ServiceHarness:
    access = {
        "people": {"telegram:7": "admin"},  # 42, the asker, is a member: it may not approve
        "approvals": {"groups": {"write_file": "always"}},
    }
    return telegram_service(tmp_path, fake_openai, fake, harness={"access": access})


def buttons(fake: FakeTelegram) -> dict[str, str]:
    markup = next(
        c.body["reply_markup"]
        for c in reversed(fake.calls_of("sendMessage", "editMessageText"))
        if c.body.get("reply_markup")
    )
    return {b["text"]: b["callback_data"] for row in markup["inline_keyboard"] for b in row}


async def shows(fake: FakeTelegram, svc: ServiceHarness, text: str) -> None:
    await fake.wait_for(lambda: any(text in t for t in fake.shown_texts(GROUP)), timeout=20)
    await svc.idle()


@contextlib.asynccontextmanager
async def deploy_asked(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram, then: str
) -> AsyncIterator[tuple[ServiceHarness, int]]:
    """The service, "deploy v7" asked in the group and its approval card shown (the card's
    message id); once approved the model writes the file, then answers `then`."""
    fake_openai.script(WRITE, Reply(text=then))
    async with telegram(tmp_path, fake_openai, fake) as svc:
        fake.push_message(GROUP, "@antler_bot deploy v7")
        await shows(fake, svc, "Approval needed")
        yield svc, max(m for (chat, m) in fake.messages if chat == GROUP)


async def test_telegram_a_non_approver_is_refused_and_the_approver_resumes_after_a_restart(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    async with deploy_asked(tmp_path, fake_openai, fake, "Deployed v7.") as (svc, card):
        data = buttons(fake)
        assert list(data) == [texts.APPROVE, texts.DENY]
        fake.push_callback(GROUP, card, data[texts.APPROVE], user_id=42)  # the asker: a member
        await shows(fake, svc, "You cannot answer")
        assert fake.shown_texts(GROUP)[-1] == texts.approval_not_yours("An approver")
        assert written(svc) == []
        await svc.restart()  # the pause is in the checkpoint, the request in the database
        press = fake.push_callback(GROUP, card, data[texts.APPROVE], user_id=7)  # an admin
        await shows(fake, svc, "Deployed v7.")
        assert written(svc) == ["v7"]
        [card_now] = [t for t in fake.shown_texts(GROUP) if "Approval needed" in t]
        assert "Approved by" in card_now  # the card itself, updated
        assert card_now.endswith("Deployed v7.")
        shown = len(fake.shown_texts(GROUP))
        fake.push_update(dict(press))  # Telegram delivers the press again
        fake_openai.script(Reply(text="Next."))
        fake.push_message(GROUP, "@antler_bot next")
        await shows(fake, svc, "Next.")
        metrics = svc.running.metrics
        assert metrics.value("antler_approvals_total", outcome="approve") == 1
    assert len(fake_openai.requests) == 3  # the redelivered press resumed nothing
    assert len(fake.shown_texts(GROUP)) == shown + 1


async def test_telegram_a_press_after_the_deadline_counts_as_expired(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    late = "It was not approved in time."
    async with deploy_asked(tmp_path, fake_openai, fake, late) as (svc, card):
        approvals = svc.running.turns.approvals
        assert approvals is not None
        approvals.clock = lambda: time.time() + 16 * 60  # the default 15 minutes are over
        fake.push_callback(GROUP, card, buttons(fake)[texts.APPROVE], user_id=7)
        await shows(fake, svc, "not approved in time")
    assert written(svc) == []
    [result] = [m for m in fake_openai.requests[1].messages if m.get("role") == "tool"]
    assert "expired" in result["content"]
    assert texts.approval_decided("expired", "") in fake.shown_texts(GROUP)[-1]


async def test_telegram_an_unanswered_request_expires_once(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    nobody = "Nobody approved it in time."
    async with deploy_asked(tmp_path, fake_openai, fake, nobody) as (svc, card):
        data = buttons(fake)
        approvals = svc.running.approvals
        assert await approvals.expire_due() == 0  # not due yet
        approvals.clock = lambda: time.time() + 16 * 60
        for _ in range(2):  # two workers looking at once: answered once
            await approvals.expire_due()
        await shows(fake, svc, nobody)
        assert await approvals.expire_due() == 0
        fake.push_callback(GROUP, card, data[texts.APPROVE], user_id=7)  # too late
        await shows(fake, svc, "already answered")
        assert svc.running.metrics.value("antler_approvals_total", outcome="expired") == 1
    assert written(svc) == []
    assert len(fake_openai.requests) == 2
    expired = [t for t in fake.shown_texts(GROUP) if texts.approval_decided("expired", "") in t]
    assert len(expired) == 1
