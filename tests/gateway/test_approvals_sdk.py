"""Approvals through the official langgraph-sdk client: a run that calls a tool the policy
names pauses (the thread `interrupted`, the request in `interrupts` and `__interrupt__` in the
values) and is resumed with `command={"resume": ...}`: approved, the tool runs; denied, the
model is told. A resume with nothing waiting is refused. An operator answers a chat's request
through `/api/approvals`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from langgraph_sdk.errors import APIStatusError

from tests.deploy import ALWAYS, TARGET, WRITE, deployed
from tests.e2e.hands_helpers import chan
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway.conftest import Api, make_harness
from tests.gateway.test_sdk import HUMAN, client


@pytest.fixture
async def api(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> AsyncIterator[Api]:
    async with (
        make_harness(tmp_path, fake_openai, access=ALWAYS) as svc,
        aiohttp.ClientSession() as session,
    ):
        yield Api(svc, session)


def written(api: Api) -> list[str]:
    return deployed(api.svc.data_dir)


async def paused(api: Api, fake_openai: FakeOpenAI, then: str) -> tuple[Any, str, dict[str, Any]]:
    """A run on a new thread paused at the write (the model answers `then` once it runs): the
    SDK client, the thread and the interrupt."""
    sdk = client(api)
    fake_openai.script(WRITE, Reply(text=then))
    thread = await sdk.threads.create()
    values = await sdk.runs.wait(thread["thread_id"], "lead_agent", input=HUMAN)
    [interrupt] = values["__interrupt__"]
    return sdk, thread["thread_id"], interrupt


async def test_a_paused_run_is_interrupted_and_resumed_with_a_command(
    api: Api, fake_openai: FakeOpenAI
) -> None:
    sdk, thread_id, interrupt = await paused(api, fake_openai, "Deployed v7.")
    assert interrupt["value"]["type"] == "approval"
    assert interrupt["value"]["calls"][0]["name"] == "write_file"
    assert written(api) == []
    assert (await sdk.threads.get(thread_id))["status"] == "interrupted"
    state = await sdk.threads.get_state(thread_id)
    assert [i["id"] for i in state["interrupts"]] == [interrupt["id"]]
    parts = [
        p
        async for p in sdk.runs.stream(
            thread_id, "lead_agent", command={"resume": "approve"}, stream_mode="values"
        )
    ]
    final = [p for p in parts if p.event == "values"][-1].data
    assert final["messages"][-1]["content"] == "Deployed v7."
    assert written(api) == ["v7"]
    assert (await sdk.threads.get(thread_id))["status"] == "idle"
    assert (await sdk.threads.get_state(thread_id))["interrupts"] == []


async def test_deny_through_the_api_and_nothing_left_to_resume(
    api: Api, fake_openai: FakeOpenAI
) -> None:
    sdk, thread_id, _ = await paused(api, fake_openai, "Not deployed.")
    values = await sdk.runs.wait(
        thread_id, "lead_agent", command={"resume": {"decision": "deny", "by": "Ops"}}
    )
    assert values["messages"][-1]["content"] == "Not deployed."
    assert written(api) == []
    tool = [m for m in fake_openai.requests[-1].messages if m.get("role") == "tool"]
    assert "denied by Ops" in tool[0]["content"]
    run = await sdk.runs.create(thread_id, "lead_agent", command={"resume": "approve"})
    await sdk.runs.join(thread_id, run["run_id"])
    assert (await sdk.runs.get(thread_id, run["run_id"]))["status"] == "error"
    with pytest.raises(APIStatusError):
        await sdk.runs.create(thread_id, "lead_agent", command={"goto": "model"})


async def test_an_operator_approves_a_chat_request_through_the_api(
    api: Api, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(WRITE, Reply(text="Deployed v7."))
    ch = chan(api.svc)
    await ch.inject("deploy v7", chat_id="ops", chat_type="group", mentions_bot=True)
    await api.svc.idle()
    status, body, _ = await api.call("GET", "/api/approvals")
    assert status == 200
    [waiting] = body["approvals"]
    assert waiting["calls"] == [f"write_file(path='{TARGET}', content='v7')"]
    assert waiting["requester"] == "test:u1"
    status, _, _ = await api.call(
        "POST", f"/api/approvals/{waiting['id']}", json={"decision": "approve"}
    )
    assert status == 202
    await fake_openai.wait_requests(2, timeout=20)
    await api.svc.idle()
    assert written(api) == ["v7"]
    assert "Approval needed" in ch.texts("ops")[-1]  # the card, updated
    assert "✅ Approved by admin" in ch.texts("ops")[-1]
    assert (await api.call("GET", "/api/approvals"))[1] == {"approvals": []}
    status, body, _ = await api.call(
        "POST", f"/api/approvals/{waiting['id']}", json={"decision": "deny"}
    )
    assert status == 404
    status, _, _ = await api.call("POST", "/api/approvals/x", json={"decision": "maybe"})
    assert status == 422
