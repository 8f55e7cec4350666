"""A restart cuts a DingTalk reply short; the restart streams the new answer into the same AI card
and finalizes it there: one card per message, never a cut-off card beside a new one."""

from __future__ import annotations

from pathlib import Path

from bot.stores.journal import State
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.harness import ServiceHarness

FULL = "The whole answer, after the restart, in the card the user already sees."


async def test_restart_answers_in_the_same_ai_card(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    fake_openai.script(
        Reply(text="A first try " * 20, tokens_per_second=100, stall_after=4), Reply(text=FULL)
    )
    values = fake_dingtalk.channel_config("ding-resume", card_template_id="tpl")
    svc = ServiceHarness(
        tmp_path, fake_openai, channels={"dingtalk": values, "shutdown_grace_seconds": 0.3}
    )
    async with svc:
        frame = fake_dingtalk.push_message(fake_dingtalk.chatbot_data(text="hello"))
        await fake_dingtalk.until(lambda: fake_dingtalk.ack_for(frame))
        await fake_dingtalk.until(lambda: fake_dingtalk.streams(), timeout=10)
        await fake_openai.wait_requests(1)
        await svc.restart()
        await fake_openai.wait_requests(2, timeout=15)
        await svc.idle(timeout=15)
        assert svc.app is not None
        assert [e.state for e in await svc.app.journal.recent()] == [State.delivered]
    created = fake_dingtalk.requests("POST", "/v1.0/card/instances")
    assert len(created) == 1  # one card, reused by the restart
    puts = fake_dingtalk.streams()
    assert puts[-1]["isFinalize"]
    assert puts[-1]["content"] == FULL
    assert any("answering again" in p["content"] for p in puts)
