"""DeerFlow's custom agents API over Antler's agent profiles (`agents:` in config.yaml):
`GET /api/agents`, `GET /api/agents/check?name=`, `POST /api/agents` (201),
`GET|PUT|DELETE /api/agents/{name}`, in DeerFlow's shapes.

A custom agent is a profile other than `lead_agent` (agent/profiles.py). Its `soul` is the
profile's prompt (the SOUL file's text, or `system_prompt`); `tool_groups` are the profile's
`tools` (names or globs of tools), `skills` its skills (null: all, []: none). Names follow
DeerFlow's rule (letters, digits and hyphens) and are kept in lower case.

Changes are written back to config.yaml through the configuration editor (bot/config/live.py,
the same path as `/api/config`): validated with the whole file (an unknown model is a 422 with
its YAML path), written atomically with comments kept, applied live to the next run of every
chat, and recorded. Without a config file, reads work and changes answer 409.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from agent.profiles import LEAD_AGENT, AgentProfile
from bot.agent_editor import DEERFLOW_NAME, InvalidAgent, agents_body, merged, valid
from gateway.api.config import ConfigChange, _edit
from gateway.errors import ApiError
from gateway.registry import Call, Registry
from gateway.service import Gateway

api = Registry()
TAG = "agents"
ONE = "/api/agents/{name}"


class AgentResponse(BaseModel):
    name: str
    display_name: str | None = None
    description: str = ""
    model: str | None = None
    tool_groups: list[str] | None = None
    skills: list[str] | None = None
    soul: str | None = None
    mcp_servers: list[str] | None = None  # Antler's: the MCP servers the profile may use
    memory: str = "shared"  # Antler's: `shared` (the person's memory) or `own`


class AgentsListResponse(BaseModel):
    agents: list[AgentResponse]


class AgentCreateRequest(BaseModel):
    name: str = Field(max_length=64)
    display_name: str | None = Field(default=None, max_length=128)
    description: str = ""
    model: str | None = None
    tool_groups: list[str] | None = None
    skills: list[str] | None = None
    soul: str = ""
    mcp_servers: list[str] | None = None
    memory: str = "shared"


class AgentUpdateRequest(BaseModel):
    """Every key optional: an omitted key is kept, a null one cleared (`skills: null`: all)."""

    display_name: str | None = Field(default=None, max_length=128)
    description: str | None = None
    model: str | None = None
    tool_groups: list[str] | None = None
    skills: list[str] | None = None
    soul: str | None = None
    mcp_servers: list[str] | None = None
    memory: str | None = None


class NameCheck(BaseModel):
    available: bool
    name: str


class NameQuery(BaseModel):
    name: str = Field(max_length=64)


def _normal(name: str) -> str:
    """DeerFlow's rule: letters, digits and hyphens (422 otherwise), kept in lower case."""
    if not DEERFLOW_NAME.fullmatch(name):
        raise ApiError(
            422, f"invalid agent name {name!r}: use letters, digits and hyphens (^[A-Za-z0-9-]+$)"
        )
    return name.lower()


def _configured(gw: Gateway) -> list[AgentProfile]:
    """The `agents:` section as the service runs it (the file's, once applied)."""
    live = gw.service.live_config()
    if live is not None:
        return list(live.settings.agents)
    return [p for n, p in gw.service.runner.profiles.items() if n != LEAD_AGENT]


def _find(gw: Gateway, name: str) -> AgentProfile:
    found = next((p for p in _configured(gw) if p.name.lower() == name), None)
    if found is None or name == LEAD_AGENT:
        raise ApiError(404, f"Agent '{name}' not found")
    return found


def response(profile: AgentProfile, fallback: str = "") -> AgentResponse:
    try:
        soul = profile.prompt(fallback)
    except OSError:  # the SOUL file went missing after the config was read
        soul = ""
    return AgentResponse(
        name=profile.name,
        display_name=profile.display_name or None,
        description=profile.description,
        model=profile.model,
        tool_groups=profile.tools,
        skills=profile.skills,
        soul=soul,
        mcp_servers=profile.mcp_servers,
        memory=profile.memory,
    )


async def _write(call: Call, profiles: list[AgentProfile]) -> ConfigChange:
    """The whole `agents:` list, each entry merged into the file's by name (comments kept)."""
    live = call.gw.service.live_config()
    if live is None:
        raise ApiError(409, "the service was not started from a config file; nothing to change")
    return await _edit(call, (), agents_body(profiles, live.path), replace=False)


@api.route("GET", "/api/agents", summary="List custom agents", tag=TAG,
           response=AgentsListResponse)  # fmt: skip
async def list_agents(call: Call) -> AgentsListResponse:
    fallback = call.gw.service.agent_config().system_prompt
    profiles = [p for p in _configured(call.gw) if p.name != LEAD_AGENT]
    return AgentsListResponse(agents=[response(p, fallback) for p in profiles])


@api.route("GET", "/api/agents/check", summary="Check an agent name", tag=TAG,
           query=NameQuery, response=NameCheck, errors=(422,))  # fmt: skip
async def check_name(call: Call) -> NameCheck:
    name = _normal(call.query.name)
    taken = {p.name.lower() for p in _configured(call.gw)} | {LEAD_AGENT}
    return NameCheck(available=name not in taken, name=name)


@api.route("GET", ONE, summary="Get a custom agent", tag=TAG, response=AgentResponse,
           errors=(404, 422))  # fmt: skip
async def get_agent(call: Call) -> AgentResponse:
    profile = _find(call.gw, _normal(call.path["name"]))
    return response(profile, call.gw.service.agent_config().system_prompt)


@api.route("POST", "/api/agents", summary="Create a custom agent", tag=TAG,
           body=AgentCreateRequest, response=AgentResponse, status=201,
           errors=(409, 422))  # fmt: skip
async def create_agent(call: Call) -> AgentResponse:
    body: AgentCreateRequest = call.body
    name = _normal(body.name)
    current = _configured(call.gw)
    if name == LEAD_AGENT or any(p.name.lower() == name for p in current):
        raise ApiError(409, f"Agent '{name}' already exists")
    new = {"name": name, "display_name": body.display_name or "",
           "description": body.description, "model": body.model, "tools": body.tool_groups,
           "skills": body.skills, "system_prompt": body.soul, "mcp_servers": body.mcp_servers,
           "memory": body.memory}  # fmt: skip
    await _write(call, [*current, _checked(lambda: valid(new))])
    return response(_find(call.gw, name))


@api.route("PUT", ONE, summary="Update a custom agent", tag=TAG, body=AgentUpdateRequest,
           response=AgentResponse, errors=(404, 409, 422))  # fmt: skip
async def update_agent(call: Call) -> AgentResponse:
    """Only the keys sent change; a new `soul` is kept in config.yaml as the profile's
    `system_prompt` (a profile read from a `soul_file` then no longer reads it)."""
    name = _normal(call.path["name"])
    old = _find(call.gw, name)
    body: AgentUpdateRequest = call.body
    sent = body.model_dump(exclude_unset=True)
    keys = {"tool_groups": "tools", "soul": "system_prompt"}
    changed = {keys.get(k, k): v for k, v in sent.items()}
    if "display_name" in changed:
        changed["display_name"] = changed["display_name"] or ""
    profile = _checked(lambda: merged(old, changed))
    await _write(call, [profile if p is old else p for p in _configured(call.gw)])
    return response(_find(call.gw, name), call.gw.service.agent_config().system_prompt)


@api.route("DELETE", ONE, summary="Delete a custom agent", tag=TAG, status=204,
           errors=(404, 409, 422))  # fmt: skip
async def delete_agent(call: Call) -> None:
    """Conversations that talked to it go on with `lead_agent`."""
    name = _normal(call.path["name"])
    old = _find(call.gw, name)
    await _write(call, [p for p in _configured(call.gw) if p is not old])


def _checked(make: Callable[[], AgentProfile]) -> AgentProfile:
    try:
        return make()
    except InvalidAgent as exc:
        raise ApiError(422, {"message": "agent not valid; nothing was changed",
                             "errors": exc.errors}) from None  # fmt: skip
