"""Long-term memory end to end: recording channel → service → agent → fake OpenAI server, where
the extraction pass is one more request the fake answers with JSON."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent.memory import MemoryService
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, echo_responder, text_of
from tests.fakes.openai_wire import Reply
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")

EXTRACTOR = "memory extractor"


def is_extraction(request: ChatRequest | dict[str, Any]) -> bool:
    body = request.body if isinstance(request, ChatRequest) else request
    messages = body.get("messages", [])
    return bool(messages) and EXTRACTOR in text_of(messages[0].get("content"))


def learning(facts: dict[str, list[str]]) -> Callable[[dict[str, Any]], Reply]:
    """Answer extraction requests with the facts whose trigger word the exchanges contain."""

    def respond(body: dict[str, Any]) -> Reply:
        if not is_extraction(body):
            return echo_responder(body)
        talk = FakeOpenAI.user_texts(body)[-1].split("New exchanges:")[-1]
        found = [
            {"content": fact, "category": "preference", "confidence": 0.9}
            for word, items in facts.items()
            if word in talk
            for fact in items
        ]
        found.append({"content": "Weak guess", "category": "context", "confidence": 0.3})
        return Reply(
            text=json.dumps(
                {
                    "work": None,
                    "personal": None,
                    "top_of_mind": "fruit" if found else None,
                    "facts": found,
                    "remove": [],
                }
            )
        )

    return respond


def harness(
    tmp_path: Path, fake: FakeOpenAI, debounce: float = 0.05, storage: dict[str, Any] | None = None
) -> ServiceHarness:
    return ServiceHarness(
        tmp_path,
        fake,
        {"test": {"enabled": True}},
        agent={"memory": {"debounce_seconds": debounce}, "title": {"enabled": False}},
        storage=storage or {},
    )


def memory_of(svc: ServiceHarness) -> MemoryService:
    assert svc.app is not None
    return svc.app.runner.memory


async def until(check: Callable[[], Any], timeout: float = 5.0) -> None:
    """Wait until `check()` (a value or an awaitable of one) is true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await _value(check()):
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


async def _value(found: Any) -> Any:
    return await found if inspect.isawaitable(found) else found


async def facts_of(svc: ServiceHarness, user_id: str) -> tuple[Any, ...]:
    return (await memory_of(svc).listing(user_id)).facts


def chat_requests(fake: FakeOpenAI, text: str) -> list[ChatRequest]:
    return [
        r for r in fake.requests if not is_extraction(r) and text in FakeOpenAI.user_texts(r)[-1]
    ]


def system_text(request: ChatRequest) -> str:
    return text_of(request.messages[0].get("content"))


async def test_fact_follows_the_person_not_the_group(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = learning({"kumquat": ["Loves kumquats"]})
    async with harness(tmp_path, fake_openai) as svc:
        ch = svc.channel("test")
        assert isinstance(ch, RecordingChannel)
        await ch.inject("I really love kumquat jam", chat_id="dm-alice", user="alice")
        await svc.idle()
        await until(lambda: facts_of(svc, "test:alice"))
        for user, text in (
            ("bob", "bob asks: which fruit?"),
            ("alice", "alice asks: which fruit?"),
            ("bob", "bob again: and now?"),
        ):
            await ch.inject(text, chat_id="team", user=user, chat_type="group", mentions_bot=True)
            await svc.idle()
        await until(lambda: _no_pending(svc))
        bob_memory = await memory_of(svc).listing("test:bob")
    alice_in_group = chat_requests(fake_openai, "alice asks")[0]
    assert "Loves kumquats" in system_text(alice_in_group)
    assert "<memory>" in system_text(alice_in_group)
    for text in ("bob asks", "bob again"):
        assert "kumquat" not in system_text(chat_requests(fake_openai, text)[0]).lower()
    assert not bob_memory.facts  # the extractor saw only bob's own exchanges
    bob_passes = [
        r
        for r in fake_openai.requests
        if is_extraction(r) and "bob" in FakeOpenAI.user_texts(r)[-1]
    ]
    assert bob_passes
    assert all("alice asks" not in FakeOpenAI.user_texts(r)[-1] for r in bob_passes)
    assert all("kumquat" not in FakeOpenAI.user_texts(r)[-1] for r in bob_passes)
    # low-confidence facts are not kept
    facts = await memory_of_facts(tmp_path, "test:alice")
    assert [f.content for f in facts] == ["Loves kumquats"]


async def _count_is(svc: ServiceHarness, user_id: str, n: int) -> bool:
    return len(await facts_of(svc, user_id)) == n


async def _no_pending(svc: ServiceHarness) -> bool:
    return not await memory_of(svc).store.has_pending()


async def memory_of_facts(tmp_path: Path, user_id: str) -> list[Any]:
    from agent.memory import SqliteMemoryStore

    store = SqliteMemoryStore(tmp_path / "memory.db")
    try:
        return await store.facts(user_id)
    finally:
        store.close()


async def test_memory_command_lists_forgets_and_clears(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: dict[str, Any]
) -> None:
    fake_openai.responder = learning({"tea": ["Drinks green tea", "Works night shifts"]})
    async with harness(tmp_path, fake_openai, storage=storage) as svc:
        ch = svc.channel("test")
        assert isinstance(ch, RecordingChannel)
        await ch.inject("/memory")
        await ch.inject("I drink tea at night, I work night shifts")
        await svc.idle()
        await until(lambda: _count_is(svc, "test:u1", 2))
        for text in ("/memory", "/memory forget 1", "/memory forget 9", "/memory"):
            await ch.inject(text)
            await svc.idle()
        await ch.inject("/memory", chat_id="team", chat_type="group")
        await svc.idle()  # (another chat: its answer could otherwise come after the next)
        await ch.inject("/memory clear")
        await ch.inject("/memory")
        await svc.idle()
        texts = [t for t in ch.texts() if not t.startswith("echo:")]
    empty, listing, forgot, missing, after, group, cleared, final = texts
    assert empty == "I don't remember anything about you yet."
    assert "1. Drinks green tea (preference)" in listing
    assert "2. Works night shifts (preference)" in listing
    assert "Current focus: fruit" in listing
    assert forgot == "Forgotten: Drinks green tea"
    assert "no fact number 9" in missing
    assert "1. Works night shifts" in after
    assert "Drinks green tea" not in after
    assert "direct message" in group
    assert "night" not in group
    assert "forgot everything" in cleared
    assert final == "I don't remember anything about you yet."


async def test_debounce_batches_exchanges(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = learning({})
    async with harness(tmp_path, fake_openai, debounce=0.4) as svc:
        ch = svc.channel("test")
        assert isinstance(ch, RecordingChannel)
        await ch.inject("first note", chat_id="a", user="ann")
        await ch.inject("second note", chat_id="b", user="ann")
        await ch.inject("third note", chat_id="c", user="ben")
        await svc.idle()
        assert not [r for r in fake_openai.requests if is_extraction(r)]  # not on the reply path
        await until(lambda: memory_of(svc).flushes >= 1)
    passes = [FakeOpenAI.user_texts(r)[-1] for r in fake_openai.requests if is_extraction(r)]
    assert len(passes) == 2  # one per person, each with all of that person's exchanges
    ann = next(p for p in passes if "first note" in p)
    assert "second note" in ann
    assert "third note" not in ann


async def test_pending_exchanges_survive_a_restart(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: dict[str, Any]
) -> None:
    fake_openai.responder = learning({"kiwi": ["Grows kiwis"]})
    svc = harness(tmp_path, fake_openai, debounce=0.3, storage=storage)
    async with svc:
        ch = svc.channel("test")
        assert isinstance(ch, RecordingChannel)
        await ch.inject("my kiwi vines are thriving")
        await svc.idle()
    assert not [r for r in fake_openai.requests if is_extraction(r)]
    async with svc:
        await until(lambda: facts_of(svc, "test:u1"))
        assert (await facts_of(svc, "test:u1"))[0].content == "Grows kiwis"
    # on PostgreSQL nothing of memory is kept in the data_dir
    assert (tmp_path / "memory.db").exists() is (storage["backend"] == "sqlite")


async def test_disabled_memory_learns_nothing(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = learning({"plum": ["Likes plums"]})
    svc = ServiceHarness(
        tmp_path,
        fake_openai,
        {"test": {"enabled": True}},
        agent={"memory": {"enabled": False, "debounce_seconds": 0}},
    )
    async with svc:
        ch = svc.channel("test")
        assert isinstance(ch, RecordingChannel)
        await ch.inject("I like plum cake")
        await ch.inject("/memory")
        await svc.idle()
        await asyncio.sleep(0.05)
    assert "not enabled" in ch.texts()[-1]
    assert not [r for r in fake_openai.requests if is_extraction(r)]
    assert not (tmp_path / "memory.db").exists()
