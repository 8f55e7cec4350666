"""The official langgraph-sdk client against the gateway (`<gateway>/api`), with the agent on the
fake OpenAI server: threads, streamed and waited runs, cancellation, state and history."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway.conftest import TOKEN, Api

HUMAN = {"messages": [{"role": "user", "content": "hello there"}]}


def client(api: Api) -> Any:
    return get_client(
        url=api.base + "/api", api_key=None, headers={"Authorization": f"Bearer {TOKEN}"}
    )


async def wait_status(sdk: Any, thread_id: str, run_id: str, status: str) -> None:
    for _ in range(500):
        if (await sdk.runs.get(thread_id, run_id))["status"] == status:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"run never reached {status}")


async def test_stream_values_and_messages_tuple(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="General Kenobi"))
    sdk = client(api)
    thread = await sdk.threads.create(metadata={"owner": "ops"})
    assert thread["status"] == "idle"
    created: list[Any] = []
    parts = [
        p
        async for p in sdk.runs.stream(
            thread["thread_id"],
            "lead_agent",
            input=HUMAN,
            stream_mode=["values", "messages-tuple"],
            on_run_created=created.append,
        )
    ]
    events = [p.event for p in parts]
    assert events[0] == "metadata"
    assert events[-1] == "end"
    assert "values" in events
    assert "messages" in events
    run_id = parts[0].data["run_id"]
    assert created[0]["run_id"] == run_id  # from the Content-Location header
    assert created[0]["thread_id"] == thread["thread_id"]
    deltas = [
        p.data[0]["content"]
        for p in parts
        if p.event == "messages" and p.data[0]["type"] == "AIMessageChunk"
    ]
    assert "".join(deltas) == "General Kenobi"
    assert all(p.data[1].get("langgraph_node") for p in parts if p.event == "messages")
    final = [p for p in parts if p.event == "values"][-1].data
    assert [m["type"] for m in final["messages"]] == ["human", "ai"]
    assert final["messages"][1]["content"] == "General Kenobi"
    assert FakeOpenAI.user_texts(fake_openai.last_request)[-1] == "hello there"
    run = await sdk.runs.get(thread["thread_id"], run_id)
    assert run["status"] == "success"
    assert run["assistant_id"] == "lead_agent"


async def test_wait_state_history_and_search(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="first answer"), Reply(text="second answer"))
    sdk = client(api)
    thread = await sdk.threads.create(thread_id="ops-thread-1", metadata={"team": "ops"})
    again = await sdk.threads.create(thread_id="ops-thread-1", if_exists="do_nothing")
    assert again["thread_id"] == "ops-thread-1"
    with pytest.raises(httpx.HTTPStatusError) as err:
        await sdk.threads.create(thread_id="ops-thread-1", if_exists="raise")
    assert err.value.response.status_code == 409
    tid = thread["thread_id"]
    first = await sdk.runs.wait(tid, "lead_agent", input=HUMAN)
    assert first["messages"][-1]["content"] == "first answer"
    second = await sdk.runs.wait(
        tid, "lead_agent", input={"messages": [{"type": "human", "content": "more"}]}
    )
    assert [m["content"] for m in second["messages"]][-2:] == ["more", "second answer"]
    state = await sdk.threads.get_state(tid)
    assert state["values"]["messages"][-1]["content"] == "second answer"
    assert state["checkpoint"]["thread_id"] == tid
    history = await sdk.threads.get_history(tid, limit=3)
    assert len(history) == 3
    assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    older = await sdk.threads.get_history(tid, limit=2, before=history[0]["checkpoint"])
    assert older[0]["checkpoint"]["checkpoint_id"] == history[1]["checkpoint"]["checkpoint_id"]
    found = await sdk.threads.search(metadata={"team": "ops"})
    assert [t["thread_id"] for t in found] == [tid]
    got = await sdk.threads.get(tid)
    assert got["values"]["messages"][-1]["content"] == "second answer"
    updated = await sdk.threads.update(tid, metadata={"stage": "done"})
    assert updated["metadata"] == {"team": "ops", "stage": "done"}
    runs = await sdk.runs.list(tid)
    assert [r["status"] for r in runs] == ["success", "success"]


async def test_cancel_and_join(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="one two three four five six", stall_after=1))
    sdk = client(api)
    tid = (await sdk.threads.create())["thread_id"]
    run = await sdk.runs.create(tid, "lead_agent", input=HUMAN)
    assert run["status"] in ("pending", "running")
    await fake_openai.wait_requests(1)
    assert (await sdk.runs.get(tid, run["run_id"]))["status"] == "running"
    assert (await sdk.threads.get(tid))["status"] == "busy"
    await sdk.runs.cancel(tid, run["run_id"], wait=True)
    assert (await sdk.runs.get(tid, run["run_id"]))["status"] == "interrupted"
    assert (await sdk.threads.get(tid))["status"] == "idle"
    joined = await sdk.runs.join(tid, run["run_id"])  # JSON on /join
    assert isinstance(joined, dict)
    late = [p.event async for p in sdk.runs.join_stream(tid, run["run_id"])]
    assert late[-1] == "end"
    with pytest.raises(httpx.HTTPStatusError) as err:
        await sdk.runs.cancel(tid, run["run_id"])
    assert err.value.response.status_code == 409


async def test_one_active_run_reject_and_interrupt(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="slow slow slow slow", stall_after=1), Reply(text="fresh"))
    sdk = client(api)
    tid = (await sdk.threads.create())["thread_id"]
    first = await sdk.runs.create(tid, "lead_agent", input=HUMAN)
    await fake_openai.wait_requests(1)  # the first run is streaming its (stalled) answer
    with pytest.raises(httpx.HTTPStatusError) as err:
        await sdk.runs.create(tid, "lead_agent", input=HUMAN)
    assert err.value.response.status_code == 409
    assert "active run" in err.value.response.json()["detail"]
    joiner = asyncio.create_task(
        _collect(sdk.runs.join_stream(tid, first["run_id"], stream_mode="values"))
    )
    second = asyncio.create_task(
        sdk.runs.wait(
            tid,
            "lead_agent",
            input={"messages": [{"role": "user", "content": "never mind"}]},
            multitask_strategy="interrupt",
        )
    )
    await wait_status(sdk, tid, first["run_id"], "interrupted")
    fake_openai.release()  # the stalled fake stream would otherwise hold the next request
    result = await asyncio.wait_for(second, 10)
    assert result["messages"][-1]["content"] == "fresh"
    assert (await sdk.runs.get(tid, first["run_id"]))["status"] == "interrupted"
    assert (await asyncio.wait_for(joiner, 10))[-1] == "end"


async def _collect(stream: Any) -> list[str]:
    return [p.event async for p in stream]


async def test_failed_run_streams_error_then_end(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(status=401, error="bad key"))
    sdk = client(api)
    tid = (await sdk.threads.create())["thread_id"]
    parts = [p async for p in sdk.runs.stream(tid, "lead_agent", input=HUMAN)]
    events = [p.event for p in parts]
    assert events[0] == "metadata"
    assert events[-2:] == ["error", "end"]
    assert "401" in parts[-2].data["message"]
    runs = await sdk.runs.list(tid)
    assert runs[0]["status"] == "error"
    fake_openai.script(Reply(status=401, error="bad key"))
    with pytest.raises(Exception, match="401"):
        await sdk.runs.wait(tid, "lead_agent", input=HUMAN)


async def test_stateless_stream_and_delete(api: Api, fake_openai: FakeOpenAI) -> None:
    sdk = client(api)
    parts = [p async for p in sdk.runs.stream(None, "lead_agent", input=HUMAN)]
    tid = parts[0].data["thread_id"]
    assert parts[-1].event == "end"
    assert (await sdk.threads.get(tid))["thread_id"] == tid
    await sdk.threads.delete(tid)
    with pytest.raises(httpx.HTTPStatusError) as err:
        await sdk.threads.get(tid)
    assert err.value.response.status_code == 404
    assert await api.app.runner.checkpoint(tid) is None
