"""LangGraph-compatible run routes: create, stream (SSE), wait, list, get, cancel, join.

A run's input is `{"messages": [...]}` as LangGraph clients send it; the assistant is
`lead_agent`. One active run per thread: `multitask_strategy` `reject` answers 409,
`interrupt` stops the active run first. A chat's thread is refused while the chat replies.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from aiohttp import web

from agent.approval import ApprovalPolicy
from agent.events import RunSettings
from bot.agent_editor import DEERFLOW_NAME
from gateway.errors import ApiError
from gateway.langgraph.run_input import convert, fork_point, with_files
from gateway.langgraph.run_manager import RunRefused, RunRequest
from gateway.langgraph.run_record import RunRecord
from gateway.langgraph.run_schemas import (
    ASSISTANT_ID,
    CancelQuery,
    JoinStreamQuery,
    RunCreate,
    RunListQuery,
    RunResponse,
    WaitResult,
)
from gateway.langgraph.sse import run_location, stream_run
from gateway.registry import THREAD_ID, Call, Registry
from gateway.service import Gateway

TAG = "runs"
api = Registry(tag=TAG)
RUNS = "/api/threads/{thread_id}/runs"
RUN = RUNS + "/{run_id}"
SSE = "text/event-stream"


# ---------------------------------------------------------------- creating runs


async def _start(call: Call, thread_id: str | None = None) -> RunRecord:
    gw: Gateway = call.gw
    body: RunCreate = call.body
    thread_id = thread_id or _thread_of(body)
    if await gw.threads.get(thread_id) is None:
        if body.if_not_exists != "create" and "thread_id" in call.path:
            raise ApiError(404, f"thread {thread_id} not found")
        await gw.threads.create(thread_id, {})
    request = await _request(gw, thread_id, body)
    messages = await with_files(gw, thread_id, request.messages, request.settings)
    fork = await fork_point(gw, thread_id, body)
    try:
        return await gw.runs.start(replace(request, messages=messages, checkpoint_id=fork))
    except RunRefused as exc:
        raise ApiError(exc.status, exc.detail) from None


def _thread_of(body: RunCreate) -> str:
    configurable = body.config.configurable if body.config else {}
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        return str(uuid.uuid4())
    if not isinstance(thread_id, str) or not re.fullmatch(THREAD_ID, thread_id):
        raise ApiError(422, f"config.configurable.thread_id must match {THREAD_ID}")
    return thread_id


async def _request(gw: Gateway, thread_id: str, body: RunCreate) -> RunRequest:
    if body.assistant_id not in gw.service.runner.agent_names():
        raise ApiError(
            404,
            f"assistant {body.assistant_id!r} not found; POST /api/assistants/search lists them",
        )
    resume = _resume(body.command)
    if body.input is None and resume is None:
        raise ApiError(
            422,
            [
                {
                    "loc": ["body", "input"],
                    "type": "missing",
                    "msg": 'input {"messages": [...]} is required',
                }
            ],
        )
    if body.interrupt_before or body.interrupt_after:
        raise ApiError(501, "interrupt_before/after are not supported")
    if body.multitask_strategy == "rollback":
        raise ApiError(501, "multitask_strategy 'rollback' is not implemented; use 'interrupt'")
    return RunRequest(
        thread_id=thread_id,
        assistant_id=body.assistant_id,
        messages=convert(body.input.messages) if body.input is not None else [],
        resume=resume,
        approvals=_approvals(gw),
        settings=await _settings(gw, thread_id, body),
        modes=body.modes(),
        metadata=body.metadata,
        kwargs={
            "input": body.input.model_dump() if body.input is not None else None,
            "command": body.command,
            "stream_mode": body.modes(),
            "config": body.config.model_dump() if body.config else {},
        },
        multitask_strategy=body.multitask_strategy,
        on_disconnect=body.on_disconnect,
    )


def _resume(command: dict[str, Any] | None) -> Any:
    """`command: {"resume": DECISION}` (a LangGraph `Command`): the decision for the thread's
    pending approval (`approve`, `deny`, or `{"decision": ..., "by": ...}`)."""
    if command is None:
        return None
    other = sorted(set(command) - {"resume"})
    if other:
        raise ApiError(501, f"command {', '.join(other)} is not supported; use resume")
    if command.get("resume") is None:
        raise ApiError(422, "command.resume is required (a decision: approve or deny)")
    return command["resume"]


def _approvals(gw: Gateway) -> ApprovalPolicy | None:
    people = gw.service.people
    return people.api_approvals() if people is not None else None


async def _settings(gw: Gateway, thread_id: str, body: RunCreate) -> RunSettings:
    ctx = body.context
    configurable = body.config.configurable if body.config else {}
    model = (ctx.model_name or ctx.model) if ctx else None
    model = model or configurable.get("model_name") or configurable.get("model")
    conv = await gw.service.conversations.by_thread(thread_id)
    if model is not None and model not in gw.service.runner.model_names():
        raise ApiError(400, f"model {model!r} is not configured; see GET /api/models")
    thinking = ctx.thinking_enabled if ctx and ctx.thinking_enabled is not None else None
    plan = ctx.is_plan_mode if ctx and ctx.is_plan_mode is not None else None
    bootstrap = _bootstrap(body)
    return RunSettings(
        agent=None if bootstrap else _agent(gw, body, conv.agent if conv else None),
        model=model or (conv.model if conv else None),
        thinking=thinking if thinking is not None else bool(conv and conv.thinking),
        plan_mode=plan if plan is not None else bool(conv and conv.plan_mode),
        bootstrap=bootstrap,
    )


def _bootstrap(body: RunCreate) -> str | None:
    """DeerFlow's agent creation (`is_bootstrap` with the new agent's `agent_name`, in the
    context or configurable): the agent it sets up, in lower case; None for other runs."""
    configurable = body.config.configurable if body.config else {}
    ctx = body.context
    if not ((ctx and ctx.is_bootstrap) or configurable.get("is_bootstrap") is True):
        return None
    name = (ctx.agent_name if ctx else None) or configurable.get("agent_name")
    if not isinstance(name, str) or not DEERFLOW_NAME.fullmatch(name):
        raise ApiError(422, "is_bootstrap needs context.agent_name, the new agent's name "
                       "(letters, digits and hyphens)")  # fmt: skip
    return name.lower()


def _agent(gw: Gateway, body: RunCreate, chosen: str | None) -> str | None:
    """The run's agent profile: DeerFlow's `agent_name` (context or configurable), else a
    custom `assistant_id`, else the conversation's; 400 for an unknown name."""
    configurable = body.config.configurable if body.config else {}
    named = (body.context.agent_name if body.context else None) or configurable.get("agent_name")
    if named is not None:
        match = [n for n in gw.service.runner.agent_names() if n.lower() == str(named).lower()]
        if not match:
            raise ApiError(400, f"agent {named!r} is not configured; see GET /api/agents")
        return match[0]
    return body.assistant_id if body.assistant_id != ASSISTANT_ID else chosen


def _on_disconnect(gw: Gateway, rec: RunRecord) -> Any:
    return (lambda: gw.runs.cancel(rec)) if rec.on_disconnect == "cancel" else None


@api.route("POST", RUNS, body=RunCreate, response=RunResponse, errors=(400, 404, 409, 422, 501))
async def create_run(call: Call) -> web.Response:
    """Start a run in the background"""
    rec = await _start(call, call.path["thread_id"])
    return web.json_response(
        RunResponse(**rec.as_dict()).model_dump(mode="json"),
        headers={"Content-Location": run_location(rec)},
    )


def _on_a_thread_and_stateless(
    suffix: str,
    summaries: tuple[str, str],
    names: tuple[str, str],
    start: Callable[[Call, str | None], Awaitable[web.StreamResponse]],
    **options: Any,
) -> None:
    """One way to start a run, served twice: on a thread (`RUNS + suffix`, `names[0]`) and
    stateless (`/api/runs + suffix`, `names[1]`, a thread of its own)."""

    async def on_thread(call: Call) -> web.StreamResponse:
        return await start(call, call.path["thread_id"])

    async def stateless(call: Call) -> web.StreamResponse:
        return await start(call, None)

    on_thread.__name__, stateless.__name__ = names  # the operationIds
    api.route(
        "POST",
        RUNS + suffix,
        summaries[0],
        body=RunCreate,
        errors=(400, 404, 409, 422, 501),
        **options,
    )(on_thread)
    api.route(
        "POST",
        "/api/runs" + suffix,
        summaries[1],
        body=RunCreate,
        errors=(400, 409, 422, 501),
        **options,
    )(stateless)


async def _stream_new(call: Call, thread_id: str | None) -> web.StreamResponse:
    gw: Gateway = call.gw
    rec = await _start(call, thread_id)
    queue = rec.subscribe(after=0)
    return await stream_run(
        call.request,
        rec,
        queue,
        heartbeat=gw.runs.heartbeat_seconds,
        on_disconnect=_on_disconnect(gw, rec),
    )


_on_a_thread_and_stateless(
    "/stream",
    ("Start a run and stream its events (SSE)", "Stateless run, streamed (SSE)"),
    ("stream_new_run", "stream_stateless_run"),
    _stream_new,
    produces=SSE,
)


async def _wait_new(call: Call, thread_id: str | None) -> web.Response:
    rec = await _start(call, thread_id)
    await rec.done.wait()
    return web.json_response(_final(rec), headers={"Content-Location": run_location(rec)})


_on_a_thread_and_stateless(
    "/wait",
    ("Start a run and wait for its final values", "Stateless run; wait for its final values"),
    ("wait_run", "wait_stateless_run"),
    _wait_new,
    response=WaitResult,
)


def _final(rec: RunRecord) -> dict[str, Any]:
    if rec.error is not None:
        return {"__error__": {"error": rec.error["name"], "message": rec.error["message"]}}
    return rec.final_values


# ---------------------------------------------------------------- existing runs


async def _run(call: Call) -> RunRecord:
    gw: Gateway = call.gw
    await gw.thread(call.path["thread_id"])
    rec = await gw.runs.get(call.path["thread_id"], call.path["run_id"])
    if rec is None:
        raise ApiError(404, f"run {call.path['run_id']} not found")
    return rec


@api.route("GET", RUNS, query=RunListQuery, response=list[RunResponse], errors=(404, 422))
async def list_runs(call: Call) -> list[dict[str, Any]]:
    """List the thread's runs, newest first"""
    gw: Gateway = call.gw
    await gw.thread(call.path["thread_id"])
    q: RunListQuery = call.query
    runs = [r for r in await gw.runs.list(call.path["thread_id"]) if q.status in (None, r.status)]
    return [
        RunResponse(**r.as_dict()).model_dump(mode="json")
        for r in runs[q.offset : q.offset + q.limit]
    ]


@api.route("GET", RUN, errors=(404, 422))
async def get_run(call: Call) -> RunResponse:
    """Get a run"""
    return RunResponse(**(await _run(call)).as_dict())


@api.route("POST", RUN + "/cancel", query=CancelQuery, errors=(404, 409, 422, 501))
async def cancel_run(call: Call) -> web.Response:
    """Cancel a run (202; 204 with wait=true)"""
    gw: Gateway = call.gw
    rec = await _run(call)
    q: CancelQuery = call.query
    if q.action == "rollback":
        raise ApiError(501, "action 'rollback' is not implemented; use 'interrupt'")
    if not await gw.runs.cancel_anywhere(rec):  # DeerFlow's UI recognises exactly this text
        raise ApiError(409, f"Run {rec.run_id} is not cancellable (status: {rec.status})")
    if q.wait:
        await asyncio.wait_for(rec.done.wait(), 30)
        return web.Response(status=204)
    return web.json_response({"run_id": rec.run_id, "status": "cancelling"}, status=202)


@api.route("GET", RUN + "/join", response=WaitResult, errors=(404, 422))
async def join_run(call: Call) -> dict[str, Any]:
    """Wait for a run and return its final values (JSON)"""
    rec = await _run(call)
    await rec.done.wait()
    return _final(rec)


@api.route("GET", RUN + "/stream", query=JoinStreamQuery, produces=SSE, errors=(404, 422))
async def join_stream(call: Call) -> web.StreamResponse:
    """Join a run's event stream (SSE)"""
    return await _join(call, cancel_first=False)


@api.route("POST", RUN + "/stream", query=JoinStreamQuery, produces=SSE, errors=(404, 422))
async def cancel_and_join(call: Call) -> web.StreamResponse:
    """Cancel (with action) then drain the stream (SSE)"""
    return await _join(call, cancel_first=True)


async def _join(call: Call, *, cancel_first: bool) -> web.StreamResponse:
    gw: Gateway = call.gw
    rec = await _run(call)
    q: JoinStreamQuery = call.query
    if cancel_first and q.action is not None:
        await gw.runs.cancel_anywhere(rec)
    last = call.request.headers.get("Last-Event-ID", "")  # none or "-1": from the start
    queue = rec.subscribe(after=int(last) if last.isdigit() else 0)
    on_gone = (lambda: gw.runs.cancel_soon(rec)) if q.cancel_on_disconnect else None
    return await stream_run(
        call.request, rec, queue, heartbeat=gw.runs.heartbeat_seconds, on_disconnect=on_gone
    )
