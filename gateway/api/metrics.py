"""`GET /metrics`: the service's metrics in the Prometheus text format, and `GET /health`."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from gateway.langgraph.schemas import Health
from gateway.registry import Call, Registry
from gateway.service import Gateway

api = Registry(tag="meta")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@api.route("GET", "/metrics", produces="text/plain")
async def metrics(call: Call) -> web.Response:
    """Prometheus metrics"""
    gw: Gateway = call.gw
    response = web.Response(text=gw.service.metrics.render())
    response.headers["Content-Type"] = CONTENT_TYPE
    return response


@api.route("GET", "/health", response=Health)
async def health(call: Call) -> dict[str, Any]:
    """Liveness and a summary of the service (public)"""
    gw: Gateway = call.gw
    return gw.service.health()
