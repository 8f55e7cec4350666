"""End to end through the spine: recording channel → bus → dispatcher → agent (real
langchain-openai against the fake OpenAI server) → reply streamer → recording channel."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest

from channels.base import Attachment, Capabilities, PublishResult, RateBudget, RateLimited
from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")

Storage = dict[str, Any]  # the `storage` fixture: every test runs on SQLite and on PostgreSQL


def harness(
    tmp_path: Path, fake: FakeOpenAI, storage: Storage, **channel_cfg: object
) -> ServiceHarness:
    caps = channel_cfg.pop("capabilities", None)
    kwargs = {"test": {"capabilities": caps}} if caps else None
    return ServiceHarness(
        tmp_path,
        fake,
        {"test": {"enabled": True, **channel_cfg}},
        channel_kwargs=kwargs,
        storage=storage,
    )


def chan(svc: ServiceHarness) -> RecordingChannel:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    return channel


async def test_turn_streams_then_finishes(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    text = "one two three four five six seven eight nine ten " * 3
    fake_openai.script(Reply(text=text, tokens_per_second=200))
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        assert await ch.inject("hi there") is PublishResult.accepted
        await svc.idle()
    kinds = [c.kind for c in ch.calls]
    assert kinds[0] == "open"
    assert kinds[-1] == "finish"
    updates = ch.of("update")
    assert len(updates) >= 2, kinds
    assert all(text.startswith(u.text) for u in updates)  # every update is the whole doc so far
    final = ch.of("finish")[0]
    assert final.doc is not None
    assert final.doc.status == "done"
    assert final.text == text


async def test_new_starts_a_fresh_thread(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        await ch.say("remember the word kumquat", "what word?", "/new", "and now?")
        await svc.idle()
    assert "New conversation started." in ch.texts()
    second, third = fake_openai.requests[1], fake_openai.requests[2]
    assert "remember the word kumquat" in FakeOpenAI.user_texts(second)[0]
    assert not any("kumquat" in t for t in FakeOpenAI.user_texts(third))


async def test_models_switches_per_conversation(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        await ch.say("/models", "/models smart", "hello", "/models nonesuch")
        await ch.inject("other chat", chat_id="c2")
        await svc.idle()
    listing = ch.of("finish")[0]
    assert listing.doc is not None
    assert [b.value for b in listing.doc.buttons] == ["/models fast", "/models smart"]
    assert "- `fast` — Fast ✓" in listing.text  # a list item marked ✓, not a `*` bullet
    assert any("Smart" in t for t in ch.texts())
    assert any("Unknown model `nonesuch`" in c.text for c in ch.of("finish"))
    models = {FakeOpenAI.user_texts(r)[-1]: r.model for r in fake_openai.requests}
    assert models["hello"] == "fake-smart"
    assert models["other chat"] == "fake-fast"


async def test_conversations_run_together_in_order(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    fake_openai.responder = lambda body: Reply(
        text="ok " + FakeOpenAI.user_texts(body)[-1], delay=0.2
    )
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        for i in range(3):
            await ch.inject(f"a{i}", chat_id="A")
            await ch.inject(f"b{i}", chat_id="B")
        await svc.idle()
    assert [t for t in ch.texts("A")] == ["ok a0", "ok a1", "ok a2"]
    assert [t for t in ch.texts("B")] == ["ok b0", "ok b1", "ok b2"]
    # the lanes overlapped: B's first request reached the model before A's second could start
    arrived = {FakeOpenAI.user_texts(r)[-1]: r.at for r in fake_openai.requests}
    assert arrived["b0"] < arrived["a1"]
    assert arrived["a0"] < arrived["a1"] < arrived["a2"]
    assert len(ch.of("queued", "A")) == 2


async def test_stop_cancels_the_running_reply(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    fake_openai.script(Reply(text="a long answer that stalls " * 5, stall_after=3))
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        await ch.inject("write a lot")
        await fake_openai.wait_requests(1)
        await ch.wait_for("update")
        await ch.inject("/stop")
        await ch.wait_for("text")
        await ch.inject("/stop")
        await svc.idle()
        fake_openai.release()
    finals = ch.of("finish")
    assert finals[0].doc is not None
    assert finals[0].doc.status == "cancelled"
    assert ch.of("text")[0].text == "Stopped the running reply."
    assert ch.of("text")[1].text == "Nothing is running."


async def test_interrupt_policy_cancels_and_runs_the_new_message(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    fake_openai.script(Reply(text="slow answer that stalls " * 5, stall_after=2))
    async with harness(tmp_path, fake_openai, storage, busy_policy="interrupt") as svc:
        ch = chan(svc)
        await ch.inject("first")
        await ch.wait_for("update")
        await ch.inject("second")
        await svc.idle()
        fake_openai.release()
    finals = ch.of("finish")
    assert [f.doc.status for f in finals if f.doc] == ["cancelled", "done"]
    assert finals[1].text == "echo: second"
    assert not ch.of("queued")


async def test_redelivered_event_is_answered_once(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        assert await ch.inject("hello", event_id="evt-1") is PublishResult.accepted
        await svc.idle()
        assert await ch.inject("hello", event_id="evt-1") is PublishResult.duplicate
        await svc.restart()
        ch = chan(svc)
        assert await ch.inject("hello", event_id="evt-1") is PublishResult.duplicate
        await svc.idle()
    assert len(fake_openai.requests) == 1


async def test_answer_cut_by_restart_is_answered_after(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    fake_openai.script(Reply(text="never finished " * 10, stall_after=2))
    svc = harness(tmp_path, fake_openai, storage)
    await svc.start()
    ch = chan(svc)
    await ch.inject("important question", event_id="evt-9")
    await ch.wait_for("update")
    await svc.stop()  # grace (2 s) runs out while the model stalls
    fake_openai.release()
    cut = ch.of("finish")[0]
    assert cut.doc is not None
    assert cut.doc.status == "cancelled"
    assert "answered again" in cut.doc.note
    await svc.start()
    try:
        ch = chan(svc)
        await svc.idle()
        assert ch.texts() == ["echo: important question"]
    finally:
        await svc.stop()


# SQLite only: the queue fills when messages arrive faster than the dispatcher takes them; on
# PostgreSQL every admission waits for the database, so injects one after another never fill it.
# The overflow path does not depend on the backend (its journal `forget` is in test_stores.py).
@pytest.mark.parametrize("storage", [{"backend": "sqlite"}])
async def test_full_queue_tells_the_sender(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    svc = ServiceHarness(
        tmp_path,
        fake_openai,
        {"test": {"enabled": True}, "inbound_queue_size": 1},
        storage=storage,
    )
    async with svc:
        ch = chan(svc)
        # at once: the bus admits each in a task of its own (a cancelled caller cannot cut an
        # admission short), so messages sent one after another leave the worker time to drain
        results = list(
            await asyncio.gather(*(ch.inject(f"m{i}", chat_id=f"c{i}") for i in range(3)))
        )
        await svc.idle()
        assert PublishResult.busy in results
        busy_texts = [t for t in ch.texts() if "too many messages" in t]
        assert len(busy_texts) == results.count(PublishResult.busy)
        # the refused event was released: its redelivery is taken
        refused = results.index(PublishResult.busy)
        assert (
            await ch.inject("again", chat_id=f"c{refused}", event_id=f"e{refused + 1}")
            is PublishResult.accepted
        )
        await svc.idle()
        assert svc.app is not None
        assert svc.app.bus.counters.overflowed == results.count(PublishResult.busy)


async def test_rate_limited_final_is_waited_out(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    caps = Capabilities(
        max_text_len=1000, edit_budget=(RateBudget(scope="chat", per_second=50, burst=1),)
    )
    async with harness(tmp_path, fake_openai, storage, capabilities=caps) as svc:
        ch = chan(svc)
        clock = VirtualClock()
        ch.pacer.clock, ch.pacer.sleep = clock, clock.sleep
        ch.failures["finish"] = [RateLimited(30.0, scope="chat"), RateLimited(30.0, scope="chat")]
        await ch.inject("hello")
        await svc.idle()
    finishes = ch.of("finish")
    assert len(finishes) == 3  # rate limits are waited out as often as the platform asks
    assert finishes[2].text == finishes[0].text == "echo: hello"
    assert finishes[1].at - finishes[0].at >= 30.0 - 1e-6  # virtual time: not before retry_after
    assert finishes[2].at - finishes[1].at >= 30.0 - 1e-6


async def test_updates_respect_the_channel_budget(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    caps = Capabilities(
        max_text_len=1000, edit_budget=(RateBudget(scope="chat", per_second=4, burst=1),)
    )
    fake_openai.script(Reply(text="word " * 60, tokens_per_second=150))
    async with harness(tmp_path, fake_openai, storage, capabilities=caps) as svc:
        ch = chan(svc)
        clock = VirtualClock()
        ch.pacer.clock, ch.pacer.sleep = clock, clock.sleep
        await ch.inject("go")
        await svc.idle()
    sends = ch.of("update") + ch.of("finish")
    times = sorted(c.at for c in sends)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(sends) >= 2
    assert min(gaps) >= 0.25 - 1e-6  # 4/s with burst 1 (virtual time)


async def test_long_answer_is_split_without_breaking_code(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    code = "```python\n" + "\n".join(f"print({i})" for i in range(120)) + "\n```"
    answer = "Intro paragraph.\n\n" + code + "\n\nDone."
    fake_openai.script(Reply(text=answer))
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        await ch.inject("code please")
        await svc.idle()
    parts = [c.text for c in ch.of("finish") + ch.of("continuation")]
    assert len(parts) >= 2
    assert all(len(p) <= 1000 for p in parts)
    assert all(p.count("```") % 2 == 0 for p in parts)
    assert "print(119)" in parts[-1] or "print(119)" in "".join(parts)


async def test_failed_run_ends_with_a_readable_error(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    fake_openai.script(Reply(status=500, error="upstream exploded"))
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        await ch.inject("hello")
        await svc.idle()
    final = ch.of("finish")[0]
    assert final.doc is not None
    assert final.doc.status == "failed"
    assert final.doc.note
    assert "Traceback" not in final.doc.note


async def test_attachment_reaches_the_agent_and_oversize_is_refused(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        ch.files["f1"] = b"hello file"
        ch.files["big"] = b"x" * 10
        big = Attachment(name="big.bin", ref="big", size=50 * 1024 * 1024)
        await ch.inject("read this", attachments=(Attachment(name="notes.txt", ref="f1"), big))
        await svc.idle()
    texts = FakeOpenAI.user_texts(fake_openai.requests[0])
    assert "/mnt/user-data/uploads/notes.txt" in texts[-1]
    assert any("big.bin was not read" in t and "20 MB" in t for t in ch.texts())


async def test_unknown_command_gets_help_and_paths_go_to_chat(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: Storage
) -> None:
    async with harness(tmp_path, fake_openai, storage) as svc:
        ch = chan(svc)
        await ch.inject("/frobnicate now")
        await svc.idle()
        await ch.inject("/etc/hosts is broken")
        await ch.inject("@Antler /status")
        await svc.idle()
    texts = ch.texts()
    assert texts[0].startswith("Commands:")
    assert "echo: /etc/hosts is broken" in texts
    assert any(t.startswith("Thread: ") for t in texts)
