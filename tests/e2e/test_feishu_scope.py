"""Where Feishu commands act in a group in per-topic mode (docs/channels/README.md, "Scope"),
through lark-oapi against the fake Feishu and the whole service."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until
from tests.channels.feishu.test_e2e import harness
from tests.fakes.feishu_server import FakeFeishu
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.harness import ServiceHarness

GROUP: dict[str, Any] = {
    "chat_type": "group",
    "chat_id": "oc_team",
    "mentions": [payloads.mention()],
}


def said(fake: FakeFeishu, message_id: str) -> str:
    """The text of the plain card the service answered `message_id` with."""
    [mid] = fake.replies_to(message_id, "interactive")
    content = json.loads(fake.messages[mid]["content"])
    return " ".join(e.get("content", "") for e in content.get("elements", []))


def models_used(fake_openai: FakeOpenAI) -> dict[str, str]:
    return {FakeOpenAI.user_texts(r)[-1].split("\n")[-1]: r.model for r in fake_openai.requests}


async def answered_in_group(svc: ServiceHarness, feishu: FakeFeishu, text: str, mid: str) -> None:
    """`text` said in the group (message `mid`) got its answer, and the service is idle."""
    feishu.push_event(payloads.message_event(text, message_id=mid, **GROUP))
    await until(lambda: feishu.replies_to(mid))
    await svc.idle()


async def asked_in_group(
    svc: ServiceHarness, feishu: FakeFeishu, fake_openai: FakeOpenAI, text: str, mid: str
) -> None:
    """`text` said in the group (message `mid`) is the model's first request; then idle."""
    feishu.push_event(payloads.message_event(text, message_id=mid, **GROUP))
    await until(lambda: len(fake_openai.requests) == 1)
    await svc.idle()


async def test_models_in_the_main_chat_sets_the_default_of_new_topics(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    async with harness(tmp_path, fake_openai, feishu) as svc:
        await answered_in_group(svc, feishu, "@_user_1 /models smart", "om_m")
        assert "New conversations in this chat will use Smart" in said(feishu, "om_m")
        await asked_in_group(svc, feishu, fake_openai, "@_user_1 new topic", "om_n")
    assert models_used(fake_openai) == {"new topic": "fake-smart"}


async def test_model_button_in_the_main_chat_sets_the_chat_default(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    async with harness(tmp_path, fake_openai, feishu) as svc:
        await answered_in_group(svc, feishu, "@_user_1 /models", "om_l")
        [listing] = feishu.replies_to("om_l", "interactive")
        card = feishu.card_of(listing)
        assert card is not None
        buttons = card.buttons()
        assert buttons["Smart"]["main"] is True
        feishu.push_event(
            payloads.card_action(
                buttons["Smart"], chat_id="oc_team", message_id=listing, event_id="cb_1"
            )
        )
        await until(lambda: len(feishu.replies_to(listing)) == 1)
        await svc.idle()
        await asked_in_group(svc, feishu, fake_openai, "@_user_1 fresh", "om_f")
    assert models_used(fake_openai) == {"fresh": "fake-smart"}


async def test_stop_in_the_main_chat_stops_the_reply_in_a_topic(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    fake_openai.responder = lambda body: Reply(text="thinking hard " * 20, stall_after=1)
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(payloads.message_event("@_user_1 long job", message_id="om_j", **GROUP))
        await until(lambda: svc.running.dispatcher.active_runs == 1)
        feishu.push_event(payloads.message_event("@_user_1 /stop", message_id="om_s", **GROUP))
        await until(lambda: svc.running.dispatcher.active_runs == 0)
        await until(lambda: feishu.replies_to("om_s"))
        await svc.idle()
        assert said(feishu, "om_s") == "Stopped the running reply."


async def test_new_in_the_main_chat_explains_and_in_a_topic_resets(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(payloads.message_event("@_user_1 /new", message_id="om_1", **GROUP))
        feishu.push_event(
            payloads.message_event("@_user_1 /new", message_id="om_2", root_id="om_x", **GROUP)
        )
        await until(lambda: feishu.replies_to("om_1") and feishu.replies_to("om_2"))
        await svc.idle()
        assert "starts a conversation of its own" in said(feishu, "om_1")
        assert said(feishu, "om_2") == "New conversation started."


async def test_models_and_stop_in_a_topic_act_on_that_topic(
    tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu
) -> None:
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(
            payloads.message_event(
                "@_user_1 /models smart", message_id="om_t", root_id="om_root", **GROUP
            )
        )
        await until(lambda: feishu.replies_to("om_t"))
        await svc.idle()
        assert said(feishu, "om_t") == "Model for this conversation: Smart."
        fake_openai.responder = lambda body: Reply(text="thinking hard " * 20, stall_after=1)
        feishu.push_event(payloads.message_event("@_user_1 in topic", root_id="om_root", **GROUP))
        feishu.push_event(payloads.message_event("@_user_1 elsewhere", message_id="om_e", **GROUP))
        await until(lambda: len(fake_openai.requests) == 2)
        feishu.push_event(
            payloads.message_event("@_user_1 /stop", message_id="om_s", root_id="om_root", **GROUP)
        )
        await until(lambda: svc.running.dispatcher.active_runs == 1)  # only the topic's reply
        assert svc.running.dispatcher.is_running("feishu:oc_team:om_e")
        feishu.push_event(payloads.message_event("@_user_1 /stop", message_id="om_s2", **GROUP))
        await until(lambda: svc.running.dispatcher.active_runs == 0)
        await svc.idle()
    assert models_used(fake_openai) == {"in topic": "fake-smart", "elsewhere": "fake-fast"}
