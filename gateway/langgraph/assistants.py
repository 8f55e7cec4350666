"""LangGraph's assistants API: search, get, graph, schemas. Each agent profile
(agent/profiles.py) is an assistant of the one graph, `lead_agent`, as in DeerFlow: its
`assistant_id` is the profile's name, and a run with that `assistant_id` uses the profile.

DeerFlow's web UI (`useStream`) and LangGraph clients look the assistant up before a run.
Graphs and schemas are answered empty, as DeerFlow does.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent.profiles import LEAD_AGENT, AgentProfile
from gateway.errors import ApiError
from gateway.langgraph.run_schemas import ASSISTANT_ID
from gateway.langgraph.schemas import Strict
from gateway.registry import Call, Registry

TAG = "assistants"
api = Registry(tag=TAG)
ONE = "/api/assistants/{assistant_id}"
CREATED = "2025-01-01T00:00:00+00:00"  # fixed: assistants are part of the configuration


class Assistant(BaseModel):
    assistant_id: str
    graph_id: str
    name: str
    config: dict[str, Any] = Field(default_factory=dict)
    context: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    description: str | None = None
    created_at: str
    updated_at: str
    version: int = 1


class AssistantSearch(Strict):
    graph_id: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None
    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0, le=2**63 - 1)
    sort_by: str | None = None
    sort_order: str | None = None
    select: list[str] | None = None


class GraphQuery(Strict):
    xray: bool | int | None = None


class AssistantGraph(BaseModel):
    graph_id: str
    nodes: list[Any]
    edges: list[Any]


class AssistantSchemas(BaseModel):
    graph_id: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    state_schema: dict[str, Any]
    config_schema: dict[str, Any]
    context_schema: dict[str, Any]


def assistant(profile: AgentProfile) -> Assistant:
    lead = profile.name == LEAD_AGENT
    return Assistant(
        assistant_id=profile.name,
        graph_id=ASSISTANT_ID,
        name=profile.name,
        metadata={"created_by": "system", "display_name": profile.label},
        description=profile.description or ("Antler's lead agent" if lead else None),
        created_at=CREATED,
        updated_at=CREATED,
    )


def assistants(call: Call) -> list[Assistant]:
    """Every agent profile, `lead_agent` first."""
    return [assistant(p) for p in call.gw.service.runner.profiles.values()]


def _found(call: Call) -> Assistant:
    assistant_id = call.request.match_info["assistant_id"]
    found = next((a for a in assistants(call) if a.assistant_id == assistant_id), None)
    if found is None:
        raise ApiError(
            404, f"assistant {assistant_id} not found; POST /api/assistants/search lists them"
        )
    return found


@api.route(
    "POST", "/api/assistants/search", body=AssistantSearch, response=list[Assistant], errors=(422,)
)
async def search_assistants(call: Call) -> list[dict[str, Any]]:
    """Search assistants (one per agent profile)"""
    body: AssistantSearch = call.body
    found = assistants(call)
    if body.graph_id is not None:
        found = [a for a in found if a.graph_id == body.graph_id]
    if body.name is not None:
        found = [a for a in found if body.name.lower() in a.name.lower()]
    if body.metadata:
        found = [a for a in found if all(a.metadata.get(k) == v for k, v in body.metadata.items())]
    return [a.model_dump(mode="json") for a in found[body.offset : body.offset + body.limit]]


@api.route("GET", ONE, errors=(404, 422))
async def get_assistant(call: Call) -> Assistant:
    """Get an assistant"""
    return _found(call)


@api.route("GET", ONE + "/graph", query=GraphQuery, errors=(404, 422))
async def get_assistant_graph(call: Call) -> AssistantGraph:
    """The assistant's graph (empty, as in DeerFlow)"""
    return AssistantGraph(graph_id=_found(call).graph_id, nodes=[], edges=[])


@api.route("GET", ONE + "/schemas", errors=(404, 422))
async def get_assistant_schemas(call: Call) -> AssistantSchemas:
    """The assistant's schemas (empty, as in DeerFlow)"""
    return AssistantSchemas(
        graph_id=_found(call).graph_id,
        input_schema={},
        output_schema={},
        state_schema={},
        config_schema={},
        context_schema={},
    )
