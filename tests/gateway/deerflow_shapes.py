"""DeerFlow's Gateway response shapes as pydantic models, written from the documented shapes
(/work/shared/reference/deerflow-agent-gateway.md §1 and §4, and the web UI's TypeScript types),
not from DeerFlow's code. Extra keys are allowed (Antler adds a few); every documented key
is required with its type, so a missing or mistyped field fails the validation."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr


class Shape(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


# ---------------------------------------------------------------- settings pages


class ModelResponse(Shape):
    name: StrictStr
    model: StrictStr
    display_name: StrictStr | None = None
    description: StrictStr | None = None
    supports_thinking: StrictBool
    supports_reasoning_effort: StrictBool


class TokenUsage(Shape):
    enabled: StrictBool


class ModelsResponse(Shape):
    models: list[ModelResponse]
    token_usage: TokenUsage


class McpServer(Shape):
    enabled: StrictBool
    type: Literal["stdio", "sse", "http"] | None = None


class McpConfigResponse(Shape):
    mcp_servers: dict[str, McpServer]


class SkillResponse(Shape):
    name: StrictStr
    description: StrictStr
    license: StrictStr | None
    category: Literal["public", "custom", "legacy", "integrations"]
    enabled: StrictBool
    editable: StrictBool


class SkillsResponse(Shape):
    skills: list[SkillResponse]


class SkillInstallResponse(Shape):
    success: StrictBool
    skill_name: StrictStr
    message: StrictStr


class ContextSection(Shape):
    summary: StrictStr
    updatedAt: StrictStr


class UserContext(Shape):
    workContext: ContextSection
    personalContext: ContextSection
    topOfMind: ContextSection


class HistoryContext(Shape):
    recentMonths: ContextSection
    earlierContext: ContextSection
    longTermBackground: ContextSection


class MemoryFact(Shape):
    id: StrictStr
    content: StrictStr
    category: StrictStr
    confidence: StrictFloat | StrictInt
    createdAt: StrictStr
    source: StrictStr


class MemoryResponse(Shape):
    version: StrictStr
    lastUpdated: StrictStr
    user: UserContext
    history: HistoryContext
    facts: list[MemoryFact]


class MemoryConfigResponse(Shape):
    enabled: StrictBool
    mode: Literal["middleware", "tool"]
    injection_enabled: StrictBool
    shutdown_flush_timeout_seconds: StrictFloat | StrictInt
    manager_class: StrictStr
    backend_config: dict[str, Any]


class MemoryStatusResponse(Shape):
    config: MemoryConfigResponse
    data: MemoryResponse


class ChannelsResponse(Shape):
    service_running: StrictBool
    channels: dict[str, Any]


# ---------------------------------------------------------------- uploads


class UploadedFileInfo(Shape):
    filename: StrictStr
    size: StrictInt
    path: StrictStr
    virtual_path: StrictStr
    artifact_url: StrictStr
    extension: StrictStr | None = None
    modified: StrictFloat | StrictInt | None = None


class UploadResponse(Shape):
    success: StrictBool
    files: list[UploadedFileInfo]
    message: StrictStr
    skipped_files: list[StrictStr]


class ListFilesResponse(Shape):
    files: list[UploadedFileInfo]
    count: StrictInt


class UploadLimits(Shape):
    max_files: StrictInt
    max_file_size: StrictInt
    max_total_size: StrictInt


# ---------------------------------------------------------------- LangGraph-compatible


class Assistant(Shape):
    assistant_id: StrictStr
    graph_id: StrictStr
    name: StrictStr
    config: dict[str, Any]
    metadata: dict[str, Any]
    description: StrictStr | None
    created_at: StrictStr
    updated_at: StrictStr
    version: StrictInt


class ThreadResponse(Shape):
    thread_id: StrictStr
    status: Literal["idle", "busy", "interrupted", "error"]
    created_at: StrictStr
    updated_at: StrictStr
    metadata: dict[str, Any]
    values: dict[str, Any]
    interrupts: dict[str, Any]


class Checkpoint(Shape):
    thread_id: StrictStr
    checkpoint_ns: StrictStr
    checkpoint_id: StrictStr | None


class ThreadState(Shape):
    values: dict[str, Any]
    next: list[StrictStr]
    metadata: dict[str, Any]
    checkpoint: Checkpoint
    checkpoint_id: StrictStr | None
    parent_checkpoint_id: StrictStr | None
    created_at: StrictStr | None
    tasks: list[dict[str, Any]]


class StateUpdateResponse(Shape):
    checkpoint: Checkpoint


class RunResponse(Shape):
    run_id: StrictStr
    thread_id: StrictStr
    assistant_id: StrictStr
    status: Literal["pending", "running", "success", "error", "timeout", "interrupted"]
    metadata: dict[str, Any]
    kwargs: dict[str, Any]
    multitask_strategy: Literal["reject", "interrupt", "rollback"]
    created_at: StrictStr
    updated_at: StrictStr


class RunMetadataEvent(Shape):
    run_id: StrictStr
    thread_id: StrictStr


class Message(Shape):
    type: StrictStr
    content: StrictStr | list[Any]
    id: StrictStr | None = None
    additional_kwargs: dict[str, Any]


class ErrorResponse(Shape):
    detail: Any


# ---------------------------------------------------------------- what the UI does with them

HIDDEN_TAGS = re.compile(r"<(current_uploads|uploaded_files|slash_skill_activation)>[\s\S]*?</\1>")


def bubble_text(content: str) -> str:
    """A human message's text as the UI's bubble shows it (`stripUploadedFilesTag`)."""
    return HIDDEN_TAGS.sub("", content).strip()


def text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))
