"""Approvals in a Slack channel, through slack-bolt against the fake Slack: a role named as
approver for a tool is the only one that may answer (an admin is refused in one line); its
press runs the call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot import texts
from tests.channels.slack import events
from tests.deploy import WRITE, deployed
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.harness import ServiceHarness


def written(svc: ServiceHarness) -> list[str]:
    return deployed(svc.data_dir)


def slack_service(tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeSlack) -> ServiceHarness:
    cfg: dict[str, Any] = {
        "enabled": True,
        "bot_token": BOT_TOKEN,
        "app_token": APP_TOKEN,
        "signing_secret": SIGNING_SECRET,
        "api_base": fake.api_base,
    }
    access = {
        "roles": {"deployer": {}},
        "people": {"slack:U0OPS": "deployer", "slack:U0ADMIN": "admin"},
        "approvals": {
            "tools": {"write_file": {"approval": "always", "approvers": ["deployer"]}},
        },
    }
    return ServiceHarness(tmp_path, fake_openai, {"slack": cfg}, access=access)


async def test_slack_only_the_named_approver_role_may_answer(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake = FakeSlack()
    fake.start()
    try:
        fake_openai.script(WRITE, Reply(text="Deployed v7."))
        async with slack_service(tmp_path, fake_openai, fake) as svc:
            fake.push_event(events.mention("<@UBOT> deploy v7", ts="1700000002.000100"))
            await fake_openai.wait_requests(1, timeout=20)
            await svc.idle(timeout=20)
            [card] = [m for m in _messages(fake) if _actions(m)]
            assert "deployer" in str(card["text"]) + str(card.get("blocks"))
            value = {e["text"]["text"]: e["value"] for e in _actions(card)}[texts.APPROVE]
            thread = card.get("thread_ts")
            fake.push_action(value, channel="C0001", thread_ts=thread, user="U0ADMIN")
            await _settled(svc, fake, lambda: _said(fake, "You cannot answer"))
            assert written(svc) == []  # an admin, but not the role named for this tool
            fake.push_action(value, channel="C0001", thread_ts=thread, user="U0OPS")
            await fake_openai.wait_requests(2, timeout=20)
            await _settled(svc, fake, lambda: _said(fake, "Deployed v7."))
            assert written(svc) == ["v7"]
    finally:
        fake.stop()


def _messages(fake: FakeSlack) -> list[dict[str, Any]]:
    mine = [m for m in fake.messages.values() if m.get("bot_id") and m["channel"] == "C0001"]
    return sorted(mine, key=lambda m: float(m["ts"]))


def _actions(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = message.get("stop_blocks") or message.get("blocks") or []
    return [e for b in blocks if b.get("type") == "actions" for e in b.get("elements", [])]


def _said(fake: FakeSlack, text: str) -> bool:
    return any(text in str(m.get("text")) + str(m.get("blocks")) for m in _messages(fake))


async def _settled(svc: ServiceHarness, fake: FakeSlack, done: Any) -> None:
    for _ in range(400):
        if done():
            break
        await svc.idle(timeout=20)
    await svc.idle(timeout=20)
    assert done(), _messages(fake)
