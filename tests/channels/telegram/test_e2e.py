"""End to end: fake Telegram -> PTB -> service -> agent (fake OpenAI) -> PTB -> fake Telegram."""

from __future__ import annotations

import itertools
import json
from typing import Any

import aiohttp

from tests.channels.telegram.served import telegram_service as service
from tests.fakes.openai_server import text_of
from tests.fakes.openai_wire import Reply, ToolCall

OUTPUTS = "/mnt/user-data/outputs"


def prompt(request: Any) -> str:
    return json.dumps([text_of(m.get("content")) for m in request.body["messages"]])


async def test_group_needs_a_mention(tmp_path, fake_openai, fake) -> None:
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(-100, "chatter nobody asked about")
        fake.push_message(-100, "@antler_bot ping")
        await fake_openai.wait_requests(1)
        await svc.idle()
    assert len(fake_openai.requests) == 1
    assert "chatter" not in prompt(fake_openai.requests[0])
    assert fake.shown_texts(-100)[-1].endswith("ping")


async def test_forum_topics_have_separate_histories(tmp_path, fake_openai, fake) -> None:
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(-200, "@antler_bot the secret is kumquat", thread_id=1)
        await fake_openai.wait_requests(1)
        await svc.idle()
        fake.push_message(-200, "@antler_bot what is the secret?", thread_id=2)
        await fake_openai.wait_requests(2)
        await svc.idle()
    assert "kumquat" not in prompt(fake_openai.requests[1])
    threads = {c.body.get("message_thread_id") for c in fake.calls_of("sendMessage")}
    assert threads == {1, 2}
    edits = fake.calls_of("sendMessage", "editMessageText")
    gaps = [b.at - a.at for a, b in itertools.pairwise(edits)]
    assert all(gap >= 3.0 for gap in gaps)  # one group: one visible call per 3 s
    assert fake.violations == []


async def test_models_buttons_switch_the_model_and_new_resets(tmp_path, fake_openai, fake) -> None:
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(555, "/models")
        await fake.wait_for(lambda: fake.calls_of("sendMessage"), timeout=10)
        await svc.idle()
        keyboard = fake.calls_of("sendMessage")[-1].body["reply_markup"]["inline_keyboard"]
        values = [b["callback_data"] for row in keyboard for b in row]
        assert "\x1fv:/models smart" in values
        fake.push_callback(555, 1, "\x1fv:/models smart")
        await fake.wait_for(lambda: fake.calls_of("answerCallbackQuery"))
        await svc.idle()
        fake.push_message(555, "kiwi")
        await fake_openai.wait_requests(1)
        await svc.idle()
        fake.push_message(555, "/new")
        fake.push_message(555, "fresh?")
        await fake_openai.wait_requests(2)
        await svc.idle()
    assert fake_openai.requests[0].model == "fake-smart"
    assert "kiwi" not in prompt(fake_openai.requests[1])


async def test_429_mid_stream_is_waited_out_and_the_final_arrives(
    tmp_path, fake_openai, fake
) -> None:
    text = "slow answer " * 40
    fake_openai.script(Reply(text=text, tokens_per_second=60))
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(555, "hello")
        await fake.wait_for(lambda: fake.calls_of("sendMessageDraft"))
        fake.fail_next("sendMessageDraft", 429, "Too Many Requests: retry after 1", retry_after=1)
        await fake.wait_for(lambda: fake.sent_texts(555), timeout=15)
        await svc.idle()
    assert fake.sent_texts(555) == [text.strip()]
    assert fake.violations == []  # nothing was called before retry_after had passed


async def test_photo_path_reaches_the_model(tmp_path, fake_openai, fake) -> None:
    fake.add_file("PH", b"\xff\xd8fake jpeg")
    photo = [
        {"file_id": "PH", "file_unique_id": "uniq", "width": 10, "height": 10, "file_size": 11}
    ]
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(555, None, photo=photo, caption="what is this?")
        await fake_openai.wait_requests(1)
        await svc.idle()
    assert "photo-uniq.jpg" in prompt(fake_openai.requests[0])
    assert next(iter(tmp_path.rglob("photo-uniq.jpg"))).read_bytes() == b"\xff\xd8fake jpeg"


async def test_webhook_secret_mismatch_is_403(tmp_path, fake_openai, fake) -> None:
    cfg: dict[str, Any] = {
        "mode": "webhook",
        "webhook_url": "https://bot.example/tg",
        "webhook_secret": "s3",
    }
    async with service(tmp_path, fake_openai, fake, **cfg) as svc:
        update = {"update_id": 1, "message": fake.message(555, "hi")}
        async with aiohttp.ClientSession() as http:
            url = f"{svc.gateway_url}/tg"
            bad = await http.post(
                url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "no"}
            )
            good = await http.post(
                url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "s3"}
            )
        assert (bad.status, good.status) == (403, 200)
        await fake_openai.wait_requests(1)
        await svc.idle()
    assert len(fake_openai.requests) == 1


async def test_same_update_after_restart_is_answered_once(tmp_path, fake_openai, fake) -> None:
    message = fake.message(555, "only once", message_id=4242)
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_update({"message": message})
        await fake.wait_for(lambda: fake.sent_texts(555), timeout=10)
        await svc.idle()
        await svc.restart()
        fake.push_update({"message": dict(message)})  # Telegram delivers it again
        fake.push_message(555, "next")
        await fake.wait_for(lambda: len(fake.sent_texts(555)) >= 2, timeout=10)
        await svc.idle()
    assert fake.sent_texts(555) == ["echo: only once", "echo: next"]
    assert len(fake_openai.requests) == 2


async def test_presented_file_is_uploaded_after_the_answer(tmp_path, fake_openai, fake) -> None:
    csv = f"{OUTPUTS}/table.csv"
    fake_openai.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": csv, "content": "a,b\n1,2\n"})]),
        Reply(tool_calls=[ToolCall("present_files", {"filepaths": [csv]})]),
        Reply(text="Here is your table."),
    )
    async with service(tmp_path, fake_openai, fake) as svc:
        fake.push_message(555, "make me a table")
        await fake.wait_for(lambda: fake.calls_of("sendDocument"), timeout=10)
        await svc.idle()
    [final] = fake.calls_of("sendMessage")
    [document] = fake.calls_of("sendDocument")
    assert final.body["text"].endswith("\n\nHere is your table.")  # after the tool steps
    assert final.at < document.at
    assert document.body["chat_id"] == 555
    assert document.body["document"]["filename"] == "table.csv"
    assert document.body["document"]["data"] == b"a,b\n1,2\n"
    assert fake.violations == []


async def test_outsider_gets_one_refusal_from_the_service(tmp_path, fake_openai, fake) -> None:
    from bot import texts

    async with service(tmp_path, fake_openai, fake, allowed_users=[42]) as svc:
        fake.push_message(555, "let me in", user_id=7)
        fake.push_message(555, "please", user_id=7)
        fake.push_message(-100, "chatter from an outsider", user_id=7)
        fake.push_message(555, "hi", user_id=42)
        await fake_openai.wait_requests(1)
        await svc.idle()
    assert len(fake_openai.requests) == 1
    refusals = [t for t in fake.sent_texts(555) if t == texts.NOT_ALLOWED]
    assert len(refusals) == 1  # once per user and chat per hour
    assert fake.sent_texts(-100) == []  # not addressed to the bot: ignored without a word
