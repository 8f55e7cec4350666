"""`GET /openapi.json`, generated from the route registry's pydantic models, and `GET /docs`,
a self-contained HTML page listing every route (it loads nothing from the internet)."""

from __future__ import annotations

import copy
import functools
import html
from collections.abc import Callable
from typing import Any

from aiohttp import web
from pydantic import BaseModel, TypeAdapter

from gateway.langgraph.schemas import ErrorResponse
from gateway.registry import OPENAPI_KEY, PATH_PARAMS, Call, Registry, Route

api = Registry(tag="meta")
REF = "#/components/schemas/{model}"
STATUS_TEXT = {
    200: "OK",
    202: "Accepted",
    204: "No Content",
    400: "Bad request",
    401: "Missing or invalid bearer token",
    403: "Forbidden",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    422: "Invalid input",
    500: "Internal error",
    501: "Not implemented",
}


class _Schemas:
    def __init__(self) -> None:
        self.components: dict[str, Any] = {}

    def of(self, tp: Any, mode: str) -> dict[str, Any]:
        schema = TypeAdapter(tp).json_schema(ref_template=REF, mode=mode)  # type: ignore[arg-type]
        for name, sub in schema.pop("$defs", {}).items():
            self.components.setdefault(name, sub)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            self.components.setdefault(tp.__name__, schema)
            return {"$ref": REF.format(model=tp.__name__)}
        return schema


def build_openapi(routes: list[Route], *, secured: bool) -> dict[str, Any]:
    """The document of `routes`. It depends on nothing but the route table (pydantic's schema
    generation is the slow part), so one process builds it once per table and hands each app
    its own copy."""
    return copy.deepcopy(_build(tuple(routes), secured))


def openapi_on_demand(routes: list[Route], *, secured: bool) -> Callable[[], dict[str, Any]]:
    """The document, built when it is first asked for: a start (or a restart after a config
    change) does not spend a tenth of a second on schemas nobody may read."""
    return functools.cache(functools.partial(build_openapi, list(routes), secured=secured))


@functools.cache
def _build(routes: tuple[Route, ...], secured: bool) -> dict[str, Any]:
    schemas = _Schemas()
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.openapi_path, {})[route.method.lower()] = _operation(
            route, schemas, secured
        )
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Antler admin API",
            "version": "1",
            "description": "DeerFlow-Gateway-shaped admin API; the threads and runs "
            "routes are LangGraph-compatible (client base URL: /api).",
        },
        "paths": paths,
        "components": {"schemas": schemas.components},
    }
    if secured:
        doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    return doc


def _operation(route: Route, schemas: _Schemas, secured: bool) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": route.summary,
        "tags": [route.tag],
        "operationId": f"{route.fn.__name__}_{route.method.lower()}",
    }
    params = [
        {
            "name": p,
            "in": "path",
            "required": True,
            "schema": {"type": "string", "pattern": PATH_PARAMS.get(p, ".+")},
        }
        for p in route.params
    ]
    if route.query is not None:
        params += _query_params(route.query)
    if params:
        op["parameters"] = params
    if route.body is not None:
        op["requestBody"] = {
            "required": False,
            "content": {"application/json": {"schema": schemas.of(route.body, "validation")}},
        }
    if route.multipart:
        content = {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "files": {"type": "array", "items": {"type": "string", "format": "binary"}}
                    },
                }
            }
        }
        if route.body is not None:  # a JSON alternative (skills install from a thread file)
            content["application/json"] = {"schema": schemas.of(route.body, "validation")}
        op["requestBody"] = {"required": True, "content": content}
    op["responses"] = _responses(route, schemas, secured)
    if secured and route.path != "/health":
        op["security"] = [{"bearer": []}]
    return op


def _query_params(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": prop}
        for name, prop in schema.get("properties", {}).items()
    ]


def _responses(route: Route, schemas: _Schemas, secured: bool) -> dict[str, Any]:
    ok: dict[str, Any] = {"description": STATUS_TEXT.get(route.status, "OK")}
    if route.response is not None:
        ok["content"] = {route.produces: {"schema": schemas.of(route.response, "serialization")}}
    elif route.produces != "application/json":
        ok["content"] = {route.produces: {"schema": {"type": "string"}}}
    out: dict[str, Any] = {str(route.status): ok}
    error = {"application/json": {"schema": schemas.of(ErrorResponse, "serialization")}}
    codes = set(route.errors) | ({401} if secured and route.path != "/health" else set())
    for code in sorted(codes):
        out[str(code)] = {"description": STATUS_TEXT.get(code, "Error"), "content": error}
    return out


@api.route("GET", "/openapi.json", response=dict[str, Any])
async def openapi_json(call: Call) -> dict[str, Any]:
    """This API's OpenAPI document"""
    return call.request.app[OPENAPI_KEY]()


@api.route("GET", "/docs", produces="text/html")
async def docs_page(call: Call) -> web.Response:
    """A page listing every route"""
    return web.Response(text=render_docs(call.request.app[OPENAPI_KEY]()), content_type="text/html")


def render_docs(doc: dict[str, Any]) -> str:
    rows = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            rows.append(
                f"<tr><td><code>{method.upper()}</code></td>"
                f"<td><code>{html.escape(path)}</code></td>"
                f"<td>{html.escape(op.get('summary', ''))}</td>"
                f"<td>{html.escape(', '.join(op.get('tags', [])))}</td></tr>"
            )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Antler admin API</title>"
        "<style>body{font-family:sans-serif;margin:2em}td{padding:2px 12px}"
        "tr:nth-child(even){background:#f4f4f4}</style></head><body>"
        f"<h1>{html.escape(doc['info']['title'])}</h1>"
        f"<p>{html.escape(doc['info']['description'])} The full schema is at "
        "<a href='/openapi.json'>/openapi.json</a>.</p>"
        "<table><tr><th>Method</th><th>Path</th><th>Summary</th><th>Group</th></tr>"
        + "".join(rows)
        + "</table></body></html>"
    )
