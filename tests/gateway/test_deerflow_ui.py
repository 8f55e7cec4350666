"""DeerFlow's web UI against Antler, replayed over raw HTTP in the UI's own call order: the
settings pages, then a chat (assistant lookup, new thread, first message streamed, second with
the head checkpoint, upload then message, rename, stop, reload + join). Every answer is
validated against DeerFlow's documented response shapes (deerflow_shapes.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
from pydantic import BaseModel, TypeAdapter

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway import deerflow_shapes as df
from tests.gateway.conftest import AUTH, Api, make_harness
from tests.gateway.sse_reader import Frame, read_frames
from tests.gateway.test_skills import SKILL_MD, write_skill, zip_bytes

LG = "/api"  # the UI's LangGraph base (`/api/langgraph` rewritten to the gateway's `/api`)
MODES = ["values", "messages-tuple", "custom"]


def check(shape: Any, body: Any) -> Any:
    """Validate `body` against a DeerFlow shape (a model or a list of them)."""
    if isinstance(shape, type) and issubclass(shape, BaseModel):
        return shape.model_validate(body)
    return TypeAdapter(shape).validate_python(body)


async def ok(api: Api, method: str, path: str, shape: Any, **kw: Any) -> Any:
    status, body, _ = await api.call(method, path, **kw)
    assert status == 200, (method, path, body)
    check(shape, body)
    return body


def submit(
    text: str, files: list[dict[str, Any]] | None = None, checkpoint: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The body the UI's `thread.submit` sends (useStream → runs.stream)."""
    kwargs = {"files": files} if files else {}
    body: dict[str, Any] = {
        "assistant_id": "lead_agent",
        "input": {
            "messages": [
                {
                    "type": "human",
                    "content": [{"type": "text", "text": text}],
                    "additional_kwargs": kwargs,
                }
            ]
        },
        "stream_mode": MODES,
        "stream_subgraphs": False,
        "stream_resumable": False,
        "config": {"recursion_limit": 1000},
        "context": {
            "mode": "pro",
            "thinking_enabled": True,
            "is_plan_mode": True,
            "subagent_enabled": False,
            "reasoning_effort": "medium",
        },
        "on_disconnect": "continue",
        "multitask_strategy": "reject",
    }
    if checkpoint is not None:
        body["checkpoint"] = {k: v for k, v in checkpoint.items() if k != "thread_id"}
    return body


async def stream(api: Api, tid: str, body: dict[str, Any]) -> tuple[list[Frame], str]:
    url = f"{api.base}{LG}/threads/{tid}/runs/stream"
    async with api.session.post(url, json=body, headers=AUTH) as resp:
        assert resp.status == 200, await resp.text()
        got = [f async for f in read_frames(resp)]
        return got, resp.headers["Content-Location"]


def check_run_stream(got: list[Frame], tid: str) -> str:
    assert got[0].event == "metadata"
    meta = check(df.RunMetadataEvent, got[0].data)
    assert meta.thread_id == tid
    assert got[-1].event == "end"
    assert got[-1].data is None
    assert "error" not in [f.event for f in got]
    values = [f.data for f in got if f.event == "values"]
    check(list[df.Message], values[-1]["messages"])
    for f in got:
        if f.event == "messages":
            chunk, meta_ = f.data
            check(df.Message, chunk)
            assert "langgraph_node" in meta_
    return meta.run_id


def answer(got: list[Frame]) -> str:
    return "".join(
        f.data[0]["content"]
        for f in got
        if f.event == "messages" and f.data[0]["type"] == "AIMessageChunk"
    )


async def test_settings_pages(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "public", "pdf-tools")
    harness = make_harness(tmp_path, fake_openai, agent={"skills": {"path": str(root)}})
    async with harness as svc, aiohttp.ClientSession() as session:
        await settings_pages(Api(svc, session))


async def settings_pages(api: Api) -> None:
    await ok(api, "GET", "/api/models", df.ModelsResponse)
    await ok(api, "GET", "/api/models/fast", df.ModelResponse)
    await ok(api, "GET", "/api/mcp/config", df.McpConfigResponse)
    servers = {
        "mcp_servers": {
            "github": {
                "enabled": True,
                "type": "stdio",
                "command": "npx",
                "args": ["-y", "server-github"],
                "env": {"GITHUB_TOKEN": "ghp_secret"},
            }
        }
    }
    saved = await ok(api, "PUT", "/api/mcp/config", df.McpConfigResponse, json=servers)
    assert saved["mcp_servers"]["github"]["env"] == {"GITHUB_TOKEN": "***"}
    listed = await ok(api, "GET", "/api/skills", df.SkillsResponse)
    assert [s["name"] for s in listed["skills"]] == ["pdf-tools"]
    await ok(api, "PUT", "/api/skills/pdf-tools", df.SkillResponse, json={"enabled": False})
    await ok(api, "GET", "/api/skills/pdf-tools", df.SkillResponse)
    status, thread, _ = await api.call("POST", "/api/threads", json={})
    outputs = api.app.runner.thread_dirs(thread["thread_id"]).outputs
    (outputs / "maps.skill").write_bytes(zip_bytes({"SKILL.md": SKILL_MD.format(name="maps")}))
    await ok(
        api,
        "POST",
        "/api/skills/install",
        df.SkillInstallResponse,
        json={"thread_id": thread["thread_id"], "path": "mnt/user-data/outputs/maps.skill"},
    )
    await ok(api, "GET", "/api/memory", df.MemoryResponse)
    await ok(api, "GET", "/api/memory/config", df.MemoryConfigResponse)
    await ok(api, "GET", "/api/memory/status", df.MemoryStatusResponse)
    await ok(api, "GET", "/api/memory/export", df.MemoryResponse)
    await ok(api, "GET", "/api/channels/", df.ChannelsResponse)
    status, body, _ = await api.call("GET", "/api/models/nope")
    assert status == 404
    check(df.ErrorResponse, body)


async def head_checkpoint(api: Api, tid: str) -> Any:
    """The head checkpoint, as the UI's getHistory({limit: 1}) reads it."""
    history = await ok(
        api, "POST", f"{LG}/threads/{tid}/history", list[df.ThreadState], json={"limit": 1}
    )
    return history[0]["checkpoint"] if history else None


async def open_the_ui(api: Api) -> None:
    """What the UI reads first: the assistant, then the thread list."""
    assistants = await ok(
        api,
        "POST",
        f"{LG}/assistants/search",
        list[df.Assistant],
        json={"graph_id": "lead_agent", "limit": 10},
    )
    assert assistants[0]["assistant_id"] == "lead_agent"
    await ok(api, "GET", f"{LG}/assistants/lead_agent", df.Assistant)
    await ok(
        api,
        "POST",
        f"{LG}/threads/search",
        list[df.ThreadResponse],
        json={
            "limit": 50,
            "offset": 0,
            "sort_by": "updated_at",
            "sort_order": "desc",
            "select": ["thread_id", "updated_at", "values", "metadata"],
        },
    )


async def upload_notes(api: Api, tid: str) -> list[dict[str, Any]]:
    """Upload a file as the UI does; the files a message then names."""
    await ok(api, "GET", f"/api/threads/{tid}/uploads/limits", df.UploadLimits)
    form = aiohttp.FormData()
    form.add_field("files", b"buy milk", filename="notes.txt", content_type="text/plain")
    uploaded = await ok(api, "POST", f"/api/threads/{tid}/uploads", df.UploadResponse, data=form)
    info = uploaded["files"][0]
    await ok(api, "GET", f"/api/threads/{tid}/uploads/list", df.ListFilesResponse)
    return [
        {
            "filename": info["filename"],
            "size": info["size"],
            "path": info["virtual_path"],
            "status": "uploaded",
        }
    ]


async def rename_and_list(api: Api, tid: str) -> None:
    """Rename the thread; the thread list and its state show the title."""
    await ok(
        api,
        "POST",
        f"{LG}/threads/{tid}/state",
        df.StateUpdateResponse,
        json={"values": {"title": "Groceries"}},
    )
    listed = await ok(
        api, "POST", f"{LG}/threads/search", list[df.ThreadResponse], json={"limit": 50}
    )
    assert next(t for t in listed if t["thread_id"] == tid)["values"]["title"] == "Groceries"
    state = await ok(api, "GET", f"{LG}/threads/{tid}/state", df.ThreadState)
    assert state["values"]["title"] == "Groceries"
    await ok(api, "GET", f"{LG}/threads/{tid}", df.ThreadResponse)
    await ok(api, "GET", f"{LG}/threads/{tid}/runs", list[df.RunResponse])


async def test_chat_flow(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(
        Reply(text="Hello there"), Reply(text="Second answer"), Reply(text="Read your notes")
    )
    await open_the_ui(api)
    # new thread: useStream creates it, reads its (empty) history, streams the first message
    thread = await ok(
        api,
        "POST",
        f"{LG}/threads",
        df.ThreadResponse,
        json={"thread_id": "ui-chat-1", "metadata": {}},
    )
    tid = thread["thread_id"]
    assert await head_checkpoint(api, tid) is None
    got, location = await stream(api, tid, submit("hi"))
    run_id = check_run_stream(got, tid)
    assert location == f"/api/threads/{tid}/runs/{run_id}"
    assert answer(got) == "Hello there"
    # second message: the head checkpoint from getHistory({limit: 1}) goes with it
    got, _ = await stream(api, tid, submit("and then?", checkpoint=await head_checkpoint(api, tid)))
    check_run_stream(got, tid)
    assert answer(got) == "Second answer"
    # upload then message with the files
    files = await upload_notes(api, tid)
    got, _ = await stream(api, tid, submit("read my notes", files, await head_checkpoint(api, tid)))
    check_run_stream(got, tid)
    assert "/mnt/user-data/uploads/notes.txt" in json.dumps(fake_openai.last_request.body)
    await rename_and_list(api, tid)


async def test_stop_then_reload_and_join(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(
        Reply(text="one two three four", stall_after=1),
        Reply(text="five six seven eight", stall_after=1),
    )
    tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    url = f"{api.base}{LG}/threads/{tid}/runs/stream"
    async with api.session.post(url, json=submit("go"), headers=AUTH) as resp:
        events = read_frames(resp)
        first = await anext(events)
        run_id = check(df.RunMetadataEvent, first.data).run_id
        await fake_openai.wait_requests(1)
        # the stop button: runs.cancel(thread, run) → 202
        status, body, _ = await api.call("POST", f"{LG}/threads/{tid}/runs/{run_id}/cancel")
        assert status == 202, body
        rest = [f async for f in events]
    assert rest[-1].event == "end"
    run = await ok(api, "GET", f"{LG}/threads/{tid}/runs/{run_id}", df.RunResponse)
    assert run["status"] == "interrupted"
    # a stop click in the finish window: DeerFlow's 409 text, which the UI swallows
    status, body, _ = await api.call("POST", f"{LG}/threads/{tid}/runs/{run_id}/cancel")
    assert status == 409
    assert "is not cancellable" in body["detail"]
    # reload during a run: the UI lists runs, finds the active one and joins its stream
    status, created, _ = await api.call(
        "POST", f"{LG}/threads/{tid}/runs", json={**submit("again"), "on_disconnect": "continue"}
    )
    assert status == 200, created
    check(df.RunResponse, created)
    await fake_openai.wait_requests(2)
    runs = await ok(api, "GET", f"{LG}/threads/{tid}/runs", list[df.RunResponse])
    active = next(r for r in runs if r["status"] in ("pending", "running"))
    join = f"{api.base}{LG}/threads/{tid}/runs/{active['run_id']}/stream"
    async with api.session.get(join, headers={**AUTH, "Last-Event-ID": "0"}) as resp:
        assert resp.status == 200
        events = read_frames(resp)
        assert (await anext(events)).event == "metadata"  # replayed from the buffer
        fake_openai.release()
        joined = [f async for f in events]
    assert joined[-1].event == "end"
    final = [f.data for f in joined if f.event == "values"][-1]
    assert final["messages"][-1]["content"] == "five six seven eight"
