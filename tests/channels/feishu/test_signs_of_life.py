"""Signs of life on Feishu: OnIt on the person's message while the agent works, DONE once it is
answered (OnIt removed); real lark-oapi against the fake Feishu, which checks the emoji types
and the app's 50 reaction calls a second."""

from __future__ import annotations

from pathlib import Path

from channels.feishu.reactions import DONE, WORKING
from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until
from tests.channels.feishu.test_e2e import feishu, harness
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply

__all__ = ["feishu"]  # the fixture
SLOW = "A slow answer: " + " ".join(f"word{i}" for i in range(30)) + "."


def reaction_ops(fake: FakeFeishu, message_id: str) -> list[str]:
    return [
        c.headers["op"] + (f":{c.body['reaction_type']['emoji_type']}" if c.body else "")
        for c in fake.calls
        if c.headers["op"] in ("reaction", "unreaction") and f"/{message_id}/" in c.path
    ]


async def test_the_persons_message_shows_working_then_done(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    fake_openai.script(Reply(text=SLOW, tokens_per_second=40))
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(payloads.message_event("hi", message_id="om_1"))
        await until(lambda: list(feishu.reactions.get("om_1", {}).values()) == [WORKING])
        await svc.idle()
        await until(lambda: list(feishu.reactions.get("om_1", {}).values()) == [DONE])
    assert reaction_ops(feishu, "om_1") == [f"reaction:{WORKING}", "unreaction", f"reaction:{DONE}"]
    assert feishu.violations == []


async def test_status_reactions_off(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    async with harness(tmp_path, fake_openai, feishu, status_reactions=False) as svc:
        feishu.push_event(payloads.message_event("hi", message_id="om_2"))
        await until(lambda: feishu.replies_to("om_2"))
        await svc.idle()
    assert reaction_ops(feishu, "om_2") == []
