"""`GET|PUT|PATCH /api/mcp/config`: the MCP servers in `extensions_config.json` (DeerFlow's
file); PATCH `{server_name, enabled}` switches one server (DeerFlow's toggle).

Reads mask secrets (env and header values become `***`, OAuth secrets null, secret-looking
extra keys `***`). A write validates stdio servers (a bare allow-listed launcher, no eval
flags, no loader env vars), keeps stored secrets where the client sent `***`, keeps the file's
other top-level keys, and replaces the file atomically (temp file, fsync, rename).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.atomic_file import write_atomic as write_text_atomic
from bot.facade import ServiceFacade
from gateway.errors import ApiError
from gateway.registry import Call, Registry
from gateway.service import Gateway

TAG = "mcp"
api = Registry(tag=TAG)
MASK = "***"
FILE_NAME = "extensions_config.json"
STDIO_COMMANDS = {"npx", "uvx"}
ALLOWLIST_ENV = "ANTLER_MCP_STDIO_COMMAND_ALLOWLIST"
BAD_ARGS = {"-c", "--call", "-e", "--eval", "--print", "--shell", "--node-arg", "--node-options"}
BAD_ENV = {
    "LD_PRELOAD",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "NODE_OPTIONS",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "BASH_ENV",
    "ENV",
    "PERL5OPT",
    "RUBYOPT",
}
_SECRETISH = re.compile(r"api[_-]?key|token|secret|password|passwd|credential", re.I)
_BAD_CHARS = re.compile(r"[\s/;|&`$<>]")
config_lock = asyncio.Lock()  # every writer of extensions_config.json holds it


class McpServer(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    enabled: bool = True
    type: Literal["stdio", "sse", "http"] = Field(default="stdio", alias="transport")
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    oauth: dict[str, Any] | None = None
    description: str = ""


class McpConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mcp_servers: dict[str, McpServer] = Field(default_factory=dict)


class McpToggle(BaseModel):
    model_config = ConfigDict(extra="forbid")
    server_name: str = Field(min_length=1)
    enabled: bool


def config_path(gw: Gateway) -> Path:
    """`agent.extensions_config` (the file the agent re-reads when it changes)."""
    return extensions_file(gw.service)


def extensions_file(service: ServiceFacade) -> Path:
    """The current `agent.extensions_config` (it changes live), else the data dir's file."""
    configured = getattr(service.agent_config(), "extensions_config", None)
    return Path(configured) if configured else service.data_dir / FILE_NAME


def read_raw(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise ApiError(500, f"{path.name} is not valid JSON: {exc}") from None
    return data if isinstance(data, dict) else {}


def mask(server: dict[str, Any]) -> dict[str, Any]:
    out = dict(server)
    for key in ("env", "headers"):
        if isinstance(out.get(key), dict):
            out[key] = dict.fromkeys(out[key], MASK)
    if isinstance(out.get("oauth"), dict):
        out["oauth"] = {**out["oauth"], "client_secret": None, "refresh_token": None}
    for key, value in out.items():
        if key not in ("env", "headers", "oauth") and _SECRETISH.search(key) and value:
            out[key] = MASK
    return out


def validate_stdio(name: str, server: McpServer) -> None:
    problems = stdio_problems(server)
    if problems:
        raise ApiError(400, f"{name}: {next(iter(problems.values()))}")


def stdio_problems(server: McpServer) -> dict[str, str]:
    """What is wrong with an enabled stdio server, by field (`command`, `args`, `env`)."""
    if server.type != "stdio" or not server.enabled:
        return {}
    allowed = STDIO_COMMANDS | {
        c.strip() for c in os.environ.get(ALLOWLIST_ENV, "").split(",") if c.strip()
    }
    command = server.command or ""
    problems: dict[str, str] = {}
    if not command or _BAD_CHARS.search(command):
        problems["command"] = "command must be one bare executable name"
    elif command not in allowed:
        problems["command"] = (
            f"command {command!r} is not allowed (allowed: "
            f"{', '.join(sorted(allowed))}; extend with {ALLOWLIST_ENV})"
        )
    bad = [a for a in server.args if a.split("=", 1)[0] in BAD_ARGS]
    if bad:
        problems["args"] = f"arguments not allowed: {', '.join(bad)}"
    bad_env = sorted(set(server.env) & BAD_ENV)
    if bad_env:
        problems["env"] = f"environment variables not allowed: {', '.join(bad_env)}"
    return problems


def merge_secrets(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """Keep the stored value wherever the client sent back the mask."""
    out = dict(new)
    for key in ("env", "headers"):
        if isinstance(out.get(key), dict):
            kept = old.get(key)
            stored = kept if isinstance(kept, dict) else {}
            out[key] = {k: stored.get(k, "") if v == MASK else v for k, v in out[key].items()}
    for key, value in list(out.items()):
        if value == MASK:
            out[key] = old.get(key)
    if isinstance(out.get("oauth"), dict) and isinstance(old.get("oauth"), dict):
        for key in ("client_secret", "refresh_token"):
            if out["oauth"].get(key) is None:
                out["oauth"][key] = old["oauth"].get(key)
    return out


def write_atomic(path: Path, data: dict[str, Any]) -> None:
    """The MCP/skills config as JSON, owner-readable only (it may hold servers' secrets)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False), mode=0o600)


def _masked(raw: dict[str, Any]) -> dict[str, Any]:
    servers = raw.get("mcpServers") or {}
    return {"mcp_servers": {n: mask(s) for n, s in servers.items() if isinstance(s, dict)}}


@api.route("GET", "/api/mcp/config", response=McpConfig)
async def get_mcp_config(call: Call) -> dict[str, Any]:
    """The MCP servers (secrets masked)"""
    return _masked(read_raw(config_path(call.gw)))


@api.route("PUT", "/api/mcp/config", body=McpConfig, response=McpConfig, errors=(400, 422, 500))
async def put_mcp_config(call: Call) -> dict[str, Any]:
    """Replace the MCP servers (validated, atomic)"""
    body: McpConfig = call.body
    for name, server in body.mcp_servers.items():
        validate_stdio(name, server)
    raw = await replace_servers(config_path(call.gw), body.mcp_servers)
    reload = call.gw.service.reload_mcp
    if reload is not None:
        await reload()
    return _masked(raw)


@api.route(
    "PATCH", "/api/mcp/config", body=McpToggle, response=McpConfig, errors=(400, 404, 422, 500)
)
async def toggle_mcp_server(call: Call) -> dict[str, Any]:
    """Enable or disable one MCP server"""
    body: McpToggle = call.body
    raw = await set_enabled(config_path(call.gw), body.server_name, body.enabled)
    reload = call.gw.service.reload_mcp
    if reload is not None:
        await reload()
    return _masked(raw)


async def set_enabled(path: Path, name: str, enabled: bool) -> dict[str, Any]:
    """Switch one stored server (validated when it is switched on); the whole file after."""
    async with config_lock:
        raw = read_raw(path)
        servers = raw.get("mcpServers")
        stored = servers.get(name) if isinstance(servers, dict) else None
        if not isinstance(stored, dict):
            raise ApiError(404, f"MCP server {name!r} not found")
        if enabled:
            try:
                validate_stdio(name, McpServer.model_validate({**stored, "enabled": True}))
            except ValidationError as exc:
                raise ApiError(400, f"{name}: {exc.errors()[0]['msg']}") from None
        stored["enabled"] = enabled
        try:
            await asyncio.to_thread(write_atomic, path, raw)
        except OSError as exc:
            raise ApiError(500, f"could not write {path.name}: {exc}") from None
    return raw


async def replace_servers(path: Path, servers: dict[str, McpServer]) -> dict[str, Any]:
    """Write the servers (stored secrets kept where `***` came back); the whole file after."""
    async with config_lock:
        raw = read_raw(path)
        old = raw.get("mcpServers") or {}
        raw["mcpServers"] = {
            name: merge_secrets(server.model_dump(exclude_none=True), old.get(name) or {})
            for name, server in servers.items()
        }
        try:
            await asyncio.to_thread(write_atomic, path, raw)
        except OSError as exc:
            raise ApiError(500, f"could not write {path.name}: {exc}") from None
    return raw


def masked_servers(path: Path) -> dict[str, dict[str, Any]]:
    """The servers as a client may see them (secrets masked)."""
    servers: dict[str, dict[str, Any]] = _masked(read_raw(path))["mcp_servers"]
    return servers
