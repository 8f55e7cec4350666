"""The console's approvals page over plain HTTP (a browser without JavaScript): a chat's waiting
tool call is listed (tool, arguments, who asked, chat, expiry); Approve settles it through the
same path as a press in the chat (the card updated, the run resumed once, the console audited
as the approver); a second decision on it, from the console or the chat, changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.access.store import AuditQuery
from tests.console.client import Console
from tests.deploy import ALWAYS, WRITE, deployed
from tests.e2e.hands_helpers import chan
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway.conftest import TOKEN, make_harness
from tests.harness import ServiceHarness


@pytest.fixture
async def svc(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> AsyncIterator[ServiceHarness]:
    async with make_harness(tmp_path, fake_openai, access=ALWAYS) as s:
        yield s


def written(svc: ServiceHarness) -> list[str]:
    return deployed(svc.data_dir)


async def test_a_waiting_call_is_listed_and_approved_from_the_console_once(
    svc: ServiceHarness, fake_openai: FakeOpenAI
) -> None:
    console = Console(svc.gateway_url)
    try:
        await console.login(TOKEN)
        status, page, _ = await console.get("/console/approvals")
        assert status == 200
        assert "No tool call is waiting" in page
        fake_openai.script(WRITE, Reply(text="Deployed v7."))
        ch = chan(svc)
        await ch.inject("deploy v7", chat_id="ops", chat_type="group", mentions_bot=True)
        await svc.idle()
        [waiting] = await svc.running.approvals.waiting()
        status, page, _ = await console.get("/console/approvals")
        assert f'id="approval-{waiting["id"]}"' in page
        assert "write_file(path=&#39;/mnt/user-data/outputs/deploy.txt&#39;" in page
        for shown in ("content=&#39;v7&#39;)", "test:u1", "test:ops", " UTC"):
            assert shown in page
        assert f"Approve request {waiting['id']}" in page
        status, _, resp = await console.post(f"/console/approvals/{waiting['id']}/approve")
        assert "approved: its conversation goes on" in await console.follow(resp)
        await fake_openai.wait_requests(2, timeout=20)
        await svc.idle()
        assert written(svc) == ["v7"]
        card = ch.texts("ops")[-1]
        assert "Approval needed" in card
        assert "✅ Approved by console" in card
        assert card.endswith("Deployed v7.")
        status, _, resp = await console.post(f"/console/approvals/{waiting['id']}/deny")
        assert "no longer waiting" in await console.follow(resp)
        status, _, resp = await console.post("/console/approvals/x-y/deny")
        assert status == 404
        status, page, _ = await console.get("/console/approvals")
        assert "No tool call is waiting" in page
    finally:
        await console.close()
    await svc.idle()
    assert len(fake_openai.requests) == 2
    entries = await svc.running.audit.store.audit(AuditQuery(kind="approval"))
    decided = [e for e in entries if e.outcome == "approve"]
    assert [e.actor for e in decided] == ["console (127.0.0.1)"]
