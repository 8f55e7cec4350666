"""LangGraph-compatibility points DeerFlow's web UI relies on, through the official
langgraph-sdk: the head checkpoint sent with every later message (and forks from an older
one), assistants lookups, update_state (rename), cancel of a finished run, and thread ids
starting with `_` or `-`."""

from __future__ import annotations

import httpx
import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway.conftest import Api
from tests.gateway.test_sdk import client


def say(text: str) -> dict[str, object]:
    return {"messages": [{"type": "human", "content": [{"type": "text", "text": text}]}]}


async def test_head_checkpoint_continues_and_older_one_forks(
    api: Api, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="one"), Reply(text="two"), Reply(text="forked"))
    sdk = client(api)
    tid = (await sdk.threads.create())["thread_id"]
    await sdk.runs.wait(tid, "lead_agent", input=say("first"))
    after_first = (await sdk.threads.get_history(tid, limit=1))[0]["checkpoint"]
    # the UI's second message: getHistory({limit: 1}) then stream with that checkpoint
    parts = [
        p
        async for p in sdk.runs.stream(
            tid,
            "lead_agent",
            input=say("second"),
            checkpoint=after_first,
            stream_mode=["values", "messages-tuple"],
        )
    ]
    assert parts[-1].event == "end"
    assert "error" not in [p.event for p in parts]
    state = await sdk.threads.get_state(tid)
    texts = [m["content"] for m in state["values"]["messages"] if m["type"] == "ai"]
    assert texts == ["one", "two"]
    head = state["checkpoint"]["checkpoint_id"]
    again = await sdk.runs.wait(
        tid,
        "lead_agent",
        input=say("third"),
        checkpoint_id=None,
        checkpoint={
            "thread_id": tid,
            "checkpoint_ns": "",
            "checkpoint_id": after_first["checkpoint_id"],
        },
    )
    # an older checkpoint forks: the second exchange is not in the fork
    assert [m["content"] for m in again["messages"] if m["type"] == "ai"] == ["one", "forked"]
    assert (await sdk.threads.get_state(tid))["checkpoint"]["checkpoint_id"] != head
    with pytest.raises(httpx.HTTPStatusError) as err:
        await sdk.runs.wait(tid, "lead_agent", input=say("x"), checkpoint_id="no-such")
    assert err.value.response.status_code == 404
    with pytest.raises(httpx.HTTPStatusError) as err:
        await sdk.runs.wait(
            tid,
            "lead_agent",
            input=say("x"),
            checkpoint={"thread_id": "other", "checkpoint_id": head},
        )
    assert err.value.response.status_code == 400


async def test_assistants_lookups(api: Api) -> None:
    sdk = client(api)
    found = await sdk.assistants.search()
    assert [a["assistant_id"] for a in found] == ["lead_agent"]
    assert await sdk.assistants.search(graph_id="other") == []
    one = await sdk.assistants.get("lead_agent")
    assert one["graph_id"] == "lead_agent"
    graph = await sdk.assistants.get_graph("lead_agent")
    assert graph["nodes"] == []
    assert graph["edges"] == []
    schemas = await sdk.assistants.get_schemas("lead_agent")
    assert schemas["graph_id"] == "lead_agent"
    with pytest.raises(httpx.HTTPStatusError) as err:
        await sdk.assistants.get("nobody")
    assert err.value.response.status_code == 404


async def test_update_state_renames(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="hello"))
    sdk = client(api)
    tid = (await sdk.threads.create())["thread_id"]
    await sdk.runs.wait(tid, "lead_agent", input=say("hi"))
    before = (await sdk.threads.get_state(tid))["checkpoint"]["checkpoint_id"]
    result = await sdk.threads.update_state(tid, {"title": "Renamed"})
    assert result["checkpoint"]["checkpoint_id"] == before  # a title is metadata
    state = await sdk.threads.get_state(tid)
    assert state["values"]["title"] == "Renamed"
    assert [m["content"] for m in state["values"]["messages"]][-1] == "hello"
    listed = await sdk.threads.search(limit=10)
    assert next(t for t in listed if t["thread_id"] == tid)["values"]["title"] == "Renamed"
    edited = await sdk.threads.update_state(
        tid, {"messages": [{"type": "ai", "content": "a note"}]}, as_node="model"
    )
    assert edited["checkpoint"]["checkpoint_id"] != before
    state = await sdk.threads.get_state(tid)
    assert state["values"]["messages"][-1]["content"] == "a note"
    assert state["values"]["title"] == "Renamed"
    for values, as_node, checkpoint_id, code in (
        ({"messages": []}, "no-such-node", None, 400),
        ({"messages": 5}, None, None, 400),
        ({"no_such_key": 1}, None, None, 400),
        ({"messages": []}, None, "nope", 404),
    ):
        with pytest.raises(httpx.HTTPStatusError) as err:
            await sdk.threads.update_state(
                tid, values, as_node=as_node, checkpoint_id=checkpoint_id
            )
        assert err.value.response.status_code == code, values
    with pytest.raises(httpx.HTTPStatusError) as err:
        await sdk.threads.update_state("missing-thread", {"title": "x"})
    assert err.value.response.status_code == 404


async def test_cancel_finished_run_answers_like_deerflow(api: Api, fake_openai: FakeOpenAI) -> None:
    sdk = client(api)
    tid = (await sdk.threads.create())["thread_id"]
    run = await sdk.runs.create(tid, "lead_agent", input=say("hi"))
    await sdk.runs.join(tid, run["run_id"])
    with pytest.raises(httpx.HTTPStatusError) as err:
        await sdk.runs.cancel(tid, run["run_id"])
    assert err.value.response.status_code == 409
    assert err.value.response.json()["detail"] == (
        f"Run {run['run_id']} is not cancellable (status: success)"
    )


@pytest.mark.parametrize("tid", ["_underscore", "-dash", "a" * 64])
async def test_every_id_the_api_accepts_works(api: Api, fake_openai: FakeOpenAI, tid: str) -> None:
    fake_openai.script(Reply(text="ok"))
    sdk = client(api)
    await sdk.threads.create(thread_id=tid)
    result = await sdk.runs.wait(tid, "lead_agent", input=say("hi"))
    assert result["messages"][-1]["content"] == "ok"
    base = f"/api/threads/{tid}/uploads"
    form = httpx_form()
    assert (await api.call("POST", base, data=form))[0] == 200
    assert (await api.call("GET", base + "/list"))[1]["count"] == 1
    assert (await api.call("DELETE", base + "/a.txt"))[0] == 200
    await sdk.threads.delete(tid)
    assert (await api.call("GET", f"/api/threads/{tid}"))[0] == 404


def httpx_form() -> object:
    import aiohttp

    data = aiohttp.FormData()
    data.add_field("files", b"x", filename="a.txt", content_type="text/plain")
    return data
