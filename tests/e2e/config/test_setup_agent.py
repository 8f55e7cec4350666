"""DeerFlow's agent-creation chat against the Gateway: a langgraph-sdk client runs the bootstrap
flow as DeerFlow's web UI does (`context: {is_bootstrap: true, agent_name}`), the fake OpenAI
server makes the `setup_agent` call, and the new agent is in config.yaml, in `/api/agents`, an
assistant, and live for its next run; there `update_agent` refines it. A chat person who is not
an admin is told no (and the refusal is audited)."""

from __future__ import annotations

from typing import Any

import yaml
from langgraph_sdk import get_client

from bot import texts
from tests.e2e.config.service import (
    Service,
    answered,
    system_text,
    tool_names,
    wait_change,
    write_config,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply, ToolCall
from tests.fakes.telegram_server import FakeTelegram
from tests.gateway.deerflow_shapes import AgentResponse, Assistant

SOUL = "# Writer\nYou polish prose. Keep the author's voice."


def ui_context(name: str) -> dict[str, Any]:
    """What DeerFlow's new-agent page sends with each message (mode `flash`)."""
    return {"mode": "flash", "is_bootstrap": True, "agent_name": name, "thinking_enabled": False,
            "is_plan_mode": False, "subagent_enabled": False}  # fmt: skip


def said(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def tool_results(values: Any, name: str) -> list[str]:
    return [m["content"] for m in values["messages"] if m["type"] == "tool" and m["name"] == name]


async def test_the_bootstrap_flow_creates_a_live_agent(
    svc: Service, fake_openai: FakeOpenAI
) -> None:
    client = get_client(url=svc.url + "/api", api_key=None)
    assert (await svc.call("GET", "/api/agents/check?name=Writer"))[1]["available"] is True
    thread = await client.threads.create(metadata={"agent_name": "Writer"})
    tid = thread["thread_id"]

    # the first message: the model talks about the agent (no tool call yet)
    fake_openai.script(Reply(text="What should Writer do?"))
    await client.runs.wait(tid, "lead_agent", input=said("Make me an agent called Writer"),
                           context=ui_context("Writer"))  # fmt: skip
    asked = fake_openai.last_request
    assert "setup_agent" in tool_names(asked)
    assert "update_agent" not in tool_names(asked)
    assert 'new custom agent named "writer"' in system_text(asked)

    # "save": the model calls setup_agent, as DeerFlow's UI expects to see in the messages
    fake_openai.script(
        Reply(tool_calls=[ToolCall("setup_agent", {"soul": SOUL, "description": "Polishes"})]),
        Reply(text="Writer is ready."),
    )
    parts = [p async for p in client.runs.stream(
        tid, "lead_agent", input=said("Save it"), context=ui_context("Writer"),
        stream_mode=["values", "messages-tuple"])]  # fmt: skip
    values: Any = [p.data for p in parts if p.event == "values"][-1]
    assert tool_results(values, "setup_agent") == ["Agent 'writer' created successfully!"]

    status, got = await svc.call("GET", "/api/agents/writer")
    assert status == 200, got
    agent = AgentResponse.model_validate(got)
    assert (agent.soul, agent.description) == (SOUL, "Polishes")
    kept = yaml.safe_load(svc.path.read_text(encoding="utf-8"))["agents"]
    assert kept == [{"name": "writer", "description": "Polishes", "system_prompt": SOUL}]
    changes = (await svc.call("GET", "/api/config/changes"))[1]["changes"]
    assert changes[0]["who"].startswith(f"setup_agent (api, thread {tid})")
    assert changes[0]["changed"] == ["agents"]
    found = await client.assistants.search()
    assert [a["assistant_id"] for a in found] == ["lead_agent", "writer"]
    Assistant.model_validate(found[1])

    # the new agent answers at once, with its soul and the update_agent tool
    chat = await client.threads.create(metadata={"agent_name": "writer"})
    fake_openai.script(
        Reply(tool_calls=[ToolCall("update_agent", {"description": "Edits", "soul": "null"})]),
        Reply(text="Updated."),
    )
    values = await client.runs.wait(chat["thread_id"], "lead_agent", input=said("Describe you"),
                                    context={"agent_name": "writer", "mode": "flash"})  # fmt: skip
    first = fake_openai.requests[-2]
    assert "You polish prose." in system_text(first)
    assert "update_agent" in tool_names(first)
    assert "setup_agent" not in tool_names(first)
    assert tool_results(values, "update_agent") == [
        "Agent 'writer' updated successfully. Changed: description. "
        "The new configuration takes effect on the next message."
    ]
    got = (await svc.call("GET", "/api/agents/writer"))[1]
    assert (got["description"], got["soul"]) == ("Edits", SOUL)


async def test_bootstrap_needs_a_valid_agent_name(svc: Service) -> None:
    client = get_client(url=svc.url + "/api", api_key=None)
    thread = await client.threads.create()
    for context in ({"is_bootstrap": True}, {"is_bootstrap": True, "agent_name": "no_under"}):
        status, body = await svc.call(
            "POST",
            f"/api/threads/{thread['thread_id']}/runs/wait",
            {"assistant_id": "lead_agent", "input": said("hi"), "context": context},
        )
        assert status == 422, body
        assert "is_bootstrap needs context.agent_name" in body["detail"]


async def test_a_chat_member_may_not_change_an_agent(
    svc: Service, fake: FakeTelegram, fake_openai: FakeOpenAI
) -> None:
    body = {"name": "helper", "soul": "You help.", "description": "helps"}
    assert (await svc.call("POST", "/api/agents", body))[0] == 201
    fake.push_message(42, "/agent helper")
    await fake.wait_for(lambda: texts.agent_switched("helper") in fake.sent_texts(42), timeout=10)
    fake_openai.script(
        Reply(tool_calls=[ToolCall("update_agent", {"soul": "You obey me."})]),
        Reply(text="I cannot."),
    )
    await answered(svc, fake, fake_openai, 42, "I cannot.")
    tool_message = [m for m in fake_openai.last_request.body["messages"] if m["role"] == "tool"]
    assert "only an admin may change agents" in tool_message[-1]["content"]
    assert (await svc.call("GET", "/api/agents/helper"))[1]["soul"] == "You help."
    audit = (await svc.call("GET", "/api/audit?kind=denied"))[1]
    assert any(e["subject"] == "helper" and e["outcome"] == "agent" for e in audit["entries"])


async def test_a_bad_change_is_refused_and_setup_again_replaces(
    svc: Service, fake_openai: FakeOpenAI
) -> None:
    client = get_client(url=svc.url + "/api", api_key=None)
    body = {"name": "helper", "soul": "You help.", "description": "helps", "model": "smart"}
    assert (await svc.call("POST", "/api/agents", body))[0] == 201
    thread = await client.threads.create()
    fake_openai.script(
        Reply(tool_calls=[ToolCall("update_agent", {"model": "huge"})]), Reply(text="No.")
    )
    values = await client.runs.wait(thread["thread_id"], "helper", input=said("use huge"))
    assert tool_results(values, "update_agent") == [
        "Error: agents[0].model: 'huge' is not one of models[].name"
    ]
    assert (await svc.call("GET", "/api/agents/helper"))[1]["model"] == "smart"

    fake_openai.script(
        Reply(tool_calls=[ToolCall("setup_agent", {"soul": "You help more.", "description": "x",
                                                   "skills": []})]),
        Reply(text="Done."),
    )  # fmt: skip
    values = await client.runs.wait(
        thread["thread_id"], "lead_agent", input=said("again"), context=ui_context("helper")
    )
    assert tool_results(values, "setup_agent") == ["Agent 'helper' updated successfully!"]
    got = (await svc.call("GET", "/api/agents/helper"))[1]
    assert (got["soul"], got["skills"], got["model"]) == ("You help more.", [], "smart")


async def test_update_agent_on_a_profile_named_in_the_file(
    svc: Service, fake_openai: FakeOpenAI
) -> None:
    """Antler's own names may hold `_` (DeerFlow's rule is only for new agents)."""
    raw = yaml.safe_load(svc.path.read_text(encoding="utf-8"))
    raw["agents"] = [{"name": "eng_bot", "system_prompt": "You build."}]
    write_config(svc.path, raw)
    await wait_change(svc, 1)
    client = get_client(url=svc.url + "/api", api_key=None)
    thread = await client.threads.create()
    fake_openai.script(
        Reply(tool_calls=[ToolCall("update_agent", {"description": "builds"})]), Reply(text="ok")
    )
    values = await client.runs.wait(thread["thread_id"], "eng_bot", input=said("describe"))
    assert tool_results(values, "update_agent")[0].startswith("Agent 'eng_bot' updated")
    assert yaml.safe_load(svc.path.read_text(encoding="utf-8"))["agents"] == [
        {"name": "eng_bot", "description": "builds", "system_prompt": "You build."}
    ]
