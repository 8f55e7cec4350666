"""MCP servers: list them (secrets masked), add, edit or delete one; a refused value is shown
next to its field. Writes go through the API's own validation and atomic write
(gateway/api/mcp.py), so a `***` left in place keeps the stored secret."""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from bot.i18n import text as _
from gateway.api.mcp import MASK, McpServer, masked_servers, replace_servers, stdio_problems
from gateway.console.web import Ctx, Pages, not_found
from gateway.errors import ApiError
from gateway.registry import NAME

pages = Pages()
HERE = "/console/mcp"
TYPES = ("stdio", "sse", "http")


def form_values(server: dict[str, Any]) -> dict[str, str]:
    """A stored (masked) server as the form's text fields."""
    return {
        "type": str(server.get("type") or server.get("transport") or "stdio"),
        "enabled": "true" if server.get("enabled", True) else "",
        "command": str(server.get("command") or ""),
        "args": "\n".join(str(a) for a in server.get("args") or []),
        "env": "\n".join(f"{k}={v}" for k, v in (server.get("env") or {}).items()),
        "url": str(server.get("url") or ""),
        "headers": "\n".join(f"{k}: {v}" for k, v in (server.get("headers") or {}).items()),
        "description": str(server.get("description") or ""),
    }


def pairs(text: str, sep: str, field: str, errors: dict[str, str]) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, found, value = line.partition(sep)
        if not found or not key.strip():
            errors[field] = _(
                "each line must be NAME{sep}VALUE (line: {line})",
                sep=sep,
                line=repr(line.strip()[:40]),
            )
            continue
        out[key.strip()] = value.strip()
    return out


def parse(values: dict[str, str], base: dict[str, Any]) -> tuple[McpServer | None, dict[str, str]]:
    """The server the form describes (unknown stored keys kept from `base`), or the errors."""
    errors: dict[str, str] = {}
    data = {k: v for k, v in base.items() if k not in ("transport",)}
    data.update(
        type=values["type"],
        enabled=values["enabled"] == "true",
        command=values["command"] or None,
        args=[a.strip() for a in values["args"].splitlines() if a.strip()],
        env=pairs(values["env"], "=", "env", errors),
        url=values["url"] or None,
        headers=pairs(values["headers"], ":", "headers", errors),
        description=values["description"],
    )
    if values["type"] not in TYPES:
        errors["type"] = _("type must be one of {types}", types=", ".join(TYPES))
    if values["type"] in ("sse", "http") and not re.match(r"^https?://\S+$", values["url"]):
        errors["url"] = _("an sse or http server needs an http:// or https:// URL")
    if errors:
        return None, errors
    try:
        server = McpServer.model_validate(data)
    except ValidationError as exc:
        return None, {str(e["loc"][0]) if e["loc"] else "type": e["msg"] for e in exc.errors()}
    problems = stdio_problems(server)
    return (None, problems) if problems else (server, {})


def render(
    ctx: Ctx,
    *,
    editing: str = "",
    values: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    status: int = 200,
) -> web.Response:
    servers = masked_servers(ctx.services.extensions.config_path())
    forms = {name: form_values(s) for name, s in servers.items()}
    new = form_values({})
    if values is not None:
        if editing:
            forms[editing] = values
        else:
            new = values
    return ctx.render(
        "mcp.html",
        page="mcp",
        title=_("MCP servers"),
        servers=servers,
        forms=forms,
        new=new,
        editing=editing,
        errors=errors or {},
        types=TYPES,
        mask=MASK,
        status=status,
    )


@pages.get(HERE)
async def mcp(ctx: Ctx) -> web.StreamResponse:
    return render(ctx)


@pages.post(HERE + "/save")
async def save(ctx: Ctx) -> web.StreamResponse:
    path = ctx.services.extensions.config_path()
    servers = masked_servers(path)
    original = await ctx.field("original")
    name = original or await ctx.field("name")
    form = await ctx.form()
    values = {key: str(form.get(key, "")) for key in form_values({})}
    values["new_name"] = "" if original else name
    if original and original not in servers:
        return not_found(ctx, _("MCP server {name}", name=original))
    errors: dict[str, str] = {}
    if not original and not re.fullmatch(NAME, name):
        errors["name"] = _("a name of letters, digits and . _ : - (at most 128)")
    elif not original and name in servers:
        errors["name"] = _("a server named {name} exists already", name=name)
    server, problems = parse(values, servers.get(original, {}))
    errors.update(problems)
    if server is None or errors:
        return render(ctx, editing=original, values=values, errors=errors, status=400)
    updated = {n: McpServer.model_validate(s) for n, s in servers.items()}
    updated[name] = server
    try:
        await replace_servers(path, updated)
    except ApiError as exc:
        return ctx.back(HERE, str(exc.detail), "error")
    return ctx.back(HERE, _("MCP server {name} saved.", name=name))


@pages.post(HERE + "/{name}/delete")
async def delete(ctx: Ctx) -> web.StreamResponse:
    path = ctx.services.extensions.config_path()
    servers = masked_servers(path)
    name = ctx.request.match_info["name"]
    if name not in servers:
        return not_found(ctx, _("MCP server {name}", name=name))
    del servers[name]
    await replace_servers(path, {n: McpServer.model_validate(s) for n, s in servers.items()})
    return ctx.back(HERE, _("MCP server {name} deleted.", name=name))
