"""`GET /api/threads/{id}/artifacts/{path}`: a file from the thread's directories.

`path` is what the agent sees, e.g. `mnt/user-data/outputs/report.pdf`. The resolved file must
stay inside the thread's `user-data` directory (symlinks and `..` included: 403 otherwise).
HTML, XHTML and SVG are always attachments (they could run script in the admin's browser);
`?download=true` makes anything an attachment.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from urllib.parse import quote

from aiohttp import web

from agent.paths import thread_dirs
from gateway.errors import ApiError
from gateway.langgraph.schemas import ArtifactQuery
from gateway.registry import Call, Registry
from gateway.service import Gateway

TAG = "artifacts"
api = Registry(tag=TAG)
PREFIX = "mnt/user-data/"
AREAS = ("workspace", "uploads", "outputs")
ACTIVE_TYPES = {"text/html", "application/xhtml+xml", "image/svg+xml"}
ACTIVE_SUFFIXES = {".html", ".htm", ".xhtml", ".xht", ".svg", ".svgz"}


def resolve_artifact(root: Path, virtual: str) -> Path:
    """The host file for a virtual path, or ApiError (400 bad prefix, 403 escape, 404 missing)."""
    rel = virtual.lstrip("/")
    if not rel.startswith(PREFIX) or rel.split("/")[2:3] == [] or rel.split("/")[2] not in AREAS:
        raise ApiError(400, f"path must start with {PREFIX}{{{','.join(AREAS)}}}/")
    if "\x00" in rel:
        raise ApiError(400, "invalid path")
    base = root.resolve()
    target = (root / rel[len(PREFIX) :]).resolve()
    if target != base and base not in target.parents:
        raise ApiError(403, "path escapes the thread's directories")
    if not target.exists():
        raise ApiError(404, f"{virtual} not found")
    if not target.is_file():
        raise ApiError(400, f"{virtual} is not a file")
    return target


@api.route(
    "GET",
    "/api/threads/{thread_id}/artifacts/{path:.+}",
    query=ArtifactQuery,
    produces="application/octet-stream",
    errors=(400, 403, 404, 422),
)
async def get_artifact(call: Call) -> web.FileResponse:
    """Download a file from the thread's directories"""
    gw: Gateway = call.gw
    thread_id = call.path["thread_id"]
    await gw.thread(thread_id)
    root = thread_dirs(gw.service.runner.data_dir, thread_id, create=False).root
    path = resolve_artifact(root, call.path["path"])
    ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    attach = call.query.download or ctype in ACTIVE_TYPES or path.suffix.lower() in ACTIVE_SUFFIXES
    disposition = "attachment" if attach else "inline"
    headers = {
        "Content-Type": "application/octet-stream" if attach and ctype in ACTIVE_TYPES else ctype,
        "Content-Disposition": f"{disposition}; filename*=UTF-8''{quote(path.name)}",
        "X-Content-Type-Options": "nosniff",
    }
    return web.FileResponse(path, headers=headers)
