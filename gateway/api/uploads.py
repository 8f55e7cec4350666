"""Thread uploads: `POST .../uploads` (multipart `files`, several at once), `GET .../list`,
`GET .../limits`, `DELETE .../{filename}`. Uploading to a thread that does not exist creates
it, as DeerFlow does. Files land in the thread's uploads directory (the
agent sees `/mnt/user-data/uploads/<name>`); unsafe names are skipped, duplicates renamed
`name_1.ext`, and each file is staged as `.upload-*.part` and renamed into place. Documents
(PDF, Word, Excel, PowerPoint) are converted to markdown next to the original, as chat uploads
are (`report.pdf` → `report.pdf.md`); a failed conversion keeps the upload."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import uuid
from pathlib import Path
from typing import Any

from aiohttp import BodyPartReader, MultipartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from agent.uploads import DOCUMENT_SUFFIXES, convert_to_markdown, markdown_path
from gateway.errors import ApiError
from gateway.langgraph.schemas import (
    SuccessResponse,
    UploadedFile,
    UploadLimits,
    UploadList,
    UploadResponse,
)
from gateway.registry import Call, Registry
from gateway.service import Gateway

log = logging.getLogger("gateway")
TAG = "uploads"
api = Registry(tag=TAG)
BASE = "/api/threads/{thread_id}/uploads"
VIRTUAL = "/mnt/user-data/uploads"
MAX_FILES = 10
MAX_FILE_SIZE = 50 * 1024 * 1024
MAX_TOTAL_SIZE = 100 * 1024 * 1024
CHUNK = 256 * 1024
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")


def safe_name(raw: str | None) -> str | None:
    """The file's base name if it is safe to create, else None."""
    if not raw:
        return None
    name = raw.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or name in (".", "..") or name.startswith(".") or _UNSAFE.search(name):
        return None
    return name if len(name.encode()) <= 200 else None


def unique_name(directory: Path, name: str) -> str:
    stem, dot, ext = name.rpartition(".")
    if not stem:
        stem, dot, ext = name, "", ""
    candidate, n = name, 1
    while (directory / candidate).exists():
        candidate = f"{stem}_{n}{dot}{ext}"
        n += 1
    return candidate


def file_info(
    thread_id: str, path: Path, original: str | None = None, markdown: Path | None = None
) -> UploadedFile:
    stat = path.stat()
    info = UploadedFile(
        filename=path.name,
        size=stat.st_size,
        extension=path.suffix or None,
        modified=stat.st_mtime,
        original_filename=original,
        path=f"{VIRTUAL}/{path.name}",
        virtual_path=f"{VIRTUAL}/{path.name}",
        artifact_url=_artifact_url(thread_id, path.name),
    )
    if markdown is not None:
        info.markdown_file = markdown.name
        info.markdown_path = info.markdown_virtual_path = f"{VIRTUAL}/{markdown.name}"
        info.markdown_artifact_url = _artifact_url(thread_id, markdown.name)
    return info


def _artifact_url(thread_id: str, name: str) -> str:
    return f"/api/threads/{thread_id}/artifacts/mnt/user-data/uploads/{name}"


async def convert(path: Path, enabled: bool) -> Path | None:
    """The document's markdown (converted now), or None for other files or a failure."""
    if not enabled or path.suffix.lower() not in DOCUMENT_SUFFIXES:
        return None
    try:
        return await asyncio.to_thread(convert_to_markdown, path)
    except Exception as exc:
        log.warning("could not convert %s to markdown: %s", path.name, exc)
        return None


async def _uploads_dir(call: Call, *, create: bool = False) -> Path:
    """The thread's uploads directory; with `create`, a missing thread is created (DeerFlow)."""
    gw: Gateway = call.gw
    thread_id = call.path["thread_id"]
    if create and await gw.threads.get(thread_id) is None:
        await gw.threads.create(thread_id, {})
    await gw.thread(thread_id)
    return gw.service.runner.thread_dirs(thread_id).uploads


@api.route("POST", BASE, multipart=True, errors=(400, 404, 413, 422))
async def upload(call: Call) -> UploadResponse:
    """Upload files (multipart field `files`)"""
    if not call.request.content_type.startswith("multipart/"):
        raise ApiError(400, "send the files as multipart/form-data in the field 'files'")
    uploads = await _uploads_dir(call, create=True)
    saved: list[tuple[Path, str]] = []
    skipped: list[str] = []
    total = 0
    try:
        reader = await call.request.multipart()
        while (part := await _next_part(reader)) is not None:
            if not isinstance(part, BodyPartReader) or part.name != "files":
                continue
            if len(saved) + len(skipped) >= MAX_FILES:
                raise ApiError(413, f"at most {MAX_FILES} files per upload")
            name = safe_name(part.filename)
            if name is None:
                skipped.append(part.filename or "(no name)")
                await part.release()
                continue
            path, size = await _save(part, uploads, name, MAX_TOTAL_SIZE - total)
            total += size
            saved.append((path, part.filename or name))
    except BaseException:
        for path, _ in saved:
            path.unlink(missing_ok=True)
        raise
    if not saved and not skipped:
        raise ApiError(400, "no files in the multipart field 'files'")
    enabled = call.gw.service.agent_config().uploads.convert_documents
    files = [file_info(call.path["thread_id"], p, o, await convert(p, enabled)) for p, o in saved]
    message = f"{len(files)} file(s) uploaded" + (f", {len(skipped)} skipped" if skipped else "")
    return UploadResponse(success=not skipped, files=files, message=message, skipped_files=skipped)


async def _next_part(reader: MultipartReader) -> Any:
    try:
        return await reader.next()
    except (HttpProcessingError, ValueError, AssertionError) as exc:
        raise ApiError(400, f"malformed multipart body: {exc}") from None


async def _save(part: BodyPartReader, uploads: Path, name: str, budget: int) -> tuple[Path, int]:
    staged = uploads / f".upload-{uuid.uuid4().hex}.part"
    size = 0
    try:
        with staged.open("wb") as out:
            while chunk := await part.read_chunk(CHUNK):
                size += len(chunk)
                if size > MAX_FILE_SIZE:
                    raise ApiError(413, f"{name} is larger than {MAX_FILE_SIZE} bytes")
                if size > budget:
                    raise ApiError(413, f"the upload is larger than {MAX_TOTAL_SIZE} bytes")
                out.write(chunk)
        final = uploads / unique_name(uploads, name)
        os.replace(staged, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            staged.unlink()
    return final, size


@api.route("GET", BASE + "/list", errors=(404, 422))
async def list_uploads(call: Call) -> UploadList:
    """List the thread's uploaded files"""
    uploads = await _uploads_dir(call)
    paths = sorted(p for p in uploads.iterdir() if p.is_file() and not p.name.startswith("."))
    files = [file_info(call.path["thread_id"], p) for p in paths]
    return UploadList(files=files, count=len(files))


@api.route("GET", BASE + "/limits", errors=(422,))
async def upload_limits(call: Call) -> UploadLimits:
    """Upload limits"""
    return UploadLimits(
        max_files=MAX_FILES, max_file_size=MAX_FILE_SIZE, max_total_size=MAX_TOTAL_SIZE
    )


@api.route("DELETE", BASE + "/{filename}", errors=(400, 404, 422))
async def delete_upload(call: Call) -> SuccessResponse:
    """Delete an uploaded file"""
    uploads = await _uploads_dir(call)
    name = call.path["filename"]
    if safe_name(name) != name:
        raise ApiError(400, f"invalid file name {name!r}")
    path = uploads / name
    if not path.is_file() or path.is_symlink():
        raise ApiError(404, f"{name} not found")
    path.unlink()
    if path.suffix.lower() in DOCUMENT_SUFFIXES:
        markdown_path(path).unlink(missing_ok=True)
    return SuccessResponse(success=True, message=f"{name} deleted")


__all__ = ["web"]
