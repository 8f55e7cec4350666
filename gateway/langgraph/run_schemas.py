"""Run request and response models, as LangGraph's SDK sends and expects them.

The request forbids unknown keys; options the SDK always sends are accepted, and options this
server does not implement must be left at their neutral value (422 otherwise).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from gateway.langgraph.schemas import Strict

StreamMode = Literal[
    "values", "messages-tuple", "updates", "debug", "tasks", "checkpoints", "custom"
]
RunStatus = Literal["pending", "running", "success", "error", "timeout", "interrupted"]
MultitaskStrategy = Literal["reject", "interrupt", "rollback"]
ASSISTANT_ID = "lead_agent"


class RunConfig(BaseModel):
    configurable: dict[str, Any] = Field(default_factory=dict)
    recursion_limit: int | None = Field(default=None, ge=1, le=1000)
    tags: list[str] | None = None
    context: dict[str, Any] | None = None


class RunContextInput(BaseModel):
    """The whitelisted run settings (DeerFlow's `context` keys); other keys are ignored."""

    model_name: str | None = None
    model: str | None = None
    agent_name: str | None = None  # DeerFlow's custom agent; else a custom assistant_id
    is_bootstrap: bool | None = None  # DeerFlow's agent creation: sets up `agent_name`
    thinking_enabled: bool | None = None
    is_plan_mode: bool | None = None


class RunInput(BaseModel):
    messages: list[dict[str, Any] | str] = Field(min_length=1)


class RunCreate(Strict):
    assistant_id: str = ASSISTANT_ID
    input: RunInput | None = None
    command: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    config: RunConfig | None = None
    context: RunContextInput | None = None
    checkpoint_id: str | None = None
    checkpoint: dict[str, Any] | None = None
    interrupt_before: list[str] | Literal["*"] | None = None
    interrupt_after: list[str] | Literal["*"] | None = None
    stream_mode: StreamMode | list[StreamMode] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool | None = None  # the replay buffer serves Last-Event-ID either way
    on_disconnect: Literal["cancel", "continue"] = "cancel"
    multitask_strategy: MultitaskStrategy = "reject"
    if_not_exists: Literal["create", "reject"] | None = None
    webhook: None = None
    on_completion: None = None
    after_seconds: None = None
    feedback_keys: None = None
    checkpoint_during: bool | None = None
    durability: Literal["sync", "async", "exit"] | None = None
    strict_resume: bool | None = None
    langsmith_tracer: None = None

    def modes(self) -> list[str]:
        modes = [self.stream_mode] if isinstance(self.stream_mode, str) else self.stream_mode
        return list(dict.fromkeys(modes)) or ["values"]


class RunResponse(BaseModel):
    run_id: str
    thread_id: str
    assistant_id: str = ASSISTANT_ID
    status: RunStatus
    metadata: dict[str, Any] = Field(default_factory=dict)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    multitask_strategy: MultitaskStrategy = "reject"
    created_at: str
    updated_at: str
    error: str | None = None


class RunListQuery(Strict):
    limit: int = Field(default=10, ge=1, le=1000)
    offset: int = Field(default=0, ge=0, le=2**63 - 1)
    status: RunStatus | None = None
    select: list[str] | str | None = None


class CancelQuery(Strict):
    wait: bool = False
    action: Literal["interrupt", "rollback"] = "interrupt"


class JoinStreamQuery(Strict):
    cancel_on_disconnect: bool = False
    stream_mode: StreamMode | list[StreamMode] | None = None
    action: Literal["interrupt", "rollback"] | None = None
    wait: bool = False

    @field_validator("stream_mode", "action", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        if isinstance(value, str) and value.startswith("["):  # the JS SDK sends a list as JSON
            try:
                return json.loads(value)
            except ValueError:
                return value
        return None if value == "" else value  # httpx sends None query params as ``


class WaitResult(BaseModel):
    """The final state values of the run (LangGraph's `/wait` and `/join` answer)."""

    model_config = {"extra": "allow"}
