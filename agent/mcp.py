"""MCP servers from extensions_config.json, through langchain-mcp-adapters' MultiServerMCPClient.

Loaded lazily (on the first model call), cached, and reloaded when the file's signature
(mtime, size, sha256) changes. Each server is loaded on its own: one that fails is reported
(`problems`, logged and shown in /status) and the agent runs with the others. Tool names are
`<server>_<tool>`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from agent.extensions import ExtensionsError, expand_vars, load_extensions, signature

log = logging.getLogger(__name__)

TRANSPORTS = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "streamable_http",
    "streamable_http": "streamable_http",
    "streamable-http": "streamable_http",
}


def connection(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """One server's `mcpServers` entry → a MultiServerMCPClient connection."""
    spec = expand_vars(spec)
    kind = str(
        spec.get("type")
        or spec.get("transport")
        or ("stdio" if spec.get("command") else "streamable_http")
    )
    transport = TRANSPORTS.get(kind)
    if transport is None:
        raise ValueError(f"unknown type {kind!r} (stdio, sse or http)")
    if transport == "stdio":
        if not spec.get("command"):
            raise ValueError("stdio needs a command")
        conn: dict[str, Any] = {
            "transport": "stdio",
            "command": spec["command"],
            "args": [str(a) for a in spec.get("args") or []],
        }
        if spec.get("env"):
            conn["env"] = {str(k): str(v) for k, v in spec["env"].items()}
        if spec.get("cwd"):
            conn["cwd"] = spec["cwd"]
        return conn
    if not spec.get("url"):
        raise ValueError(f"{kind} needs a url")
    conn = {"transport": transport, "url": spec["url"]}
    if spec.get("headers"):
        conn["headers"] = {str(k): str(v) for k, v in spec["headers"].items()}
    return conn


class McpTools:
    def __init__(self, path: Path, init_timeout: float = 30.0) -> None:
        self.path = path
        self.init_timeout = init_timeout
        self.problems: list[str] = []
        self.servers: list[str] = []
        self._tools: list[Any] = []
        self.origin: dict[str, tuple[str, str]] = {}  # tool name → (server, its own name)
        self.loaded = False
        self._sig: object = ()
        self._lock = asyncio.Lock()

    async def tools(self) -> list[Any]:
        """The current tools; (re)loads when the file changed since the last load."""
        sig = await asyncio.to_thread(signature, self.path)
        if sig == self._sig:
            return self._tools
        async with self._lock:
            if sig != self._sig:
                await self._reload()
                self._sig = sig
                self.loaded = True
        return self._tools

    def by_name(self, name: str) -> Any | None:
        return next((t for t in self._tools if t.name == name), None)

    def qualify(self, name: str) -> tuple[str, str | None]:
        """A tool's name and MCP server as grants see them: `("get_issue", "github")` for the
        MCP tool `github_get_issue`, `(name, None)` for any other tool."""
        server_tool = self.origin.get(name)
        return (server_tool[1], server_tool[0]) if server_tool else (name, None)

    async def _reload(self) -> None:
        self.problems, self.servers, tools = [], [], []
        origin: dict[str, tuple[str, str]] = {}
        try:
            specs = load_extensions(self.path).mcp_servers
        except ExtensionsError as exc:
            self._fail(str(exc))
            specs = {}
        for name, spec in specs.items():
            if spec.get("enabled", True) is False:
                continue
            loaded = await self._load_server(name, spec)
            if loaded is not None:
                tools.extend(loaded)
                origin.update({t.name: (name, t.name.removeprefix(f"{name}_")) for t in loaded})
                self.servers.append(f"{name} ({len(loaded)} tools)")
        self._tools, self.origin = tools, origin
        if specs:
            log.info("MCP: %d tools from %s", len(tools), ", ".join(self.servers) or "no server")

    async def _load_server(self, name: str, spec: dict[str, Any]) -> list[Any] | None:
        from langchain_mcp_adapters.client import MultiServerMCPClient

        try:
            servers: dict[str, Any] = {name: connection(name, spec)}  # the library's TypedDicts
            client = MultiServerMCPClient(servers, tool_name_prefix=True)
            return await asyncio.wait_for(client.get_tools(server_name=name), self.init_timeout)
        except Exception as exc:  # any transport/startup failure: report, run without it
            self._fail(f"MCP server {name!r} unavailable: {_reason(exc)}")
            return None

    def _fail(self, problem: str) -> None:
        log.warning("%s", problem)
        self.problems.append(problem)


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)
    if inner:
        return _reason(inner[0])
    return f"{type(exc).__name__}: {exc}"[:300] if str(exc) else type(exc).__name__
