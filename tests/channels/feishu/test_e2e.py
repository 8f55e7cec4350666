"""End to end: fake Feishu -> lark-oapi -> FeishuChannel -> service -> agent (fake OpenAI)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tests.channels.feishu import payloads
from tests.channels.feishu.conftest import until
from tests.fakes.feishu_server import RATE_LIMITED, FakeFeishu
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.fakes.threaded import fake_fixture
from tests.harness import ServiceHarness

feishu = fake_fixture(FakeFeishu, "feishu")


def harness(tmp_path: Path, fake_openai: FakeOpenAI, feishu: FakeFeishu, **cfg) -> ServiceHarness:
    conf = feishu.channel_config(**cfg)
    return ServiceHarness(tmp_path, fake_openai, {"feishu": conf}, only=["feishu"])


def answer_cards(feishu: FakeFeishu, message_id: str):
    return [feishu.card_of(m) for m in feishu.replies_to(message_id, "interactive")]


async def test_p2p_message_streams_into_cardkit_card(tmp_path, fake_openai, feishu):
    text = "Feishu streaming works one token at a time " * 4
    fake_openai.script(Reply(text=text, tokens_per_second=150))
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.wait_ack(feishu.push_event(payloads.message_event("hi", message_id="om_1")))
        await until(lambda: feishu.replies_to("om_1"))
        await svc.idle()
    [card] = answer_cards(feishu, "om_1")
    assert card.elements["answer"] == text
    assert not card.streaming
    assert card.card["header"]["template"] == "green"
    assert len(feishu.recorded("element_content")) >= 2
    assert feishu.recorded("reaction")
    assert feishu.violations == []


async def test_patch_fallback_end_to_end(tmp_path, fake_openai, feishu):
    feishu.cardkit_enabled = False
    fake_openai.script(Reply(text="patched " * 30, tokens_per_second=200))
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(payloads.message_event("hi", message_id="om_p"))
        await until(lambda: feishu.replies_to("om_p"))
        await svc.idle()
    [mid] = feishu.replies_to("om_p", "interactive")
    final = json.loads(feishu.messages[mid]["content"])
    assert ("patched " * 30).strip() in final["elements"][-1]["content"]
    assert final["header"]["template"] == "green"
    assert feishu.recorded("patch")
    assert feishu.violations == []


async def test_group_gating_and_topics_have_separate_histories(tmp_path, fake_openai, feishu):
    g = {"chat_type": "group", "chat_id": "oc_team"}
    at = {"mentions": [payloads.mention()]}
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.wait_ack(feishu.push_event(payloads.message_event("just chatting", **g)))
        feishu.push_event(payloads.message_event("@_user_1 alpha", message_id="om_a", **g, **at))
        feishu.push_event(payloads.message_event("@_user_1 beta", message_id="om_b", **g, **at))
        await until(lambda: feishu.replies_to("om_a") and feishu.replies_to("om_b"))
        await svc.idle()
        feishu.push_event(payloads.message_event("@_user_1 more alpha", root_id="om_a", **g, **at))
        await until(lambda: len(fake_openai.requests) == 3)
        await svc.idle()
    texts = [json.dumps(r.messages) for r in fake_openai.requests]
    assert all("just chatting" not in t for t in texts)
    third = texts[2]
    assert "alpha" in third
    assert "beta" not in third


async def test_redelivered_event_answered_once(tmp_path, fake_openai, feishu):
    env = payloads.message_event("once please", message_id="om_r", event_id="ev_r")
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.wait_ack(feishu.push_event(env))
        await until(lambda: feishu.replies_to("om_r"))
        await svc.idle()
        await svc.restart()  # the ledger, not just the channel's memory, remembers it
        feishu.wait_ack(feishu.push_event(env))
        feishu.push_event(payloads.message_event("next", message_id="om_n"))
        await until(lambda: feishu.replies_to("om_n"))
        await svc.idle()
    assert len(feishu.replies_to("om_r", "interactive")) == 1
    assert len(fake_openai.requests) == 2


async def test_rate_limit_code_mid_stream_is_waited_out(tmp_path, fake_openai, feishu):
    text = "slow and steady wins " * 8
    fake_openai.script(Reply(text=text, tokens_per_second=100))
    feishu.fail_next("element_content", RATE_LIMITED, times=2)
    feishu.fail_next("card_update", RATE_LIMITED)
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(payloads.message_event("go", message_id="om_rl"))
        await until(lambda: feishu.replies_to("om_rl"))
        await svc.idle(timeout=20)
    [card] = answer_cards(feishu, "om_rl")
    assert card.elements["answer"] == text
    assert card.card["header"]["template"] == "green"
    assert feishu.violations == []


async def test_image_in_lands_in_uploads(tmp_path, fake_openai, feishu):
    feishu.add_resource("om_img", "img_7", b"\x89PNG fake", "cat.png")
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(
            payloads.message_event({"image_key": "img_7"}, msg_type="image", message_id="om_img")
        )
        await until(lambda: feishu.replies_to("om_img"))
        await svc.idle()
    saved = list(tmp_path.rglob("cat.png"))
    assert len(saved) == 1
    assert saved[0].read_bytes() == b"\x89PNG fake"
    assert "cat.png" in json.dumps(fake_openai.requests[-1].messages)


async def test_overlong_answer_continues_in_second_card(tmp_path, fake_openai, feishu):
    text = ("长" * 2000 + "\n\n") * 6  # ~36 KB: more than one card
    fake_openai.script(Reply(text=text))
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(payloads.message_event("long one", message_id="om_long"))
        await until(lambda: feishu.replies_to("om_long"))
        await svc.idle(timeout=20)
    cards = answer_cards(feishu, "om_long")
    assert len(cards) >= 2
    assert not [c for c in cards if c.streaming]
    shown = "".join(c.elements["answer"] for c in cards)
    assert shown.replace("\n", "") == text.replace("\n", "")
    assert feishu.violations == []


async def test_stop_leaves_no_thread_or_connection(tmp_path, fake_openai, feishu):
    async with harness(tmp_path, fake_openai, feishu):
        await until(lambda: feishu.open_websockets == 1)
    await until(lambda: feishu.open_websockets == 0)
    assert not [t for t in threading.enumerate() if t.name == "feishu-ws"]


async def test_presented_file_is_replied_after_the_answer(tmp_path, fake_openai, feishu):
    report = "/mnt/user-data/outputs/report.md"
    fake_openai.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": report, "content": "# Report\nok"})]),
        Reply(tool_calls=[ToolCall("present_files", {"filepaths": [report]})]),
        Reply(text="Here is your report."),
    )
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(payloads.message_event("write a report", message_id="om_f"))
        await until(lambda: feishu.replies_to("om_f", "file"))
        await svc.idle()
    [card] = answer_cards(feishu, "om_f")
    assert card.elements["answer"] == "Here is your report."
    assert card.card["header"]["template"] == "green"
    [upload] = feishu.recorded("file_upload")
    last_card_op = max(c.at for c in feishu.calls if c.headers["op"].startswith(("card", "elem")))
    assert last_card_op < upload.at  # the answer is final before the file goes out
    [key] = feishu.uploads
    assert feishu.uploads[key] == ("report.md", b"# Report\nok")
    [sent] = feishu.replies_to("om_f", "file")
    assert json.loads(feishu.messages[sent]["content"]) == {"file_key": key}
    assert feishu.messages[sent]["at"] > upload.at
    assert feishu.violations == []


async def test_clarification_answered_with_a_card_button(tmp_path, fake_openai, feishu):
    group = {"chat_type": "group", "chat_id": "oc_team", "mentions": [payloads.mention()]}
    fake_openai.script(
        Reply(
            tool_calls=[
                ToolCall(
                    "ask_clarification", {"question": "Which format?", "options": ["CSV", "Excel"]}
                )
            ]
        )
    )
    async with harness(tmp_path, fake_openai, feishu) as svc:
        feishu.push_event(
            payloads.message_event("@_user_1 export the data", message_id="om_q", **group)
        )
        await until(lambda: feishu.replies_to("om_q"))
        await svc.idle()
        [question] = feishu.replies_to("om_q", "interactive")
        card = feishu.card_of(question)
        assert card.elements["answer"] == "Which format?"
        buttons = card.buttons()
        assert list(buttons) == ["CSV", "Excel"]
        frame = feishu.push_event(
            payloads.card_action(
                buttons["Excel"], chat_id="oc_team", message_id=question, event_id="cb_x"
            )
        )
        assert feishu.wait_ack(frame).code == 200
        await until(lambda: len(fake_openai.requests) == 2)
        await svc.idle()
    first, answer = FakeOpenAI.user_texts(fake_openai.requests[1])
    assert "export the data" in first
    assert answer.endswith("Excel")
    [reply] = feishu.replies_to(question, "interactive")  # the pressed card, in its topic
    assert feishu.messages[reply]["reply_in_thread"]
    assert feishu.card_of(reply).elements["answer"] == f"echo: {answer}"
    assert feishu.violations == []
