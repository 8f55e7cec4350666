"""DeerFlow's custom agents API and the LangGraph assistants over the agent profiles, end to end:
created, changed and deleted through `/api/agents` (validated against DeerFlow's shapes), kept
in config.yaml (comments kept) and live at once: a Telegram chat switched to the new agent
(real python-telegram-bot, fake Telegram) and a langgraph-sdk run with its assistant_id both
reach the fake OpenAI server with its soul and model."""

from __future__ import annotations

from typing import Any

import aiohttp
import yaml
from langgraph_sdk import get_client

from bot import texts
from tests.e2e.config.service import HEADER, Service, answered, system_text
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.gateway.deerflow_shapes import (
    AgentNameCheck,
    AgentResponse,
    AgentsListResponse,
    Assistant,
)

HUMAN = {"messages": [{"role": "user", "content": "hello there"}]}
SUPPORT = {
    "name": "Support",
    "display_name": "Support desk",
    "description": "answers customers",
    "model": "smart",
    "tool_groups": ["web_*"],
    "skills": [],
    "soul": "You are the support desk.",
}


def sdk(svc: Service) -> Any:
    return get_client(url=svc.url + "/api", api_key=None)


async def test_agents_are_created_in_deerflows_shapes_and_kept_in_the_file(svc: Service) -> None:
    status, listing = await svc.call("GET", "/api/agents")
    assert status == 200
    assert AgentsListResponse.model_validate(listing).agents == []
    status, check = await svc.call("GET", "/api/agents/check?name=Support")
    assert AgentNameCheck.model_validate(check).model_dump() == {
        "available": True,
        "name": "support",
    }
    assert (await svc.call("GET", "/api/agents/check?name=no_underscores"))[0] == 422

    status, created = await svc.call("POST", "/api/agents", SUPPORT)
    assert status == 201, created
    agent = AgentResponse.model_validate(created)
    assert (agent.name, agent.model, agent.soul) == (
        "support",
        "smart",
        "You are the support desk.",
    )
    assert agent.tool_groups == ["web_*"]
    assert (await svc.call("POST", "/api/agents", SUPPORT))[0] == 409
    assert (await svc.call("GET", "/api/agents/check?name=support"))[1]["available"] is False
    status, bad = await svc.call("POST", "/api/agents", {**SUPPORT, "name": "x", "model": "huge"})
    assert status == 422
    assert "agents[1].model: 'huge' is not one of models[].name" in bad["detail"]["errors"]
    text = svc.path.read_text(encoding="utf-8")
    assert text.startswith(HEADER)  # comments kept
    assert yaml.safe_load(text)["agents"] == [
        {"name": "support", "display_name": "Support desk", "description": "answers customers",
         "system_prompt": "You are the support desk.", "model": "smart", "tools": ["web_*"],
         "skills": []}
    ]  # fmt: skip


async def test_a_new_agent_is_live_in_chats_and_as_an_assistant(
    svc: Service, fake: FakeTelegram, fake_openai: FakeOpenAI
) -> None:
    assert (await svc.call("POST", "/api/agents", SUPPORT))[0] == 201
    status, changed = await svc.call("PUT", "/api/agents/SUPPORT", {"soul": "Support, v2."})
    assert status == 200, changed
    assert AgentResponse.model_validate(changed).soul == "Support, v2."
    assert changed["model"] == "smart"  # what was not sent is kept
    assert (await svc.call("GET", "/api/agents/support"))[1]["soul"] == "Support, v2."
    assert (await svc.call("GET", "/api/agents/nobody"))[0] == 404

    # a chat picks the new agent at once; the model sees its soul and model
    fake.push_message(42, "/agent support")
    switched = texts.agent_switched("Support desk")
    await fake.wait_for(lambda: switched in fake.sent_texts(42), timeout=10)
    await answered(svc, fake, fake_openai, 42, "hello support")
    assert "Support, v2." in system_text(fake_openai.last_request)
    assert fake_openai.last_request.model == "fake-smart"

    # the LangGraph API: every profile is an assistant, and a run with its id uses it
    client = sdk(svc)
    found = await client.assistants.search(graph_id="lead_agent")
    assert [a["assistant_id"] for a in found] == ["lead_agent", "support"]
    for item in found:
        Assistant.model_validate(item)
    assert (await client.assistants.get("support"))["metadata"]["display_name"] == "Support desk"
    thread = await client.threads.create()
    await client.runs.wait(thread["thread_id"], "support", input=HUMAN)
    assert "Support, v2." in system_text(fake_openai.last_request)
    await client.runs.wait(thread["thread_id"], "lead_agent", input=HUMAN)
    assert "Support, v2." not in system_text(fake_openai.last_request)

    async with (
        aiohttp.ClientSession() as http,
        http.delete(svc.url + "/api/agents/support") as resp,
    ):
        assert resp.status == 204  # no body: svc.call reads JSON
    assert (await svc.call("GET", "/api/agents/support"))[0] == 404
    assert [a["assistant_id"] for a in await client.assistants.search()] == ["lead_agent"]
    assert "agents: []" in svc.path.read_text(encoding="utf-8")
    await answered(svc, fake, fake_openai, 42, "who answers now?")  # lead_agent again
    assert "Support, v2." not in system_text(fake_openai.last_request)
