"""Signs of life on Slack: :eyes: on the person's message while the agent works, then
:white_check_mark:, within the workspace's reactions budget; real slack_sdk/bolt against the
fake Slack (which refuses a duplicate or missing reaction and over 50 reaction calls a minute)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient

from channels.base import ChatRef
from channels.pacing import Pacer
from channels.slack.channel import capabilities_for
from channels.slack.reactions import DONE, REACTIONS, WORKING, StatusReactions
from channels.slack.stream import SlackReply
from tests.channels.slack import events
from tests.channels.slack.conftest import slack_config
from tests.channels.slack.test_e2e import slack_cfg
from tests.fakes.clock import START, VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.slack_server import BOT_TOKEN, FakeSlack
from tests.harness import ServiceHarness
from tests.polling import until

SLOW = "A slow answer: " + " ".join(f"word{i}" for i in range(30)) + "."


def reaction_calls(fake: FakeSlack, ts: str) -> list[tuple[str, str]]:
    return [
        (c.method, str(c.body["name"]))
        for c in fake.calls
        if c.method.startswith("reactions.") and c.body.get("timestamp") == ts
    ]


async def test_the_persons_message_shows_working_then_done(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_slack: FakeSlack
) -> None:
    fake_openai.script(Reply(text=SLOW, tokens_per_second=40))
    ts = "1700000001.000100"
    async with ServiceHarness(tmp_path, fake_openai, {"slack": slack_cfg(fake_slack)}) as svc:
        fake_slack.push_event(events.dm("hello", ts=ts), event_id="Ev1")
        await fake_openai.wait_requests(1, timeout=20)
        await until(lambda: fake_slack.reactions[("D0001", ts)] == [WORKING])
        await svc.idle(timeout=20)
        await until(lambda: fake_slack.reactions[("D0001", ts)] == [DONE])
    assert reaction_calls(fake_slack, ts) == [
        ("reactions.add", WORKING),
        ("reactions.remove", WORKING),
        ("reactions.add", DONE),
    ]


async def test_reactions_keep_the_workspaces_budget(fake_slack: FakeSlack) -> None:
    clock = VirtualClock()
    pacer = Pacer(clock, clock.sleep)
    budgets = capabilities_for(slack_config(fake_slack)).edit_budget
    (budget,) = [b for b in budgets if b.method == REACTIONS]
    client = AsyncWebClient(token=BOT_TOKEN, base_url=fake_slack.api_base)
    reactions = StatusReactions(client, pacer, budgets, enabled=True)
    chat = ChatRef(channel="slack", chat_id="D0001", workspace="T0001")
    replies = [
        SlackReply(chat=chat, channel_id="D0001", thread_ts=None, team="T0001", user="U1",
                   source_ts=f"1700000001.{i:06d}")
        for i in range(10)
    ]  # fmt: skip
    for reply in replies:
        reactions.working(reply)
    while reactions.calls.pending:
        await asyncio.sleep(0.01)
    assert sum(c.method == "reactions.add" for c in fake_slack.calls) == 10
    # a burst, then one per 1/per_second: paced by the Pacer, never by the platform's refusal
    assert clock.now() - START >= (10 - budget.burst) / budget.per_second - 1e-6
    assert all(names == [WORKING] for names in fake_slack.reactions.values())


async def test_status_reactions_off(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_slack: FakeSlack
) -> None:
    config = {"slack": slack_cfg(fake_slack, status_reactions=False)}
    async with ServiceHarness(tmp_path, fake_openai, config) as svc:
        fake_slack.push_event(events.dm("hello"), event_id="Ev1")
        await fake_openai.wait_requests(1, timeout=20)
        await svc.idle(timeout=20)
    assert [c for c in fake_slack.calls if c.method.startswith("reactions.")] == []
