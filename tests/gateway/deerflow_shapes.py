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


# ---------------------------------------------------------------- custom agents (§1.2)


class AgentResponse(Shape):
    name: StrictStr
    display_name: StrictStr | None
    description: StrictStr
    model: StrictStr | None
    tool_groups: list[StrictStr] | None
    skills: list[StrictStr] | None
    soul: StrictStr | None


class AgentsListResponse(Shape):
    agents: list[AgentResponse]


class AgentNameCheck(Shape):
    available: StrictBool
    name: StrictStr


class UserProfileResponse(Shape):
    content: StrictStr | None


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


# ---------------------------------------------------------------- pages the UI draws first
# (frontend/src/core/{features,suggestions,channels,integrations/lark,threads}/ types)


class Feature(Shape):
    enabled: StrictBool


class FeaturesResponse(Shape):
    agents_api: Feature
    browser_control: Feature | None = None
    mcp_tasks: Feature | None = None


class SuggestionsConfig(Shape):
    enabled: StrictBool
    max_suggestions: StrictInt


class ChannelProvider(Shape):
    provider: StrictStr
    display_name: StrictStr
    enabled: StrictBool
    configured: StrictBool
    connectable: StrictBool | None = None
    unavailable_reason: StrictStr | None = None
    auth_mode: StrictStr
    connection_status: StrictStr
    credential_fields: list[dict[str, Any]]


class ChannelProvidersResponse(Shape):
    enabled: StrictBool
    providers: list[ChannelProvider]


class ChannelConnectionsResponse(Shape):
    connections: list[dict[str, Any]]


class LarkCliProbe(Shape):
    available: StrictBool
    path: StrictStr | None
    version: StrictStr | None
    error: StrictStr | None


class LarkAuthProbe(Shape):
    status: Literal["authenticated", "not_authorized", "not_configured", "unavailable", "error"]
    message: StrictStr | None
    user: StrictStr | None
    verified: StrictBool


class LarkIntegrationStatus(Shape):
    installed: StrictBool
    version: StrictStr
    manifest_version: StrictStr | None
    latest_available_version: StrictStr | None
    runtime_version_mismatch: StrictBool
    app_configured: StrictBool
    app_id: StrictStr | None
    app_brand: StrictStr | None
    skills_expected: StrictInt
    skills_installed: StrictInt
    installed_skills: list[StrictStr]
    enabled_skills: list[StrictStr]
    install_path: StrictStr
    cli: LarkCliProbe
    auth: LarkAuthProbe
    sandbox_runtime_mode: Literal["none", "gateway-download", "init-container", "broker"]
    sandbox_runtime_ready: StrictBool
    sandbox_runtime_detail: StrictStr | None


class RunMessage(Shape):
    run_id: StrictStr
    seq: StrictInt
    content: Message
    metadata: dict[str, Any]
    created_at: StrictStr


class ThreadMessagesPage(Shape):
    data: list[RunMessage]
    has_more: StrictBool
    next_before_seq: StrictInt | None


def check_page(page: dict[str, Any]) -> None:
    """The UI's `parseThreadMessagesPageResponse`: unique seqs and a consistent cursor."""
    seqs = [row["seq"] for row in page["data"]]
    assert len(set(seqs)) == len(seqs)
    assert all(s >= 1 for s in seqs)
    if page["has_more"]:
        assert isinstance(page["next_before_seq"], int)
        assert page["next_before_seq"] >= 1
    else:
        assert page["next_before_seq"] is None


class ModelTokens(Shape):
    tokens: StrictInt
    runs: StrictInt


class CallerTokens(Shape):
    lead_agent: StrictInt
    subagent: StrictInt
    middleware: StrictInt


class ContextUsage(Shape):
    token_count: StrictInt
    max_context_tokens: StrictInt | None
    percentage: StrictFloat | StrictInt | None


class ThreadTokenUsage(Shape):
    thread_id: StrictStr
    total_tokens: StrictInt
    total_input_tokens: StrictInt
    total_output_tokens: StrictInt
    total_runs: StrictInt
    by_model: dict[str, ModelTokens]
    by_caller: CallerTokens
    context_usage: ContextUsage | None = None
