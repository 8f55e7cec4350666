"""DeerFlow's web UI against Antler, the calls issue 33 found failing, replayed over raw HTTP as
the UI makes them: the upload note hidden from the person's bubble, titles, the messages page,
a reload mid-run, the settings pages (MCP toggle, memory, channels, integrations), features,
token usage and scheduled tasks. Answers are validated against DeerFlow's shapes
(deerflow_shapes.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agent.memory.records import NewFact
from gateway.langgraph import run_record
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway import deerflow_shapes as df
from tests.gateway.conftest import AUTH, Api, make_harness
from tests.gateway.sse_reader import read_frames
from tests.gateway.test_deerflow_ui import LG, check_run_stream, ok, stream, submit
from tests.harness import service_config


async def test_upload_note_is_hidden_from_the_bubble(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="Read them"))
    tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    form = aiohttp.FormData()
    form.add_field("files", b"buy milk", filename="notes.txt", content_type="text/plain")
    info = (await ok(api, "POST", f"/api/threads/{tid}/uploads", df.UploadResponse, data=form))[
        "files"
    ][0]
    files = [{"filename": "notes.txt", "size": info["size"], "path": info["virtual_path"]}]
    got, _ = await stream(api, tid, submit("read my notes", files))
    check_run_stream(got, tid)
    state = await ok(api, "GET", f"{LG}/threads/{tid}/state", df.ThreadState)
    human = next(m for m in state["values"]["messages"] if m["type"] == "human")
    assert df.bubble_text(df.text_of(human)) == "read my notes"  # the note is not in the bubble
    assert human["additional_kwargs"]["files"] == files  # the chip
    assert "/mnt/user-data/uploads/notes.txt" in df.text_of(human)  # the model still reads it


async def until(check: Callable[[], Awaitable[Any]], what: str) -> Any:
    """Wait on a condition (the title is made in the background after the answer)."""
    for _ in range(500):
        got = await check()
        if got:
            return got
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


@pytest.fixture
async def tapi(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> AsyncIterator[Api]:
    """The service with conversation titles on (as configured by default)."""
    harness = make_harness(tmp_path, fake_openai, agent={"title": {"enabled": True}})
    async with harness as svc, aiohttp.ClientSession() as session:
        yield Api(svc, session)


async def test_gateway_thread_gets_a_title(tapi: Api, fake_openai: FakeOpenAI) -> None:
    api = tapi
    fake_openai.script(Reply(text="Paris, on the Seine."), Reply(text='"Capital of France"'))
    tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    got, _ = await stream(api, tid, submit("what is the capital of France?"))
    check_run_stream(got, tid)

    async def titled() -> str:
        state = await ok(api, "GET", f"{LG}/threads/{tid}/state", df.ThreadState)
        return str(state["values"].get("title") or "")

    assert await until(titled, "a title") == "Capital of France"
    asked = fake_openai.requests[1].body["messages"]
    assert "capital of France?" in json.dumps(asked)  # the title step saw the exchange
    listed = await ok(api, "POST", f"{LG}/threads/search", list[df.ThreadResponse], json={})
    row = next(t for t in listed if t["thread_id"] == tid)
    assert row["values"]["title"] == row["metadata"]["title"] == "Capital of France"
    # a later answer does not title again, and a rename is kept
    fake_openai.script(Reply(text="About 2 million."))
    await ok(
        api,
        "POST",
        f"{LG}/threads/{tid}/state",
        df.StateUpdateResponse,
        json={"values": {"title": "Paris"}},
    )
    check_run_stream((await stream(api, tid, submit("how many people live there?")))[0], tid)
    assert len(fake_openai.requests) == 3
    assert await titled() == "Paris"


async def test_messages_page(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="one"), Reply(text="two"))
    tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    empty = await ok(api, "GET", f"/api/threads/{tid}/messages/page", df.ThreadMessagesPage)
    assert (empty["data"], empty["has_more"], empty["next_before_seq"]) == ([], False, None)
    for text in ("first", "second"):
        check_run_stream((await stream(api, tid, submit(text)))[0], tid)
    page = await ok(api, "GET", f"/api/threads/{tid}/messages/page?limit=3", df.ThreadMessagesPage)
    df.check_page(page)
    assert [r["seq"] for r in page["data"]] == [2, 3, 4]
    assert [df.text_of(r["content"]) for r in page["data"]] == ["one", "second", "two"]
    assert (page["has_more"], page["next_before_seq"]) == (True, 2)
    older = await ok(
        api,
        "GET",
        f"/api/threads/{tid}/messages/page?limit=3&before_seq=2",
        df.ThreadMessagesPage,
    )
    df.check_page(older)
    assert [(r["seq"], r["content"]["type"]) for r in older["data"]] == [(1, "human")]
    assert (older["has_more"], older["next_before_seq"]) == (False, None)
    assert older["data"][0]["run_id"] != page["data"][-1]["run_id"]  # another turn
    for bad in ("?after_seq=1", "?limit=0", "?before_seq=0", "?limit=x"):
        status, body, _ = await api.call("GET", f"/api/threads/{tid}/messages/page{bad}")
        assert status == 422, (bad, body)
    assert (await api.call("GET", "/api/threads/nope/messages/page"))[0] == 404


async def test_reload_mid_run_replays_the_partial_answer(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="one two three four", stall_after=1))
    tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    status, run, _ = await api.call("POST", f"{LG}/threads/{tid}/runs", json=submit("go"))
    assert status == 200, run
    await fake_openai.wait_requests(1)
    join = f"{api.base}{LG}/threads/{tid}/runs/{run['run_id']}/stream"
    # useStream's reconnect sends Last-Event-ID: -1 (from the start)
    async with api.session.get(join, headers={**AUTH, "Last-Event-ID": "-1"}) as resp:
        events = read_frames(resp)
        seen = [await asyncio.wait_for(anext(events), 5)]
        while not (seen[-1].event == "messages" and df.text_of(seen[-1].data[0])):
            seen.append(await asyncio.wait_for(anext(events), 5))
        assert seen[0].event == "metadata"
        assert df.text_of(seen[-1].data[0]).strip() == "one"  # the partial answer, at once
        fake_openai.release()
        rest = [f async for f in events]
    assert rest[-1].event == "end"


async def test_join_after_the_buffer_moved_on_says_gap(
    api: Api, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_record, "REPLAY_BUFFER", 2)
    fake_openai.script(Reply(text="one two three four five six", stall_after=4))
    tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    _status, run, _ = await api.call("POST", f"{LG}/threads/{tid}/runs", json=submit("go"))
    await fake_openai.wait_requests(1)
    rec = api.gw.runs.active(tid)
    await until(lambda: _true(rec.seq >= 3), "events beyond the buffer")
    join = f"{api.base}{LG}/threads/{tid}/runs/{run['run_id']}/stream"
    async with api.session.get(join, headers=AUTH) as resp:
        raw = await asyncio.wait_for(resp.text(), 5)  # closes after the gap, without `end`
    assert raw.startswith("event: gap\n")
    assert "\nid:" not in raw
    gap = json.loads(raw.split("data: ", 1)[1])
    assert gap["code"] == "stream_replay_gap"
    assert gap["run_id"] == run["run_id"]
    assert gap["recovery"] == "reload_durable_state"
    assert int(gap["earliest_available_event_id"]) > 1
    fake_openai.release()


async def _true(value: bool) -> bool:
    return value


async def test_mcp_switch(api: Api) -> None:
    servers = {
        "github": {"type": "stdio", "command": "npx", "args": ["-y", "gh"], "env": {"T": "s3"}},
        "shell": {"enabled": False, "type": "stdio", "command": "bash"},
    }
    await ok(api, "PUT", "/api/mcp/config", df.McpConfigResponse, json={"mcp_servers": servers})
    # Settings → Tools: the switch sends {server_name, enabled}
    off = {"server_name": "github", "enabled": False}
    saved = await ok(api, "PATCH", "/api/mcp/config", df.McpConfigResponse, json=off)
    assert saved["mcp_servers"]["github"]["enabled"] is False
    assert saved["mcp_servers"]["github"]["env"] == {"T": "***"}
    stored = json.loads(Path(api.app.settings.agent.extensions_config).read_text())
    assert stored["mcpServers"]["github"]["enabled"] is False
    assert stored["mcpServers"]["github"]["env"] == {"T": "s3"}  # the secret kept
    on = await ok(
        api, "PATCH", "/api/mcp/config", df.McpConfigResponse, json={**off, "enabled": True}
    )
    assert on["mcp_servers"]["github"]["enabled"] is True
    status, body, _ = await api.call(
        "PATCH", "/api/mcp/config", json={"server_name": "nope", "enabled": True}
    )
    assert status == 404
    assert "nope" in body["detail"]
    status, body, _ = await api.call(
        "PATCH", "/api/mcp/config", json={"server_name": "shell", "enabled": True}
    )
    assert status == 400
    assert "not allowed" in body["detail"]
    for bad in ({"server_name": "", "enabled": True}, {"server_name": "github"}, {"x": 1}):
        assert (await api.call("PATCH", "/api/mcp/config", json=bad))[0] == 422


async def test_memory_page_edits_the_callers_own_memory(api: Api) -> None:
    store = api.app.runner.memory.store
    await store.add_fact("telegram:42", NewFact("Likes tea", "preference", 0.9), source="chat")
    # Settings → Memory sends no ?person=: "Add fact", edit, delete, clear, import
    doc = await ok(
        api, "POST", "/api/memory/facts", df.MemoryResponse, json={"content": "Ships on Fridays"}
    )
    assert [f["content"] for f in doc["facts"]] == ["Ships on Fridays"]
    assert doc["person"] == "api"
    fact = doc["facts"][0]["id"]
    page = await ok(api, "GET", "/api/memory", df.MemoryResponse)
    assert [f["content"] for f in page["facts"]] == ["Ships on Fridays"]
    assert sorted(p["person"] for p in page["people"]) == ["api", "telegram:42"]
    assert "tea" not in json.dumps(page)  # no one else's facts
    doc = await ok(
        api,
        "PATCH",
        f"/api/memory/facts/{fact}",
        df.MemoryResponse,
        json={"content": "Ships on Thursdays"},
    )
    assert [f["content"] for f in doc["facts"]] == ["Ships on Thursdays"]
    tea = (await store.facts("telegram:42"))[0].id
    assert (await api.call("DELETE", f"/api/memory/facts/{tea}"))[0] == 404  # not the caller's
    assert (await api.call("PATCH", f"/api/memory/facts/{tea}", json={"content": "x"}))[0] == 404
    exported = await ok(api, "GET", "/api/memory/export", df.MemoryResponse)
    assert (await ok(api, "DELETE", "/api/memory", df.MemoryResponse))["facts"] == []
    doc = await ok(api, "POST", "/api/memory/import", df.MemoryResponse, json=exported)
    assert [f["content"] for f in doc["facts"]] == ["Ships on Thursdays"]
    assert [f.content for f in await store.facts("telegram:42")] == ["Likes tea"]


async def test_pages_that_load_first(api: Api, fake_openai: FakeOpenAI) -> None:
    features = await ok(api, "GET", "/api/features", df.FeaturesResponse)
    assert features["agents_api"] == {"enabled": True}  # custom agents: the agent profiles
    suggestions = await ok(api, "GET", "/api/suggestions/config", df.SuggestionsConfig)
    assert suggestions["enabled"] is False
    providers = await ok(api, "GET", "/api/channels/providers", df.ChannelProvidersResponse)
    assert [(p["provider"], p["enabled"], p["connectable"]) for p in providers["providers"]] == [
        ("test", True, False)
    ]
    connections = await ok(api, "GET", "/api/channels/connections", df.ChannelConnectionsResponse)
    assert connections == {"connections": []}
    lark = await ok(api, "GET", "/api/integrations/lark/status", df.LarkIntegrationStatus)
    assert (lark["installed"], lark["app_configured"]) == (False, False)
    # token usage: zero before anything is asked, then what the usage store counted
    fake_openai.script(Reply(text="Hello"))
    tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    fresh = await ok(api, "GET", f"/api/threads/{tid}/token-usage", df.ThreadTokenUsage)
    assert (fresh["total_tokens"], fresh["total_runs"]) == (0, 0)  # nothing asked yet
    check_run_stream((await stream(api, tid, submit("hi")))[0], tid)
    used = await ok(api, "GET", f"/api/threads/{tid}/token-usage", df.ThreadTokenUsage)
    assert used["total_runs"] == 1
    assert used["by_caller"]["lead_agent"] > 0


async def test_token_usage_the_provider_reported(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> None:
    models = service_config(tmp_path, fake_openai)["models"]
    models = [{**m, "stream_usage": True} for m in models]  # the provider reports usage
    fake_openai.script(Reply(text="Hello", usage={"prompt_tokens": 30, "completion_tokens": 5}))
    harness = make_harness(tmp_path, fake_openai, models=models)
    async with harness as svc, aiohttp.ClientSession() as session:
        api = Api(svc, session)
        tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
        check_run_stream((await stream(api, tid, submit("hi")))[0], tid)
        usage = await ok(api, "GET", f"/api/threads/{tid}/token-usage", df.ThreadTokenUsage)
    assert usage["total_runs"] == 1
    assert usage["by_caller"]["lead_agent"] == 35  # the answer: what the provider reported
    assert sum(m["tokens"] for m in usage["by_model"].values()) >= 35
