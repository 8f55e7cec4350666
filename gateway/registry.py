"""The gateway's route registry: each route records its pydantic request and response models.

Routes are mounted on aiohttp with a wrapper that validates the path, query and JSON body
(422 with pydantic's errors on bad input) and serialises what the handler returns. The same
records generate `/openapi.json` (see openapi.py), so the schema is never written by hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_type_hints

from aiohttp import web
from pydantic import BaseModel, ValidationError

from agent.paths import THREAD_ID_PATTERN

if TYPE_CHECKING:
    from gateway.service import Gateway

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
GATEWAY_KEY: web.AppKey[Any] = web.AppKey("gateway", object)
OPENAPI_KEY: web.AppKey[Callable[[], dict[str, Any]]] = web.AppKey("openapi")

THREAD_ID = THREAD_ID_PATTERN  # the runner's own rule (agent/paths.py)
RUN_ID = r"^[A-Za-z0-9_-]{1,64}$"
NAME = r"^[A-Za-z0-9_.:-]{1,128}$"

# Path parameters every route shares, with the pattern they must match.
PATH_PARAMS: dict[str, str] = {
    "thread_id": THREAD_ID,
    "run_id": RUN_ID,
    "assistant_id": NAME,
    "name": NAME,
    "filename": r"^[^/\\]{1,255}$",
    "path": r"^.{1,1024}$",
    "person": r"^[^/\\\x00-\x1f]{1,256}$",
    "fact_id": r"^[1-9][0-9]{0,17}$",
}


@dataclass
class Call:
    """What a route handler gets: the request and its validated parts."""

    request: web.Request
    path: dict[str, str]
    body: Any = None
    query: Any = None

    @property
    def gw(self) -> Gateway:
        """The `Gateway` (service.py): the service facade and the API's own stores."""
        gateway: Gateway = self.request.app[GATEWAY_KEY]
        return gateway


RouteFn = Callable[[Call], Awaitable[Any]]


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    fn: RouteFn
    summary: str
    tag: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    response: Any = None
    status: int = 200
    errors: tuple[int, ...] = ()
    produces: str = "application/json"
    multipart: bool = False

    @property
    def params(self) -> list[str]:
        return re.findall(r"{(\w+)(?::[^}]*)?}", self.path)

    @property
    def openapi_path(self) -> str:
        return re.sub(r"{(\w+):[^}]*}", r"{\1}", self.path)


@dataclass
class Registry:
    """One resource module's routes; `tag` (the OpenAPI tag) is said once, for all of them."""

    routes: list[Route] = field(default_factory=list)
    tag: str = ""

    def route(
        self, method: str, path: str, summary: str = "", **options: Any
    ) -> Callable[[RouteFn], RouteFn]:
        """Declare `method path`, `Route`'s other fields as keywords; the OpenAPI summary is
        the handler's docstring (white space folded) unless `summary` is given, the response
        model its return annotation (when a pydantic model) unless `response` is."""
        options.setdefault("tag", self.tag)

        def register(fn: RouteFn) -> RouteFn:
            text = summary or " ".join((fn.__doc__ or "").split())
            if not text:
                raise ValueError(f"route {method} {path}: no summary and no docstring")
            if "response" not in options:
                options["response"] = _returned_model(fn)
            self.routes.append(Route(method, path, fn, text, **options))
            return fn

        return register

    def mount(self, app: web.Application) -> None:
        """Mount every route, and its trailing-slash twin (DeerFlow answers both spellings)."""
        for route in self.routes:
            handler = _wrap(route)
            app.router.add_route(route.method, route.path, handler)
            if not re.search(r"{\w+:[^}]*}$", route.path):
                app.router.add_route(route.method, route.path + "/", handler)


def _returned_model(fn: RouteFn) -> type[BaseModel] | None:
    """The handler's return annotation, when it is a pydantic model."""
    hint = get_type_hints(fn).get("return")
    return hint if isinstance(hint, type) and issubclass(hint, BaseModel) else None


def _wrap(route: Route) -> Handler:
    from gateway.errors import ApiError

    async def handle(request: web.Request) -> web.StreamResponse:
        path = dict(request.match_info)
        for name in route.params:
            pattern = PATH_PARAMS.get(name)
            if pattern and not re.fullmatch(pattern, path.get(name, "")):
                raise ApiError(
                    422,
                    [
                        {
                            "loc": ["path", name],
                            "type": "string_pattern_mismatch",
                            "msg": f"{name} must match {pattern}",
                        }
                    ],
                )
        _check_text(path, "path")
        call = Call(request, path)
        if route.query is not None:
            call.query = route.query.model_validate(_check_text(_query_dict(request), "query"))
        if route.body is not None and (not route.multipart or "json" in request.content_type):
            call.body = route.body.model_validate(await _json_body(request))
        result = await route.fn(call)
        return _respond(result, route.status)

    return handle


def _query_dict(request: web.Request) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in request.query:
        values = request.query.getall(key)
        out[key] = values if len(values) > 1 else values[0]
    return out


async def _json_body(request: web.Request) -> Any:
    from gateway.errors import ApiError

    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        msg = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ApiError(
            422, [{"loc": ["body"], "type": "json_invalid", "msg": f"invalid JSON: {msg}"}]
        ) from None
    return _check_text(body, "body")


# NUL (no PostgreSQL text holds it) and lone surrogates (no UTF-8 encodes them; JSON's
# "\ud800" escape makes one): refused at the door, whatever the backend.
_UNSAFE = re.compile("[\x00\ud800-\udfff]")


def _check_text(value: Any, where: str) -> Any:
    """`value`, or 422 naming the first string (key or value) that no store could keep."""
    from gateway.errors import ApiError

    stack: list[tuple[Any, list[Any]]] = [(value, [where])]
    while stack:
        item, loc = stack.pop()
        if isinstance(item, dict):
            stack += [(key, [*loc, "(key)"]) for key in item]
            stack += [(v, [*loc, k]) for k, v in item.items()]
        elif isinstance(item, list):
            stack += [(v, [*loc, i]) for i, v in enumerate(item)]
        elif isinstance(item, str) and _UNSAFE.search(item):
            loc = [_UNSAFE.sub("?", x) if isinstance(x, str) else x for x in loc]
            msg = "text must not hold NUL characters or lone UTF-16 surrogates"
            raise ApiError(422, [{"loc": loc, "type": "string_unsafe", "msg": msg}])
    return value


def _respond(result: Any, status: int) -> web.StreamResponse:
    if isinstance(result, web.StreamResponse):
        return result
    if result is None:
        return web.Response(status=204)
    if isinstance(result, BaseModel):
        result = result.model_dump(mode="json")
    return web.json_response(result, status=status, dumps=_dumps)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


__all__ = ["Call", "Handler", "Registry", "Route", "ValidationError"]
