"""What DeerFlow's web UI asks before it draws a page, answered with what Antler supports:
`GET /api/features` (its optional features: custom agents on, the others off),
`GET /api/suggestions/config` (follow-up suggestions: off) and
`GET /api/integrations/lark/status` (DeerFlow's lark-cli integration is not part of Antler;
Feishu/Lark is one of Antler's own channels)."""

from __future__ import annotations

from pydantic import BaseModel

from gateway.registry import Call, Registry
from gateway.service import Gateway

TAG = "features"
api = Registry(tag=TAG)
LARK_CHANNEL = "feishu"


class Feature(BaseModel):
    enabled: bool


class FeaturesResponse(BaseModel):
    agents_api: Feature
    browser_control: Feature
    mcp_tasks: Feature


class SuggestionsConfig(BaseModel):
    enabled: bool
    max_suggestions: int


class LarkCli(BaseModel):
    available: bool = False
    path: str | None = None
    version: str | None = None
    error: str | None = None


class LarkAuth(BaseModel):
    status: str = "unavailable"
    message: str | None = None
    user: str | None = None
    verified: bool = False


class LarkStatus(BaseModel):
    installed: bool = False
    version: str = ""
    manifest_version: str | None = None
    latest_available_version: str | None = None
    runtime_version_mismatch: bool = False
    app_configured: bool
    app_id: str | None = None
    app_brand: str | None = None
    skills_expected: int = 0
    skills_installed: int = 0
    installed_skills: list[str] = []
    enabled_skills: list[str] = []
    install_path: str = ""
    cli: LarkCli
    auth: LarkAuth
    sandbox_runtime_mode: str = "none"
    sandbox_runtime_ready: bool = False
    sandbox_runtime_detail: str | None = None


@api.route("GET", "/api/features")
async def features(call: Call) -> FeaturesResponse:
    """DeerFlow's optional features"""
    off = Feature(enabled=False)  # browser control, MCP tasks: DeerFlow's own
    agents = Feature(enabled=True)  # /api/agents over the agent profiles (gateway/api/agents.py)
    return FeaturesResponse(agents_api=agents, browser_control=off, mcp_tasks=off)


@api.route("GET", "/api/suggestions/config")
async def suggestions_config(call: Call) -> SuggestionsConfig:
    """Follow-up suggestions (not offered)"""
    return SuggestionsConfig(enabled=False, max_suggestions=0)


@api.route("GET", "/api/integrations/lark/status")
async def lark_status(call: Call) -> LarkStatus:
    """DeerFlow's lark-cli integration (not part of Antler)"""
    gw: Gateway = call.gw
    channel = LARK_CHANNEL in gw.service.channel_states() and gw.service.channel_enabled(
        LARK_CHANNEL
    )
    note = (
        "Antler answers on Feishu/Lark as its own bot (channels.feishu); "
        "DeerFlow's lark-cli skills are not part of Antler"
    )
    return LarkStatus(
        app_configured=channel,
        app_brand="feishu" if channel else None,
        cli=LarkCli(error="lark-cli is not part of Antler"),
        auth=LarkAuth(message=note),
    )
