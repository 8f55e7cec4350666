"""An approval card at the end of an answer too long for one Telegram message (4,096 chars):
the answer is split and the card is the last message, alone, with the buttons; a press (after a
restart) updates that message, the parts before it stay as they were."""

from __future__ import annotations

from pathlib import Path

from bot import texts
from tests.channels.telegram.test_approvals import GROUP, WRITE, shows, telegram, written
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.telegram_server import FakeTelegram

LONG = " ".join(f"word{i}" for i in range(1000))  # 7,889 chars: two messages of its own


async def test_a_split_card_keeps_its_buttons_on_its_last_message_and_the_press_updates_it(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeTelegram
) -> None:
    fake_openai.script(Reply(text=LONG, tool_calls=WRITE.tool_calls), Reply(text="Deployed v7."))
    async with telegram(tmp_path, fake_openai, fake) as svc:
        fake.push_message(GROUP, "@antler_bot deploy v7")
        await shows(fake, svc, "Approval needed")
        mine = sorted(key for key in fake.keyboards if key[0] == GROUP)  # the bot's messages
        texts_before = [fake.messages[key] for key in mine]
        assert len(mine) == 3, texts_before
        assert texts_before[-1].startswith("⏸ Approval needed")  # the card alone
        assert "word0 " in texts_before[0]
        assert "word999" in texts_before[1]
        keyboards = [fake.keyboards[key] for key in mine]
        assert keyboards[:2] == [None, None]
        rows = keyboards[2]["inline_keyboard"]
        data = {b["text"]: b["callback_data"] for row in rows for b in row}
        await svc.restart()
        fake.push_callback(GROUP, mine[-1][1], data[texts.APPROVE], user_id=7)
        await shows(fake, svc, "Deployed v7.")
        assert written(svc) == ["v7"]
        assert sorted(key for key in fake.keyboards if key[0] == GROUP) == mine  # none added
        after = [fake.messages[key] for key in mine]
        assert after[:2] == texts_before[:2]
        assert after[2].startswith(texts_before[2])
        assert "✅ Approved by" in after[2]
        assert after[2].endswith("Deployed v7.")
        assert [fake.keyboards[key] for key in mine] == [None, None, None]
