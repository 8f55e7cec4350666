"""Every error the gateway sends is JSON `{"detail": ...}`; unexpected failures are a logged 500."""

from __future__ import annotations

import json
import logging
from typing import Any, TypeVar

from aiohttp import web
from aiohttp.typedefs import Handler
from pydantic import ValidationError

T = TypeVar("T")

log = logging.getLogger("gateway")


class ApiError(Exception):
    """Raise from a route to answer `status` with `{"detail": detail}`."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(str(detail))
        self.status = status
        self.detail = detail


def present(part: T | None, missing: str) -> T:
    """A part of the service a route needs; when the service has none, a 409 saying `missing`."""
    if part is None:
        raise ApiError(409, missing)
    return part


def error_response(status: int, detail: Any, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"detail": detail}, status=status, headers=headers)


def validation_detail(exc: ValidationError) -> list[dict[str, Any]]:
    """Pydantic's errors as plain JSON (no URLs, no exception objects)."""
    detail: list[dict[str, Any]] = json.loads(exc.json(include_url=False))
    return detail


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as exc:
        return error_response(exc.status, exc.detail)
    except ValidationError as exc:
        return error_response(422, validation_detail(exc))
    except web.HTTPException as exc:
        if exc.content_type == "application/json" or exc.status < 400:
            raise
        keep = ("allow", "www-authenticate")
        headers = {k: v for k, v in exc.headers.items() if k.lower() in keep}
        return error_response(exc.status, exc.reason, headers)
    except ConnectionResetError:
        raise
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return error_response(500, "internal error; see the service log")
