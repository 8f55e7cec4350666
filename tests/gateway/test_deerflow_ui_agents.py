"""DeerFlow's web UI's custom agents pages against Antler, replayed over raw HTTP in the UI's
call order: the gallery, the new-agent page (name check, the bootstrap chat whose `setup_agent`
call the UI waits for, the agent read back), a chat with the new agent, its edit and delete;
and `/api/user-profile`. Answers are validated against DeerFlow's shapes (deerflow_shapes.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.app import App
from tests.e2e.config.service import start_service, system_text, tool_names
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.gateway import deerflow_shapes as df
from tests.gateway.conftest import Api
from tests.gateway.sse_reader import Frame
from tests.gateway.test_deerflow_ui import LG, check_run_stream, ok, stream, submit

SOUL = "# Reviewer\nYou review pull requests, kindly and briefly."


@dataclass
class FromFile:
    """The service started from a config.yaml (agents are written there), as `Api` reads it."""

    app: App

    @property
    def gateway_url(self) -> str:
        assert self.app.gateway is not None
        return self.app.gateway.url


@pytest.fixture
async def api(tmp_path: Path, fake_openai: FakeOpenAI) -> AsyncIterator[Api]:
    svc = await start_service(tmp_path, fake_openai, {})
    try:
        async with aiohttp.ClientSession() as session:
            yield Api(FromFile(svc.app), session)  # type: ignore[arg-type]
    finally:
        await svc.app.stop()


def ui_submit(text: str, tid: str, **context: Any) -> dict[str, Any]:
    """The body of the agents pages' `sendMessage` (flash mode, `thread_id` in the context)."""
    body = submit(text)
    body["stream_resumable"] = True
    body["context"] = {"mode": "flash", "thinking_enabled": False, "is_plan_mode": False,
                       "subagent_enabled": False, "thread_id": tid, **context}  # fmt: skip
    return body


def tool_result(got: list[Frame], name: str) -> list[str]:
    values = [f.data for f in got if f.event == "values"][-1]
    return [m["content"] for m in values["messages"] if m["type"] == "tool" and m["name"] == name]


async def new_thread(api: Api) -> str:
    """useStream without a thread: the SDK creates one, then names its agent (threads.update)."""
    thread = await ok(api, "POST", f"{LG}/threads", df.ThreadResponse, json={"metadata": {}})
    return str(thread["thread_id"])


async def test_create_an_agent_in_the_bootstrap_chat(api: Api, fake_openai: FakeOpenAI) -> None:
    features = await ok(api, "GET", "/api/features", df.FeaturesResponse)
    assert features["agents_api"] == {"enabled": True}
    assert (await ok(api, "GET", "/api/agents", df.AgentsListResponse))["agents"] == []
    check = await ok(api, "GET", "/api/agents/check?name=Reviewer", df.AgentNameCheck)
    assert check == {"available": True, "name": "reviewer"}

    tid = await new_thread(api)
    fake_openai.script(Reply(text="What kind of reviews?"))
    got, _ = await stream(api, tid, ui_submit("Create Reviewer", tid, is_bootstrap=True,
                                              agent_name="Reviewer"))  # fmt: skip
    check_run_stream(got, tid)
    assert "setup_agent" in tool_names(fake_openai.last_request)
    meta = {"metadata": {"agent_name": "Reviewer"}}
    await ok(api, "PATCH", f"{LG}/threads/{tid}", df.ThreadResponse, json=meta)

    # the menu's "save": a hidden message; the UI waits for the setup_agent tool result
    fake_openai.script(
        Reply(tool_calls=[ToolCall("setup_agent", {"soul": SOUL, "description": "Reviews PRs"})]),
        Reply(text="Saved."),
    )
    got, _ = await stream(api, tid, ui_submit("Save the agent", tid, is_bootstrap=True,
                                              agent_name="Reviewer"))  # fmt: skip
    check_run_stream(got, tid)
    assert tool_result(got, "setup_agent") == ["Agent 'reviewer' created successfully!"]
    agent = await ok(api, "GET", "/api/agents/Reviewer", df.AgentResponse)  # getAgentWithRetry
    assert (agent["name"], agent["soul"], agent["description"]) == ("reviewer", SOUL, "Reviews PRs")

    # "start chatting": /workspace/agents/Reviewer/chats/new
    chat = await new_thread(api)
    fake_openai.script(Reply(text="Send me the diff."))
    got, _ = await stream(api, chat, ui_submit("Review this", chat, agent_name="Reviewer"))
    check_run_stream(got, chat)
    assert "You review pull requests" in system_text(fake_openai.last_request)
    assert "update_agent" in tool_names(fake_openai.last_request)
    listed = await ok(api, "GET", "/api/agents", df.AgentsListResponse)
    assert [a["name"] for a in listed["agents"]] == ["reviewer"]
    assistants = await ok(api, "POST", f"{LG}/assistants/search", list[df.Assistant], json={})
    assert [a["assistant_id"] for a in assistants] == ["lead_agent", "reviewer"]


async def test_edit_and_delete_an_agent_and_the_user_profile(api: Api) -> None:
    body = {"name": "helper", "description": "helps", "soul": "You help."}
    status, created, _ = await api.call("POST", "/api/agents", json=body)
    assert status == 201, created
    df.AgentResponse.model_validate(created)
    changed = await ok(api, "PUT", "/api/agents/helper", df.AgentResponse,
                       json={"description": "helps more", "skills": []})  # fmt: skip
    assert (changed["description"], changed["skills"], changed["soul"]) == (
        "helps more", [], "You help.",
    )  # fmt: skip
    status, _, _ = await api.call("DELETE", "/api/agents/helper")
    assert status == 204
    assert (await api.call("GET", "/api/agents/helper"))[0] == 404

    profile = await ok(api, "GET", "/api/user-profile", df.UserProfileResponse)
    assert profile == {"content": None}
    saved = await ok(api, "PUT", "/api/user-profile", df.UserProfileResponse,
                     json={"content": "I review Go code."})  # fmt: skip
    assert saved == {"content": "I review Go code."}
