"""End to end: the service (real bus, dispatcher, agent on the fake OpenAI server) with the
DingTalk channel on the real dingtalk-stream SDK against the fake DingTalk server."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from channels.backoff import BackoffPolicy
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.openai_server import FakeOpenAI, Reply, ToolCall
from tests.harness import ServiceHarness

ANSWER = "DingTalk streams this answer into an AI card, word by word, like a typewriter does."


@asynccontextmanager
async def _service(
    tmp_path: Path, fake_openai: FakeOpenAI, fake: FakeDingTalk, **config: Any
) -> AsyncIterator[ServiceHarness]:
    values = fake.channel_config("ding-e2e", **config)
    kwargs = {"dingtalk": {"backoff": BackoffPolicy(base=0.02, cap=0.05)}}
    async with ServiceHarness(
        tmp_path, fake_openai, channels={"dingtalk": values}, channel_kwargs=kwargs
    ) as svc:
        yield svc


async def _ask(svc: ServiceHarness, fake: FakeDingTalk, until: Callable[[], Any], **kw: Any):
    frame = fake.push_message(fake.chatbot_data(**kw))
    await fake.until(lambda: fake.ack_for(frame))
    await fake.until(until, timeout=10)
    await svc.idle(timeout=10)


async def _ask_card(svc: ServiceHarness, fake: FakeDingTalk, **kw: Any) -> None:
    """`_ask`, until the answer's AI card was created."""
    await _ask(svc, fake, lambda: fake.requests("PUT", "/v1.0/card/instances"), **kw)


async def test_dm_streams_into_an_ai_card(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    fake_openai.script(Reply(text=ANSWER, tokens_per_second=40))
    async with _service(tmp_path, fake_openai, fake_dingtalk, card_template_id="tpl") as svc:
        await _ask_card(
            svc,
            fake_dingtalk,
            text="stream please",
        )
    puts = fake_dingtalk.streams()
    assert len(puts) >= 3
    assert puts[-1]["isFinalize"]
    assert not any(p["isFinalize"] for p in puts[:-1])
    assert puts[-1]["content"] == ANSWER
    assert all(ANSWER.startswith(p["content"]) or "⏳" in p["content"] for p in puts[:-1])
    [state] = fake_dingtalk.requests("PUT", "/v1.0/card/instances")
    assert state.body["cardData"]["cardParamMap"]["flowStatus"] == "3"
    assert fake_dingtalk.webhook_messages() == []


def assert_one_markdown_reply(fake: FakeDingTalk, text: str) -> None:
    """The answer came as one markdown message through the robot API, no card stream."""
    [reply] = fake.webhook_messages()
    assert reply["markdown"]["text"] == text
    assert fake.streams() == []


async def test_dm_without_template_gets_one_markdown_reply(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    async with _service(tmp_path, fake_openai, fake_dingtalk) as svc:
        await _ask(svc, fake_dingtalk, fake_dingtalk.webhook_messages, text="hi there")
    assert_one_markdown_reply(fake_dingtalk, "echo: hi there")


async def test_webhook_error_answer_arrives_through_the_robot_api(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    fake_dingtalk.webhook_error(300001)
    async with _service(tmp_path, fake_openai, fake_dingtalk) as svc:
        await _ask(svc, fake_dingtalk, fake_dingtalk.robot_messages, text="still answered")
    [sent] = fake_dingtalk.robot_messages()
    assert json.loads(sent["msgParam"])["text"] == "echo: still answered"
    assert len(fake_dingtalk.webhook_messages()) == 1  # the webhook was tried first


async def test_group_at_message_is_answered_in_the_group(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    async with _service(tmp_path, fake_openai, fake_dingtalk, card_template_id="tpl") as svc:
        await _ask_card(
            svc,
            fake_dingtalk,
            text="@Antler what's up",
            group=True,
            conversation_id="cid-team",
        )
    [delivered] = fake_dingtalk.requests("POST", "/v1.0/card/instances/deliver")
    assert delivered.body["openSpaceId"] == "dtv1.card//IM_GROUP.cid-team"
    final = fake_dingtalk.streams()[-1]
    assert final["isFinalize"]
    assert final["content"].endswith("\nwhat's up")  # the service prefixes the sender in groups
    assert "@Antler" not in final["content"]


async def test_card_creation_failure_falls_back_to_markdown(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    fake_dingtalk.fail(
        "POST",
        "/v1.0/card/instances/deliver",
        403,
        {"code": "Forbidden", "message": "no permission"},
    )
    async with _service(tmp_path, fake_openai, fake_dingtalk, card_template_id="tpl") as svc:
        await _ask(svc, fake_dingtalk, fake_dingtalk.webhook_messages, text="fallback")
    assert_one_markdown_reply(fake_dingtalk, "echo: fallback")


async def test_picture_in_reaches_the_agent(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    fake_dingtalk.files["pic-1"] = b"\x89PNG picture"
    async with _service(tmp_path, fake_openai, fake_dingtalk) as svc:
        await _ask(
            svc,
            fake_dingtalk,
            fake_dingtalk.webhook_messages,
            msgtype="picture",
            msg_id="mpic0001",
            content={"downloadCode": "pic-1"},
        )
    [saved] = list(tmp_path.glob("threads/*/user-data/uploads/*"))
    assert saved.read_bytes() == b"\x89PNG picture"
    assert "image-mpic0001.png" in str(fake_openai.requests[-1].body)


async def test_presented_files_are_uploaded_and_sent_after_the_answer(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    csv, png = "/mnt/user-data/outputs/table.csv", "/mnt/user-data/outputs/chart.png"
    fake_openai.script(
        Reply(
            tool_calls=[
                ToolCall("write_file", {"path": csv, "content": "a,b\n1,2\n"}),
                ToolCall("write_file", {"path": png, "content": "not really a png"}),
            ]
        ),
        Reply(tool_calls=[ToolCall("present_files", {"filepaths": [csv, png]})]),
        Reply(text="Here are your files."),
    )
    async with _service(tmp_path, fake_openai, fake_dingtalk) as svc:
        await _ask(
            svc,
            fake_dingtalk,
            lambda: len(fake_dingtalk.robot_messages()) == 2,
            text="a table and a chart please",
        )
    [answer] = fake_dingtalk.requests("POST", "/robot/sendBySession")
    assert answer.body["markdown"]["text"].endswith("Here are your files.")
    uploads = fake_dingtalk.requests("POST", "/media/upload")
    assert answer.at < min(u.at for u in uploads)  # the answer first, then the files
    table, chart = fake_dingtalk.uploads
    assert (table["type"], table["filename"], table["data"]) == ("file", "table.csv", b"a,b\n1,2\n")
    assert (chart["type"], chart["filename"], chart["data"]) == (
        "image",
        "chart.png",
        b"not really a png",
    )
    file_msg, image_msg = fake_dingtalk.robot_messages()
    assert file_msg["msgKey"] == "sampleFile"
    assert json.loads(file_msg["msgParam"]) == {
        "mediaId": table["media_id"],
        "fileName": "table.csv",
        "fileType": "csv",
    }
    assert image_msg["msgKey"] == "sampleImageMsg"
    assert json.loads(image_msg["msgParam"]) == {"photoURL": chart["media_id"]}
    assert file_msg["userIds"] == image_msg["userIds"] == ["staff-1"]


async def test_service_stop_leaves_no_thread_behind(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    async with _service(tmp_path, fake_openai, fake_dingtalk):
        assert any(t.name == "dingtalk-stream" for t in threading.enumerate())
    assert not any(t.name == "dingtalk-stream" for t in threading.enumerate())


def _button_cards(fake: FakeDingTalk) -> list[str]:
    return fake.button_cards()


async def test_model_buttons_in_a_group_are_a_card_whose_press_is_acted_on(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    group = {"group": True, "conversation_id": "cid-group-1"}
    async with _service(tmp_path, fake_openai, fake_dingtalk) as svc:
        await _ask(
            svc,
            fake_dingtalk,
            lambda: _button_cards(fake_dingtalk),
            text="@Antler /models",
            **group,
        )
        [card_id] = _button_cards(fake_dingtalk)
        assert fake_dingtalk.cards[card_id]["delivered_to"] == "dtv1.card//IM_GROUP.cid-group-1"
        shown = json.dumps(fake_dingtalk.card_params(card_id), ensure_ascii=False)
        assert "`fast` — Fast ✓" in shown
        assert "dtmd://" not in shown
        buttons = fake_dingtalk.card_buttons(card_id)
        assert list(buttons) == ["✓ Fast", "Smart"]
        frame = fake_dingtalk.push_card_press(card_id, buttons["Smart"])
        await fake_dingtalk.until(lambda: fake_dingtalk.ack_for(frame))
        await fake_dingtalk.until(lambda: len(_button_cards(fake_dingtalk)) == 2, timeout=10)
        await svc.idle(timeout=10)
        # the pressed card now shows the choice instead of its buttons
        assert fake_dingtalk.card_buttons(card_id) == {}
        assert "✓ Smart" in fake_dingtalk.card_params(card_id)["staticMsgContent"]
        await _ask(svc, fake_dingtalk, lambda: fake_openai.requests, text="@Antler hi", **group)
    assert fake_openai.requests[-1].model == "fake-smart"


async def test_stop_in_a_group_stops_its_reply(
    tmp_path: Path, fake_openai: FakeOpenAI, fake_dingtalk: FakeDingTalk
) -> None:
    fake_openai.responder = lambda body: Reply(text="slow words " * 30, stall_after=1)
    group: dict[str, Any] = {"group": True, "conversation_id": "cid-group-2"}
    async with _service(tmp_path, fake_openai, fake_dingtalk) as svc:
        fake_dingtalk.push_message(fake_dingtalk.chatbot_data(text="@Antler long job", **group))
        await fake_openai.wait_requests(1)
        await _ask(
            svc,
            fake_dingtalk,
            lambda: svc.running.dispatcher.active_runs == 0,
            text="@Antler /stop",
            **group,
        )
    texts = [m["markdown"]["text"] for m in fake_dingtalk.webhook_messages()]
    assert "Stopped the running reply." in texts
