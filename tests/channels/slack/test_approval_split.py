"""An approval card at the end of an answer too long for one Slack message: the answer is split
and the card is the last message, alone, with the buttons; the approver's press updates that
message (chat.update), the parts before it stay as they were."""

from __future__ import annotations

from pathlib import Path

from bot import texts
from tests.channels.slack import events
from tests.channels.slack.test_approvals import (
    WRITE,
    _actions,
    _messages,
    _said,
    _settled,
    slack_service,
    written,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.slack_server import FakeSlack

LONG = " ".join(f"word{i}" for i in range(1500))  # 12,389 chars: over one message's 11,000


async def test_slack_a_split_card_keeps_its_buttons_on_its_last_message_and_the_press_updates_it(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake = FakeSlack()
    fake.start()
    try:
        fake_openai.script(Reply(text=LONG, tool_calls=WRITE.tool_calls), Reply(text="Deployed."))
        async with slack_service(tmp_path, fake_openai, fake) as svc:
            fake.push_event(events.mention("<@UBOT> deploy v7", ts="1700000002.000100"))
            await fake_openai.wait_requests(1, timeout=20)
            await _settled(svc, fake, lambda: _said(fake, "Approval needed"))
            before = [(m["ts"], str(m.get("text"))) for m in _messages(fake)]
            assert len(before) == 3, before
            assert "word0 " in before[0][1]
            assert "word1499" in before[1][1]
            assert "Approval needed" in before[2][1]
            assert "word" not in before[2][1]  # the card alone
            assert [bool(_actions(m)) for m in _messages(fake)] == [False, False, True]
            card = _messages(fake)[-1]
            value = {e["text"]["text"]: e["value"] for e in _actions(card)}[texts.APPROVE]
            await svc.restart()
            fake.push_action(value, channel="C0001", thread_ts=card.get("thread_ts"), user="U0OPS")
            await fake_openai.wait_requests(2, timeout=20)
            await _settled(svc, fake, lambda: _said(fake, "Deployed."))
            assert written(svc) == ["v7"]
            after = [(m["ts"], str(m.get("text"))) for m in _messages(fake)]
            assert [ts for ts, _ in after] == [ts for ts, _ in before]  # none added
            assert after[:2] == before[:2]
            assert "Approved by" in after[2][1]
            assert after[2][1].rstrip().endswith("Deployed.")
            assert not any(_actions(m) for m in _messages(fake))
    finally:
        fake.stop()
