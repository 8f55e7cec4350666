"""DeerFlow's `/api/user-profile` (USER.md) over Antler's people: the caller's own profile by
default, anyone's with `?person=`, in DeerFlow's shapes; it reaches the prompt of the person's
turns (an API run: the caller's; a chat: the sender's, whichever agent answers), survives a
memory import and goes when the person is forgotten."""

from __future__ import annotations

from typing import Any

from langgraph_sdk import get_client

from tests.e2e.config.service import system_text
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.recording_channel import RecordingChannel
from tests.gateway.conftest import AUTH, Api
from tests.gateway.deerflow_shapes import UserProfileResponse

ROUTE = "/api/user-profile"
ADA = "I am Ada, a data engineer in Oslo. Answer in short bullet points."


async def profile(api: Api, query: str = "") -> str | None:
    status, body, _ = await api.call("GET", ROUTE + query)
    assert status == 200, body
    return UserProfileResponse.model_validate(body).content


async def test_read_and_write_in_deerflows_shapes(api: Api) -> None:
    assert await profile(api) is None
    status, body, _ = await api.call("PUT", ROUTE, json={"content": ADA})
    assert (status, UserProfileResponse.model_validate(body).content) == (200, ADA)
    assert await profile(api) == ADA
    assert await profile(api, "?person=test:u1") is None  # the caller's, nobody else's
    assert await api.app.runner.memory.store.profile("api") == ADA
    status, body, _ = await api.call("PUT", ROUTE, json={"content": "x" * 16_001})
    assert status == 422
    status, body, _ = await api.call("PUT", ROUTE, json={})  # DeerFlow's default: empty
    assert (status, body) == (200, {"content": None})
    assert await profile(api) is None


async def test_the_profile_reaches_the_prompt(api: Api, fake_openai: FakeOpenAI) -> None:
    await api.call("PUT", ROUTE, json={"content": ADA})
    client = get_client(url=api.base + "/api", headers=AUTH)
    thread = await client.threads.create()
    said: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}]}
    await client.runs.wait(thread["thread_id"], "lead_agent", input=said)
    prompt = system_text(fake_openai.last_request)
    assert "<user_profile>" in prompt
    assert ADA in prompt

    # a chat person's own profile, for their turns only
    bob = "Bob, a nurse; prefers plain words."
    await api.call("PUT", ROUTE + "?person=test:bob", json={"content": bob})
    channel = api.svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    before = len(fake_openai.requests)
    await channel.say("hello", user="bob")
    await fake_openai.wait_requests(before + 1)
    prompt = system_text(fake_openai.requests[before])
    assert bob in prompt
    assert ADA not in prompt
    await api.svc.idle()


async def test_kept_by_an_import_and_gone_with_the_person(api: Api) -> None:
    await api.call("PUT", ROUTE, json={"content": ADA})
    status, _, _ = await api.call("POST", "/api/memory/import", json={"facts": [{"content": "y"}]})
    assert status == 200
    assert await profile(api) == ADA
    status, _, _ = await api.call("DELETE", "/api/memory")
    assert status == 200
    assert await profile(api) is None
