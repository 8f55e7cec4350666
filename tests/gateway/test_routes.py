"""Every admin route: the happy path, bad input (422/400/404) and no auth (401)."""

from __future__ import annotations

import asyncio
import json
import re

from channels.base import PublishResult
from gateway.server import api_routes
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.fakes.recording_channel import RecordingChannel
from tests.gateway.conftest import Api

RUN = {"input": {"messages": [{"role": "user", "content": "hi"}]}}
SAMPLE = {
    "thread_id": "t-1",
    "run_id": "r-1",
    "name": "fast",
    "filename": "a.txt",
    "path": "mnt/user-data/outputs/a.txt",
    "person": "telegram:42",
    "fact_id": "1",
    "assistant_id": "lead_agent",
    "task_id": "1",
    "account": "slack:U1",
    "role": "eng",
    "approval_id": "a1",
    "index": "0",
}


async def new_thread(api: Api, **body: object) -> str:
    status, data, _ = await api.call("POST", "/api/threads", json=body)
    assert status == 200, data
    return str(data["thread_id"])


# ---------------------------------------------------------------- auth, health, docs


async def test_every_route_but_health_needs_the_token(api: Api) -> None:
    for route in api_routes():
        path = re.sub(r"{(\w+)(?::[^}]*)?}", lambda m: SAMPLE[m.group(1)], route.path)
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
            status, body, resp = await api.call(route.method, path, auth=False, headers=headers)
            if route.path == "/health":
                assert status == 200
                continue
            assert status == 401, (route.method, path)
            assert body == {"detail": "missing or invalid bearer token"}
            assert resp.headers["WWW-Authenticate"] == "Bearer"


async def test_health_openapi_and_docs(api: Api) -> None:
    status, health, _ = await api.call("GET", "/health", auth=False)
    assert status == 200
    assert health["status"] == "ok"
    assert "test" in health["channels"]
    status, doc, _ = await api.call("GET", "/openapi.json")
    assert status == 200
    assert doc["openapi"].startswith("3.")
    assert "/api/threads/{thread_id}/runs/stream" in doc["paths"]
    create = doc["paths"]["/api/threads"]["post"]
    assert create["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ThreadCreate"
    }
    assert "RunCreate" in doc["components"]["schemas"]
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    status, page, resp = await api.call("GET", "/docs")
    assert status == 200
    assert resp.content_type == "text/html"
    assert "/api/threads/{thread_id}/uploads" in page
    assert "http" not in page.replace("http-equiv", "")  # loads nothing from the internet


async def test_unknown_api_route_is_json_404(api: Api) -> None:
    status, body, _ = await api.call("GET", "/api/nothing-here")
    assert status == 404
    assert "detail" in body
    status, body, _ = await api.call("PUT", "/api/models")
    assert status in (404, 405)
    assert "detail" in body


# ---------------------------------------------------------------- models


async def test_models(api: Api) -> None:
    status, body, _ = await api.call("GET", "/api/models")
    assert status == 200
    assert [m["name"] for m in body["models"]] == ["fast", "smart"]
    assert body["models"][0]["is_default"] is True
    assert "sk-test" not in json.dumps(body)
    assert "api_key" not in json.dumps(body)
    status, one, _ = await api.call("GET", "/api/models/smart")
    assert (status, one["display_name"], one["model"]) == (200, "Smart", "fake-smart")
    status, body, _ = await api.call("GET", "/api/models/nonesuch")
    assert status == 404
    assert "nonesuch" in body["detail"]
    status, body, _ = await api.call("GET", "/api/models/bad%20name")
    assert status == 422


# ---------------------------------------------------------------- threads


async def test_thread_routes_validate(api: Api) -> None:
    assert (await api.call("GET", "/api/threads/bad.id!"))[0] == 422
    assert (await api.call("GET", "/api/threads/" + "x" * 65))[0] == 422
    assert (await api.call("GET", "/api/threads/missing"))[0] == 404
    assert (await api.call("POST", "/api/threads", json={"thread_id": ""}))[0] == 422
    assert (await api.call("POST", "/api/threads", json={"bogus": 1}))[0] == 422
    assert (
        await api.call(
            "POST", "/api/threads", data=b"{not json", headers={"Content-Type": "application/json"}
        )
    )[0] == 422
    assert (await api.call("POST", "/api/threads", json=[1, 2]))[0] == 422
    assert (await api.call("POST", "/api/threads/search", json={"limit": 0}))[0] == 422
    assert (await api.call("POST", "/api/threads/missing/history", json={}))[0] == 404
    assert (await api.call("POST", "/api/threads/missing/history", json={"limit": 101}))[0] == 422
    assert (await api.call("PATCH", "/api/threads/missing", json={"metadata": {}}))[0] == 404
    assert (await api.call("DELETE", "/api/threads/missing"))[0] == 404
    tid = await new_thread(api)
    status, state, _ = await api.call("GET", f"/api/threads/{tid}/state")
    assert (status, state["values"], state["checkpoint"]["checkpoint_id"]) == (200, {}, None)
    status, body, _ = await api.call("DELETE", f"/api/threads/{tid}")
    assert (status, body["success"]) == (200, True)


async def test_run_requests_validate(api: Api) -> None:
    tid = await new_thread(api)
    base = f"/api/threads/{tid}/runs"
    bad_bodies = [
        {**RUN, "unknown_option": True},
        {**RUN, "stream_mode": "messages"},
        {**RUN, "stream_mode": ["events"]},
        {**RUN, "multitask_strategy": "enqueue"},
        {**RUN, "webhook": "http://example.invalid/"},
        {**RUN, "stream_resumable": [1]},
        {"input": {"messages": []}},
        {"input": {"messages": [{"role": "robot", "content": "x"}]}},
        {},
    ]
    for body in bad_bodies:
        status, detail, _ = await api.call("POST", base + "/wait", json=body)
        assert status == 422, (body, detail)
        assert "detail" in detail
    status, body, _ = await api.call("POST", base, json={**RUN, "context": {"model_name": "x"}})
    assert status == 400
    assert "not configured" in body["detail"]
    status, body, _ = await api.call("POST", base, json={**RUN, "assistant_id": "other"})
    assert status == 404
    status, _, _ = await api.call("POST", "/api/threads/missing/runs", json=RUN)
    assert status == 404
    status, _, _ = await api.call("GET", f"{base}/nope")
    assert status == 404
    status, _, _ = await api.call("POST", f"{base}/nope/cancel")
    assert status == 404
    status, _, _ = await api.call("GET", f"{base}?limit=0")
    assert status == 422


async def test_run_with_model_and_sse_wire_format(api: Api, fake_openai: FakeOpenAI) -> None:
    tid = await new_thread(api)
    body = {
        **RUN,
        "context": {"model_name": "smart"},
        "stream_mode": ["values", "custom"],
        "stream_resumable": False,
        "if_not_exists": "create",
        "on_disconnect": "continue",
    }
    async with api.session.post(
        f"{api.base}/api/threads/{tid}/runs/stream",
        json=body,
        headers={"Authorization": "Bearer test-admin-token"},
    ) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        assert resp.headers["Cache-Control"] == "no-cache, no-transform"
        assert re.fullmatch(
            rf"/api/threads/{tid}/runs/[0-9a-f-]+", resp.headers["Content-Location"]
        )
        raw = (await resp.read()).decode()
    frames = [f for f in raw.split("\n\n") if f]
    assert frames[0].startswith("event: metadata\ndata: {")
    assert frames[-1].startswith("event: end\ndata: null\nid: ")
    assert fake_openai.last_request.body["model"] == "fake-smart"


async def test_heartbeat_when_idle(api: Api, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(text="a b c d", stall_after=0))
    api.gw.runs.heartbeat_seconds = 0.05
    tid = await new_thread(api)
    async with api.session.post(
        f"{api.base}/api/threads/{tid}/runs/stream",
        json=RUN,
        headers={"Authorization": "Bearer test-admin-token"},
    ) as resp:
        seen = b""
        while b": heartbeat" not in seen:
            seen += await asyncio.wait_for(resp.content.readany(), 5)
    for _ in range(200):  # the client left: on_disconnect=cancel stops the run
        if not api.gw.runs.is_busy(tid):
            break
        await asyncio.sleep(0.02)
    assert (await api.gw.runs.list(tid))[0].status == "interrupted"


# ---------------------------------------------------------------- chat threads


async def test_chat_thread_visible_and_refused_while_replying(
    api: Api, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="thinking very hard", stall_after=0))
    channel = api.svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    assert await channel.inject("hello from chat", chat_id="room-7") is PublishResult.accepted
    for _ in range(300):
        if api.app.dispatcher.active_runs:
            break
        await asyncio.sleep(0.01)
    status, found, _ = await api.call(
        "POST", "/api/threads/search", json={"metadata": {"channel": "test"}}
    )
    assert status == 200
    assert len(found) == 1
    thread = found[0]
    assert thread["metadata"]["chat_id"] == "room-7"
    assert thread["status"] == "busy"
    tid = thread["thread_id"]
    status, body, _ = await api.call(
        "POST", f"/api/threads/{tid}/runs/wait", json={**RUN, "multitask_strategy": "interrupt"}
    )
    assert status == 409
    assert "chat" in body["detail"]
    assert (await api.call("DELETE", f"/api/threads/{tid}"))[0] == 409
    fake_openai.release()
    await api.svc.idle()
    status, body, _ = await api.call("POST", f"/api/threads/{tid}/runs/wait", json=RUN)
    assert status == 200
    assert body["messages"][0]["content"].endswith("hello from chat")
    assert body["messages"][-1]["content"] == "echo: hi"


# ---------------------------------------------------------------- channels and metrics


async def test_channels_and_restart(api: Api) -> None:
    channel = api.svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    await channel.inject("hi", event_id="c1")
    await api.svc.idle()
    status, body, _ = await api.call("GET", "/api/channels")
    assert status == 200
    info = body["channels"]["test"]
    assert info["enabled"]
    assert info["running"]
    assert info["connected"]
    assert info["connected_since"] is not None
    assert info["last_event_at"] is not None
    assert info["counters"]["inbound"] >= 1
    status, body, _ = await api.call("POST", "/api/channels/test/restart")
    assert status == 200
    assert body["success"] is True
    assert body["channel"]["running"] is True
    assert api.svc.channel("test") is not channel
    assert (await api.call("POST", "/api/channels/nope/restart"))[0] == 404
    assert (await api.call("POST", "/api/channels/bad%20name/restart"))[0] == 422


async def test_metrics_exposition(api: Api, fake_openai: FakeOpenAI) -> None:
    channel = api.svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    # paced so the reply has streamed updates before its final
    fake_openai.script(Reply(text="streamed " * 20, tokens_per_second=100))
    await channel.inject("hi", event_id="e1")
    await channel.inject("hi", event_id="e1")
    await api.svc.idle()
    tid = await new_thread(api)
    assert (await api.call("POST", f"/api/threads/{tid}/runs/wait", json=RUN))[0] == 200
    status, text, resp = await api.call("GET", "/metrics")
    assert status == 200
    assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    lines = set(text.splitlines())
    assert 'antler_inbound_messages_total{channel="test"} 1.0' in lines
    assert 'antler_duplicates_suppressed_total{channel="test"} 1.0' in lines
    assert 'antler_runs_started_total{channel="test"} 1.0' in lines
    assert 'antler_runs_finished_total{channel="test",outcome="succeeded"} 1.0' in lines
    assert 'antler_runs_finished_total{channel="api",outcome="succeeded"} 1.0' in lines
    assert 'antler_run_duration_seconds_count{channel="api"} 1.0' in lines
    assert 'antler_time_to_first_update_seconds_count{channel="test"} 1.0' in lines
    assert "antler_inbound_queue_depth 0.0" in lines
    assert "# TYPE antler_run_duration_seconds histogram" in lines
    assert any(line.startswith('antler_reply_updates_sent_total{channel="test"}') for line in lines)


async def test_trailing_slash_and_wrong_methods(api: Api) -> None:
    for path in ("/api/channels", "/api/models", "/api/skills", "/api/memory"):
        plain, slashed = await api.call("GET", path), await api.call("GET", path + "/")
        assert (plain[0], slashed[0]) == (200, 200), path
        assert plain[1] == slashed[1]
    status, created, _ = await api.call("POST", "/api/threads/", json={"thread_id": "slashy"})
    assert (status, created["thread_id"]) == (200, "slashy")
    assert (await api.call("GET", "/api/threads/slashy/"))[0] == 200
    for method, path, allow in (
        ("DELETE", "/api/models", {"GET"}),
        ("PUT", "/api/threads/search", {"POST"}),
        ("POST", "/api/threads/slashy", {"GET", "PATCH", "DELETE"}),
        ("GET", "/api/memory/import", {"POST"}),
    ):
        status, body, resp = await api.call(method, path)
        assert status == 405, (method, path)
        assert set(resp.headers["Allow"].replace(" ", "").split(",")) >= allow
        assert "detail" in body
    assert (await api.call("GET", "/api/no-such-route"))[0] == 404
    assert (await api.call("DELETE", "/api/no-such-route"))[0] == 404
