"""Conversations: every chat (title, agent, model, last activity, running/queued), a transcript from
the thread's checkpoint, stop a running reply, switch the model (and the agent:
gateway/console/agents_page.py)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from agent.graph_api import STOPPED
from agent.paths import THREAD_ID_PATTERN
from bot.i18n import text as _
from bot.stores.conversations import Conversation
from gateway.console.agent_grant import allowed_agents
from gateway.console.services import Conversations
from gateway.console.web import ConsoleHandler, Ctx, Pages, not_found, when
from gateway.langgraph.serialize import state_values

pages = Pages()
SHOWN = 100
TRIM = 80  # the characters of the last message the list shows
ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}


@dataclass(frozen=True)
class Row:
    conv: Conversation
    model: str
    agent: str  # the agent profile's label (the profile its next run uses)
    last_activity: str
    running: bool
    queued: int
    last: Line | None = None  # the thread's last message, its text trimmed to one short line

    @property
    def last_text(self) -> str:
        return trim(self.last.text) if self.last else ""


@dataclass(frozen=True)
class Line:
    role: str
    text: str
    stopped: bool = False  # an answer cut short by a stop: what the user was shown


async def row(service: Conversations, conv: Conversation) -> Row:
    tup = await service.checkpoint(conv.thread_id)
    ts = tup.checkpoint.get("ts", "") if tup is not None else ""
    return Row(
        conv,
        service.resolve_model(conv.model).label,
        service.agent_of(conv).label,
        _short_ts(ts),
        service.is_running(conv.key),
        service.queued(conv.key),
        last_line(tup),
    )


def last_line(tup: Any) -> Line | None:
    """The thread's last message shown in a transcript (only the newest few are converted)."""
    messages = tup.checkpoint.get("channel_values", {}).get("messages", []) if tup else []
    lines = transcript(state_values({"messages": list(messages[-3:])}))
    return lines[-1] if lines else None


def values_of(tup: Any) -> dict[str, Any]:
    """A checkpoint tuple's state values (messages as dicts); {} when none."""
    return state_values(tup.checkpoint.get("channel_values", {})) if tup is not None else {}


def trim(text: str, limit: int = TRIM) -> str:
    """One line of at most `limit` characters (an ellipsis where it was cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _short_ts(ts: str) -> str:
    """A checkpoint's ISO time as the page's language writes a time (web.when)."""
    try:
        moment = dt.datetime.fromisoformat(ts)
    except ValueError:
        return ts[:19].replace("T", " ") + " UTC" if ts else "—"
    return when((moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).timestamp())


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return ""


def transcript(values: dict[str, Any]) -> list[Line]:
    lines = []
    for message in values.get("messages", []):
        if not isinstance(message, dict):
            continue
        role = ROLES.get(str(message.get("type")), str(message.get("type")))
        text = text_of(message.get("content"))
        calls = [c.get("name", "") for c in message.get("tool_calls") or []]
        if calls:
            text = (text + "\n" if text else "") + _("→ tools: {names}", names=", ".join(calls))
        if role == "tool":
            text = f"{message.get('name', 'tool')}: {text[:500]}"
        stopped = bool((message.get("response_metadata") or {}).get(STOPPED))
        if text or stopped:
            lines.append(Line(role, text, stopped))
    return lines


@pages.get("/console/conversations")
async def conversations(ctx: Ctx) -> web.StreamResponse:
    service = ctx.services.conversations
    channel = ctx.request.query.get("channel", "")
    convs = [c for c in await service.store.all(limit=1000) if not channel or c.channel == channel]
    rows = [await row(service, c) for c in convs[:SHOWN]]
    channels = sorted({r.conv.channel for r in rows} | ({channel} if channel else set()))
    return ctx.render(
        "conversations.html",
        page="conversations",
        title=_("Conversations"),
        rows=rows,
        channel=channel,
        channels=channels,
        more=len(convs) > SHOWN,
    )


async def find(ctx: Ctx) -> Conversation | None:
    thread_id = ctx.request.match_info["thread_id"]
    if not re.fullmatch(THREAD_ID_PATTERN, thread_id):
        return None
    return await ctx.services.conversations.by_thread(thread_id)


def of_conversation(
    page: Callable[[Ctx, Conversation], Awaitable[web.StreamResponse]],
) -> ConsoleHandler:
    """A page of the conversation its `{thread_id}` names; a 404 page when there is none."""

    async def handler(ctx: Ctx) -> web.StreamResponse:
        conv = await find(ctx)
        if conv is None:
            return not_found(ctx, _("that conversation"))
        return await page(ctx, conv)

    return handler


@pages.get("/console/conversations/{thread_id}")
@of_conversation
async def conversation(ctx: Ctx, conv: Conversation) -> web.StreamResponse:
    service = ctx.services.conversations
    tup = await service.checkpoint(conv.thread_id)
    values = values_of(tup)
    return ctx.render(
        "conversation.html",
        page="conversations",
        title=conv.title or conv.key,
        row=await row(service, conv),
        lines=transcript(values),
        models=service.models(),
        current=service.resolve_model(conv.model).name,
        agents=await allowed_agents(ctx, conv),
        current_agent=service.agent_of(conv).name,
    )


@pages.post("/console/conversations/{thread_id}/stop")
@of_conversation
async def stop(ctx: Ctx, conv: Conversation) -> web.StreamResponse:
    here = f"/console/conversations/{conv.thread_id}"
    if await ctx.services.conversations.stop(conv.key):
        return ctx.back(here, _("The running reply was stopped."))
    return ctx.back(here, _("Nothing was running."), "error")


@pages.post("/console/conversations/{thread_id}/model")
@of_conversation
async def switch_model(ctx: Ctx, conv: Conversation) -> web.StreamResponse:
    here = f"/console/conversations/{conv.thread_id}"
    name = await ctx.field("model")
    try:
        await ctx.services.conversations.set_model(conv.key, name)
    except ValueError as exc:
        return ctx.back(here, str(exc), "error")
    return ctx.back(
        here, _("Model switched to {name}; it applies from the next message.", name=name)
    )
