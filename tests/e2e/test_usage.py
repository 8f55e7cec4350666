"""Usage and budgets through the whole service (recording channel, fake model with usage
chunks): rows in the usage store, the footer, a warning, the fallback model, a refusal and its
reset on a virtual clock, `/usage`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.stores.usage import Totals
from bot.usage.budgets import resets_at
from tests.e2e.hands_helpers import chan
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")

USAGE = {"prompt_tokens": 400, "completion_tokens": 100, "total_tokens": 500}
DAY = 1_790_000_000.0  # 2026-09-21 14:13:20 UTC


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def service(tmp_path: Path, fake: FakeOpenAI, usage: dict[str, Any]) -> ServiceHarness:
    return ServiceHarness(tmp_path / "data", fake, {"test": {"enabled": True}}, usage=usage)


def on_clock(svc: ServiceHarness, clock: Clock) -> None:
    gate = svc.running.usage
    gate.meter.clock = clock
    assert gate.budgets is not None
    gate.budgets.clock = clock


@contextlib.asynccontextmanager
async def budgeted(
    tmp_path: Path, fake: FakeOpenAI, budget: dict[str, Any]
) -> AsyncIterator[tuple[ServiceHarness, RecordingChannel, Clock]]:
    """The service under one `budget`, its meter and budgets on a clock at DAY; its channel."""
    clock = Clock(DAY)
    async with service(tmp_path, fake, {"budgets": [budget]}) as svc:
        on_clock(svc, clock)
        yield svc, chan(svc), clock


async def test_an_answer_is_counted_with_a_footer_and_in_the_metrics(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    usage = {"show_usage": "tokens", "channels": {"other": {"show_usage": "cost"}}}
    async with service(tmp_path, fake_openai, usage) as svc:
        ch = chan(svc)
        fake_openai.script(Reply(text="Hello", usage=USAGE))
        await ch.inject("hi", user="ann")
        await svc.idle()
        store = svc.running.stores.usage
        assert store is not None
        await svc.running.usage.meter.flush()
        totals = await store.total("person", "test:ann")
        metrics = svc.running.metrics
    assert totals == Totals(prompt=400, completion=100, calls=1)
    [final] = ch.of("finish")
    assert final.doc is not None
    assert final.doc.text == "Hello"
    assert final.doc.note == "500 tokens (400 in, 100 out)"
    prompt = {"model": "fast", "channel": "test", "kind": "prompt"}
    assert metrics.value("antler_model_tokens_total", **prompt) == 400
    assert len(fake_openai.requests) == 1  # counting adds no model call


async def test_warning_then_refusal_then_reset_the_next_day(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    budget = {"scope": "person", "name": "test:ann", "period": "day", "tokens": 1200}
    async with budgeted(tmp_path, fake_openai, budget) as (svc, ch, clock):
        fake_openai.script(*[Reply(text=f"answer {i}", usage=USAGE) for i in range(4)])
        for text in ("one", "two", "three", "four"):
            await ch.inject(text, user="ann")
            await svc.idle()
        clock.now += 86_400  # the next day: the budget is fresh
        await ch.inject("five", user="ann")
        await svc.idle()
    one, two, three, four, five = [c.doc for c in ch.of("finish")]
    assert one is not None
    assert two is not None
    assert three is not None
    assert four is not None
    assert five is not None
    assert (one.note, two.note) == ("", "")  # 0, then 500 of 1200 before the run
    # 1000 of 1200 before the third: one warning
    assert three.note == "Heads-up: 83% of your daily budget is used (200 tokens left)."
    assert four.status == "failed"
    assert four.note == (
        "Your daily budget of 1,200 tokens is used up. It resets at 2026-09-22 00:00 UTC. "
        "An admin can raise it (usage.budgets in config.yaml)."
    )
    assert five.text == "answer 3"
    assert five.note == ""
    assert len(fake_openai.requests) == 4


async def test_at_the_limit_a_refusal_says_when_it_resets_and_calls_no_model(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    budget = {"scope": "role", "name": "member", "period": "month", "tokens": 500}
    async with budgeted(tmp_path, fake_openai, budget) as (svc, ch, _):
        fake_openai.script(Reply(text="first", usage=USAGE), Reply(text="never"))
        await ch.inject("one", user="ann")
        await svc.idle()
        await ch.inject("two", user="ann")
        await svc.idle()
        await ch.inject("hello", user="bob")  # each person of the role has the budget
        await svc.idle()
    assert resets_at("month", DAY) == "on 2026-10-01 00:00 UTC"
    _, refused, bob = [c.doc for c in ch.of("finish")]
    assert refused is not None
    assert bob is not None
    assert refused.status == "failed"
    assert refused.note == (
        "Your role's (member) monthly budget of 500 tokens is used up. It resets on "
        "2026-10-01 00:00 UTC. An admin can raise it (usage.budgets in config.yaml)."
    )
    assert bob.text == "never"
    assert len(fake_openai.requests) == 2


async def test_past_a_fallback_budget_the_cheaper_model_answers(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    budget = {"scope": "chat", "name": "test:c1", "tokens": 500, "at_limit": "fallback"}
    usage = {"budgets": [budget], "fallback_model": "fast"}
    async with service(tmp_path, fake_openai, usage) as svc:
        ch = chan(svc)
        conv = await svc.running.conversations.get_or_create(ch.message("x").chat)
        await svc.running.conversations.update(conv.key, model="smart")
        fake_openai.script(Reply(text="smart", usage=USAGE), Reply(text="cheap", usage=USAGE))
        await ch.inject("one", user="ann")
        await svc.idle()
        await ch.inject("two", user="bob")  # the chat's budget: anyone in it
        await svc.idle()
    first, second = fake_openai.requests
    assert (first.model, second.model) == ("fake-smart", "fake-fast")
    doc = ch.of("finish")[1].doc
    assert doc is not None
    assert doc.text == "cheap"
    assert doc.note.startswith("This chat's daily budget is used up; answering with fast")


async def test_usage_command_shows_yours_the_chats_or_as_admin_anyones(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    price = {"input": 1.0, "output": 2.0}
    svc = service(tmp_path, fake_openai, {})
    svc.raw["models"][0]["price"] = price  # 400 in, 100 out: 0.0006 USD
    svc.raw["access"] = {"people": {"test:boss": "admin"}}
    async with svc:
        ch = chan(svc)
        fake_openai.script(Reply(text="a", usage=USAGE), Reply(text="b", usage=USAGE))
        await ch.inject("hi", user="ann")
        await svc.idle()
        group: dict[str, Any] = {"chat_id": "g1", "chat_type": "group", "mentions_bot": True}
        await ch.inject("hi all", user="ann", **group)
        await svc.idle()
        asks: tuple[tuple[str, dict[str, Any]], ...] = (
            ("/usage", {"user": "ann"}),
            ("/usage", {"user": "ann", **group}),
            ("/usage test:ann", {"user": "bob"}),
            ("/usage test:ann", {"user": "boss"}),
        )
        for text, kw in asks:
            await ch.inject(text, **kw)
            await svc.idle()
    mine, chats, refused, admin = ch.texts()[-4:]
    assert mine == (
        "Usage of you (test:ann):\n"
        "today: 1,000 tokens in 2 calls · 0.0012 USD\n"
        "this month: 1,000 tokens in 2 calls · 0.0012 USD"
    )
    assert chats.startswith("Usage of this chat:\ntoday: 500 tokens in 1 calls · 0.0006 USD")
    assert refused == "Only an admin can see another person's usage."
    assert admin == mine.replace("you (test:ann)", "test:ann")


async def test_a_budget_reached_mid_run_stops_the_next_model_call(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    budget = {"scope": "person", "name": "test:ann", "tokens": 400}
    async with service(tmp_path, fake_openai, {"budgets": [budget]}) as svc:
        ch = chan(svc)
        fake_openai.script(
            Reply(tool_calls=[ToolCall("ls", {"path": "/mnt/user-data"})], usage=USAGE),
            Reply(text="never asked"),
        )
        await ch.inject("list my files", user="ann")
        await svc.idle()
    assert len(fake_openai.requests) == 1  # the tool ran; the next model call was refused
    doc = ch.of("finish")[0].doc
    assert doc is not None
    assert doc.status == "failed"
    assert doc.note.startswith("Your daily budget of 400 tokens is used up.")
