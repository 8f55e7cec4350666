"""Long-term memory end to end: recording channel → service → agent → fake OpenAI server, where
the extraction pass is one more request the fake answers with JSON."""

from __future__ import annotations

import asyncio
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
            for word, items in facts.items() if word in talk for fact in items
        ]
        found.append({"content": "Weak guess", "category": "context", "confidence": 0.3})
        return Reply(text=json.dumps({"work": None, "personal": None,
                                      "top_of_mind": "fruit" if found else None,
                                      "facts": found, "remove": []}))

    return respond


def harness(tmp_path: Path, fake: FakeOpenAI, debounce: float = 0.05) -> ServiceHarness:
    return ServiceHarness(tmp_path, fake, {"test": {"enabled": True}},
                          agent={"memory": {"debounce_seconds": debounce},
                                 "title": {"enabled": False}})


def memory_of(svc: ServiceHarness) -> MemoryService:
    assert svc.app is not None
    return svc.app.runner.memory


async def until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


def chat_requests(fake: FakeOpenAI, text: str) -> list[ChatRequest]:
    return [r for r in fake.requests
            if not is_extraction(r) and text in FakeOpenAI.user_texts(r)[-1]]


def system_text(request: ChatRequest) -> str:
    return text_of(request.messages[0].get("content"))


async def test_fact_follows_the_person_not_the_group(tmp_path: Path,
                                                    fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = learning({"kumquat": ["Loves kumquats"]})
    async with harness(tmp_path, fake_openai) as svc:
        ch = svc.channel("test")
        assert isinstance(ch, RecordingChannel)
        await ch.inject("I really love kumquat jam", chat_id="dm-alice", user="alice")
        await svc.idle()
        await until(lambda: bool(memory_of(svc).listing("test:alice").facts))
        for user, text in (("bob", "bob asks: which fruit?"), ("alice", "alice asks: which fruit?"),
                           ("bob", "bob again: and now?")):
            await ch.inject(text, chat_id="team", user=user, chat_type="group")
            await svc.idle()
        await until(lambda: not memory_of(svc).store.has_pending())
        bob_memory = memory_of(svc).listing("test:bob")
    alice_in_group = chat_requests(fake_openai, "alice asks")[0]
    assert "Loves kumquats" in system_text(alice_in_group)
    assert "<memory>" in system_text(alice_in_group)
    for text in ("bob asks", "bob again"):
        assert "kumquat" not in system_text(chat_requests(fake_openai, text)[0]).lower()
    assert not bob_memory.facts  # the extractor saw only bob's own exchanges
    bob_passes = [r for r in fake_openai.requests
                  if is_extraction(r) and "bob" in FakeOpenAI.user_texts(r)[-1]]
    assert bob_passes
    assert all("alice asks" not in FakeOpenAI.user_texts(r)[-1] for r in bob_passes)
    assert all("kumquat" not in FakeOpenAI.user_texts(r)[-1] for r in bob_passes)
    # low-confidence facts are not kept
    assert [f.content for f in memory_of_facts(tmp_path, "test:alice")] == ["Loves kumquats"]


def memory_of_facts(tmp_path: Path, user_id: str) -> list[Any]:
    from agent.memory import MemoryStore

    store = MemoryStore(tmp_path / "memory.db")
    try:
        return store.facts(user_id)
    finally:
        store.close()


async def test_memory_command_lists_forgets_and_clears(tmp_path: Path,
                                                      fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = learning({"tea": ["Drinks green tea", "Works night shifts"]})
    async with harness(tmp_path, fake_openai) as svc:
        ch = svc.channel("test")
        assert isinstance(ch, RecordingChannel)
        await ch.inject("/memory")
        await ch.inject("I drink tea at night, I work night shifts")
        await svc.idle()
        await until(lambda: len(memory_of(svc).listing("test:u1").facts) == 2)
        for text in ("/memory", "/memory forget 1", "/memory forget 9", "/memory"):
            await ch.inject(text)
            await svc.idle()
        await ch.inject("/memory", chat_id="team", chat_type="group")
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


async def test_pending_exchanges_survive_a_restart(tmp_path: Path,
                                                   fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = learning({"kiwi": ["Grows kiwis"]})
    svc = harness(tmp_path, fake_openai, debounce=0.3)
    async with svc:
        ch = svc.channel("test")
        assert isinstance(ch, RecordingChannel)
        await ch.inject("my kiwi vines are thriving")
        await svc.idle()
    assert not [r for r in fake_openai.requests if is_extraction(r)]
    async with svc:
        await until(lambda: bool(memory_of(svc).listing("test:u1").facts))
        assert memory_of(svc).listing("test:u1").facts[0].content == "Grows kiwis"


async def test_disabled_memory_learns_nothing(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = learning({"plum": ["Likes plums"]})
    svc = ServiceHarness(tmp_path, fake_openai, {"test": {"enabled": True}},
                         agent={"memory": {"enabled": False, "debounce_seconds": 0}})
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
