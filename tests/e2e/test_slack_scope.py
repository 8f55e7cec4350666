"""Where Slack commands act (docs/channels/README.md, "Scope"), through bolt and slack_sdk
against the fake Slack and the whole service: slash commands in a channel act on the channel,
their answers go to the sender only, and /stop reaches replies in any of its threads."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.channels.slack import events
from tests.channels.slack.test_e2e import bot_texts, slack_cfg
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.slack_server import FakeSlack
from tests.harness import ServiceHarness
from tests.polling import until


@pytest.fixture
async def svc(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_slack: FakeSlack
) -> AsyncIterator[ServiceHarness]:
    async with ServiceHarness(tmp_path, fake_openai, {"slack": slack_cfg(fake_slack)}) as s:
        yield s


def ephemerals(fake: FakeSlack) -> list[dict[str, Any]]:
    return [c.body for c in fake.calls_of("chat.postEphemeral")]


def stalled(fake_openai: FakeOpenAI) -> None:
    """Replies that stream one word, then hang until cancelled: replies that are running."""
    fake_openai.responder = lambda body: Reply(text="working on it " * 20, stall_after=1)


async def test_models_in_a_channel_sets_the_default_of_its_new_threads(
    svc, fake_slack, fake_openai
):
    fake_slack.push_command("models smart", channel="C0001")
    await fake_slack.until(lambda f: f.calls_of("chat.postEphemeral"))
    [answer] = ephemerals(fake_slack)
    assert (answer["user"], answer["channel"]) == ("U0001", "C0001")
    assert "New conversations in this chat will use Smart" in answer["text"]
    assert not fake_slack.calls_of("chat.postMessage")  # nothing public

    fake_slack.push_event(events.mention("hello", ts="1700000002.000100"), event_id="Ev1")
    await fake_slack.until(lambda f: f.calls_of("chat.stopStream"), timeout=10)
    await svc.idle()
    assert fake_openai.requests[-1].body["model"] == "fake-smart"
    assert bot_texts(fake_slack, "1700000002.000100") == ["echo: hello"]


async def test_model_button_pressed_in_the_channel_sets_the_default(svc, fake_slack, fake_openai):
    fake_slack.push_command("models", channel="C0001")
    await fake_slack.until(lambda f: f.calls_of("chat.postEphemeral"))
    listing = ephemerals(fake_slack)[0]
    values = [e["value"] for e in listing["blocks"][-1]["elements"]]
    assert values == ["/models fast", "/models smart"]
    fake_slack.push_action("/models smart", channel="C0001", thread_ts=None, ephemeral=True)
    await fake_slack.until(lambda f: len(f.calls_of("chat.postEphemeral")) == 2)
    assert "New conversations in this chat will use Smart" in ephemerals(fake_slack)[1]["text"]
    assert "`smart` — Smart ✓" in ephemerals(fake_slack)[1]["blocks"][0]["text"]
    fake_slack.push_event(events.mention("hi", ts="1700000003.000100"), event_id="Ev1")
    await fake_slack.until(lambda f: f.calls_of("chat.stopStream"), timeout=10)
    await svc.idle()
    assert fake_openai.requests[-1].body["model"] == "fake-smart"


async def test_models_in_a_thread_switches_that_thread_only(svc, fake_slack, fake_openai):
    root = "1700000002.000100"
    fake_slack.push_event(
        events.mention("models smart", ts="1700000003.000100", thread_ts=root), event_id="Ev1"
    )
    await fake_slack.until(lambda f: f.calls_of("chat.postMessage"))
    assert "Model for this conversation: Smart." in bot_texts(fake_slack, root)
    fake_slack.push_event(
        events.mention("in thread", ts="1700000004.000100", thread_ts=root), event_id="Ev2"
    )
    fake_slack.push_event(events.mention("elsewhere", ts="1700000005.000100"), event_id="Ev3")
    await fake_slack.until(lambda f: len(f.calls_of("chat.stopStream")) == 2, timeout=10)
    await svc.idle()
    models = {
        FakeOpenAI.user_texts(r.body)[-1].split("\n")[-1]: r.body["model"]
        for r in fake_openai.requests
    }
    assert models == {"in thread": "fake-smart", "elsewhere": "fake-fast"}


async def test_stop_in_the_channel_stops_the_senders_reply_in_a_thread(
    svc, fake_slack, fake_openai
):
    stalled(fake_openai)
    fake_slack.push_event(events.mention("long task", ts="1700000002.000100"), event_id="Ev1")
    await until(lambda: svc.app.dispatcher.active_runs == 1)
    fake_slack.push_command("stop", channel="C0001", user="U0002")  # someone else: not theirs
    fake_slack.push_command("stop", channel="C0001")
    await fake_slack.until(lambda f: len(f.calls_of("chat.postEphemeral")) == 2)
    answers = {e["user"]: e["text"] for e in ephemerals(fake_slack)}
    assert answers["U0002"] == "None of your replies is being written in this chat."
    assert answers["U0001"] == "Stopped the running reply."
    await svc.idle()
    assert svc.app.dispatcher.active_runs == 0


async def test_stop_with_several_running_lists_them_with_buttons(svc, fake_slack, fake_openai):
    stalled(fake_openai)
    fake_slack.push_event(events.mention("first task", ts="1700000002.000100"), event_id="Ev1")
    fake_slack.push_event(events.mention("second task", ts="1700000003.000100"), event_id="Ev2")
    await until(lambda: svc.app.dispatcher.active_runs == 2)
    await fake_openai.wait_requests(2, timeout=20)  # both replies are being written
    fake_slack.push_command("stop", channel="C0001")
    await fake_slack.until(lambda f: f.calls_of("chat.postEphemeral"))
    [listing] = ephemerals(fake_slack)
    buttons = {e["text"]["text"]: e["value"] for e in listing["blocks"][-1]["elements"]}
    assert buttons == {
        "Stop: first task": "/stop 1700000002.000100",
        "Stop: second task": "/stop 1700000003.000100",
        "Stop all": "/stop all",
    }
    fake_slack.push_action(
        "/stop 1700000003.000100", channel="C0001", thread_ts=None, ephemeral=True
    )
    await until(lambda: svc.app.dispatcher.active_runs == 1)
    assert svc.app.dispatcher.is_running("slack:T0001/C0001:1700000002.000100")
    fake_slack.push_action("/stop all", channel="C0001", thread_ts=None, ephemeral=True)
    await until(lambda: svc.app.dispatcher.active_runs == 0)


async def test_new_in_the_channel_explains_itself(svc, fake_slack):
    fake_slack.push_command("new", channel="C0001")
    await fake_slack.until(lambda f: f.calls_of("chat.postEphemeral"))
    assert "starts a conversation of its own" in ephemerals(fake_slack)[0]["text"]


async def test_in_a_dm_models_buttons_and_stop_act_on_the_dm(svc, fake_slack, fake_openai):
    fake_slack.push_event(events.dm("models", ts="1700000001.000100"), event_id="Ev1")
    await fake_slack.until(lambda f: f.calls_of("chat.postMessage"))
    await svc.idle()
    fake_slack.push_action("/models smart", channel="D0001", thread_ts="1700000001.000100")
    await fake_slack.until(lambda f: len(f.calls_of("chat.postMessage")) == 2)
    await svc.idle()
    switched = fake_slack.calls_of("chat.postMessage")[1].body["text"]
    assert "Model for this conversation: Smart." in switched
    stalled(fake_openai)
    fake_slack.push_event(events.dm("go", ts="1700000002.000100"), event_id="Ev2")
    await fake_openai.wait_requests(1)
    fake_slack.push_event(events.dm("stop", ts="1700000003.000100"), event_id="Ev3")
    await until(lambda: svc.app.dispatcher.active_runs == 0)
    await svc.idle()
    assert fake_openai.requests[-1].body["model"] == "fake-smart"
    assert not fake_slack.calls_of("chat.postEphemeral")  # typed in the DM: ordinary answers
