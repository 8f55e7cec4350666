"""Request and response models of the admin API (DeerFlow Gateway / LangGraph shapes).

Request models forbid unknown keys (a typo is a 422, not silently ignored); responses allow
what LangGraph clients expect. Runs live in run_schemas.py.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gateway.registry import THREAD_ID

ThreadStatus = Literal["idle", "busy", "interrupted", "error"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------- generic


class Health(BaseModel):
    status: str
    uptime_seconds: float = 0.0
    queue_depth: int = 0
    active_runs: int = 0
    channels: dict[str, dict[str, Any]] = Field(default_factory=dict)


class SuccessResponse(BaseModel):
    success: bool
    message: str = ""


class ErrorResponse(BaseModel):
    detail: Any


# ---------------------------------------------------------------------------- models


class ModelResponse(BaseModel):
    name: str
    model: str
    display_name: str | None = None
    description: str | None = None
    supports_thinking: bool = False
    supports_reasoning_effort: bool = False
    supports_vision: bool = False
    is_default: bool = False


class TokenUsage(BaseModel):
    enabled: bool = False


class ModelsResponse(BaseModel):
    models: list[ModelResponse]
    token_usage: TokenUsage = Field(default_factory=TokenUsage)


# ---------------------------------------------------------------------------- threads


class ThreadCreate(Strict):
    thread_id: str | None = Field(default=None, pattern=THREAD_ID)
    assistant_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    if_exists: Literal["raise", "do_nothing"] = "do_nothing"
    graph_id: str | None = None
    ttl: Any = None
    supersteps: None = None


class ThreadPatch(Strict):
    metadata: dict[str, Any] = Field(default_factory=dict)


class ThreadSearch(Strict):
    metadata: dict[str, Any] = Field(default_factory=dict)
    ids: list[str] | None = None
    status: ThreadStatus | None = None
    limit: int = Field(default=100, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)
    values: dict[str, Any] | None = None
    sort_by: Literal["thread_id", "status", "created_at", "updated_at"] | None = None
    sort_order: Literal["asc", "desc"] | None = None
    select: list[str] | None = None
    extract: dict[str, str] | None = None


class ThreadResponse(BaseModel):
    thread_id: str
    status: ThreadStatus = "idle"
    created_at: str
    updated_at: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    values: dict[str, Any] = Field(default_factory=dict)
    interrupts: dict[str, Any] = Field(default_factory=dict)


class CheckpointRef(BaseModel):
    thread_id: str
    checkpoint_ns: str = ""
    checkpoint_id: str | None = None


class ThreadState(BaseModel):
    values: dict[str, Any]
    next: list[str] = Field(default_factory=list)
    tasks: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None
    checkpoint: CheckpointRef
    parent_checkpoint: CheckpointRef | None = None
    checkpoint_id: str | None = None
    parent_checkpoint_id: str | None = None
    interrupts: list[Any] = Field(default_factory=list)


class StateUpdate(Strict):
    """LangGraph's `threads.update_state` body (DeerFlow's UI renames with `{values: {title}}`)."""

    values: dict[str, Any] | None = None
    as_node: str | None = Field(default=None, min_length=1, max_length=128)
    checkpoint: dict[str, Any] | None = None
    checkpoint_id: str | None = None
    task_id: None = None


class StateUpdateResponse(BaseModel):
    checkpoint: CheckpointRef


class HistoryRequest(Strict):
    limit: int = Field(default=10, ge=1, le=100)
    before: str | dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    select: list[str] | None = None


# ---------------------------------------------------------------------------- uploads


class UploadedFile(BaseModel):
    filename: str
    size: int
    extension: str | None = None
    modified: float | None = None
    original_filename: str | None = None
    path: str  # DeerFlow sends the host path here; Antler the agent's path (no host layout)
    virtual_path: str
    artifact_url: str
    markdown_file: str | None = None  # a converted document's markdown (`report.pdf.md`)
    markdown_path: str | None = None
    markdown_virtual_path: str | None = None
    markdown_artifact_url: str | None = None


class UploadResponse(BaseModel):
    success: bool
    files: list[UploadedFile]
    message: str
    skipped_files: list[str] = Field(default_factory=list)


class UploadList(BaseModel):
    files: list[UploadedFile]
    count: int


class UploadLimits(BaseModel):
    max_files: int
    max_file_size: int
    max_total_size: int


class ArtifactQuery(Strict):
    download: bool = False


# ---------------------------------------------------------------------------- channels


class ChannelInfo(BaseModel):
    name: str
    enabled: bool
    running: bool
    connected: bool
    status: Literal["stopped", "connecting", "connected", "retrying"] = "stopped"
    attempts: int = Field(0, description="failed attempts in the current outage")
    next_retry_at: float | None = Field(None, description="unix time of the next attempt")
    connected_since: float | None = None
    last_event_at: float | None = None
    last_error: str | None = None
    counters: dict[str, int] = Field(default_factory=dict)


class ChannelsResponse(BaseModel):
    service_running: bool
    channels: dict[str, ChannelInfo]


class ChannelRestart(BaseModel):
    success: bool
    message: str
    channel: ChannelInfo
