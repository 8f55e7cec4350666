"""Skills: `GET /api/skills`, `GET|PUT /api/skills/{name}`, `POST /api/skills/install`.

Enabled state lives in `extensions_config.json` as `{"skills": {"<name>": {"enabled": bool}}}`
(DeerFlow's format), written atomically with the file's other keys kept; the agent re-reads the
file when it changes. Installing takes a `.skill` zip: DeerFlow's JSON `{thread_id, path}` (a
file in the thread's directories, e.g. one the agent wrote to outputs), multipart or the raw
body; see skill_archive.py for what is refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import BodyPartReader
from aiohttp.http_exceptions import HttpProcessingError
from pydantic import BaseModel, ConfigDict, Field

from agent.paths import thread_dirs
from agent.skills.loader import Skill
from agent.skills.registry import SkillRegistry
from gateway.api import skill_archive
from gateway.api.artifacts import resolve_artifact
from gateway.api.mcp import config_lock, config_path, read_raw, write_atomic
from gateway.errors import ApiError
from gateway.registry import THREAD_ID, Call, Registry

TAG = "skills"
api = Registry(tag=TAG)
_install_lock = asyncio.Lock()


class SkillInfo(BaseModel):
    name: str
    description: str
    license: str
    category: str
    enabled: bool
    editable: bool  # DeerFlow's: only custom (installed) skills
    path: str  # the agent's path of SKILL.md, never the host path


class SkillList(BaseModel):
    skills: list[SkillInfo]


class SkillUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool


class SkillInstallFromThread(BaseModel):
    """DeerFlow's install body: a `.skill` file the agent produced in a thread."""

    model_config = ConfigDict(extra="forbid")
    thread_id: str = Field(pattern=THREAD_ID)
    path: str = Field(min_length=1, max_length=1024)  # e.g. mnt/user-data/outputs/x.skill


class SkillInstallResponse(BaseModel):
    success: bool
    skill_name: str
    message: str
    skill: SkillInfo


def registry(call: Call) -> SkillRegistry:
    skills: SkillRegistry = call.gw.service.skills()
    return skills


def info(reg: SkillRegistry, skill: Skill) -> SkillInfo:
    return SkillInfo(
        name=skill.name,
        description=skill.description,
        license=skill.license,
        category=skill.category,
        enabled=reg.is_enabled(skill.name),
        editable=skill.category == "custom",
        path=skill.virtual_path,
    )


def find(reg: SkillRegistry, name: str) -> Skill:
    skill = next((s for s in reg.skills if s.name == name), None)
    if skill is None:
        raise ApiError(404, f"skill {name} not found")
    return skill


@api.route("GET", "/api/skills")
async def list_skills(call: Call) -> SkillList:
    """Every loaded skill and whether it is enabled"""
    reg = registry(call)
    return SkillList(skills=[info(reg, s) for s in reg.skills])


@api.route("GET", "/api/skills/{name}", errors=(404, 422))
async def get_skill(call: Call) -> SkillInfo:
    """One skill"""
    reg = registry(call)
    return info(reg, find(reg, call.path["name"]))


@api.route("PUT", "/api/skills/{name}", body=SkillUpdate, errors=(404, 422, 500))
async def put_skill(call: Call) -> SkillInfo:
    """Enable or disable a skill (atomic write)"""
    reg = registry(call)
    skill = find(reg, call.path["name"])
    body: SkillUpdate = call.body
    await set_enabled(config_path(call.gw), skill.name, body.enabled)
    return info(reg, skill)


async def set_enabled(path: Path, name: str, enabled: bool) -> None:
    """Write a skill's enabled state to extensions_config.json (atomic, other keys kept)."""
    async with config_lock:
        raw = read_raw(path)
        listed = raw.get("skills")
        skills = listed if isinstance(listed, dict) else {}
        entry = skills.get(name)
        skills[name] = {**(entry if isinstance(entry, dict) else {}), "enabled": enabled}
        raw["skills"] = skills
        try:
            await asyncio.to_thread(write_atomic, path, raw)
        except OSError as exc:
            raise ApiError(500, f"could not write {path.name}: {exc}") from None


@api.route(
    "POST",
    "/api/skills/install",
    body=SkillInstallFromThread,
    multipart=True,
    errors=(400, 403, 404, 409, 413, 422),
)
async def install_skill(call: Call) -> SkillInstallResponse:
    """Install a .skill zip: JSON {thread_id, path} of a thread's file, multipart field
    `files`/`file`, or the raw body"""
    data = await (_thread_file(call) if call.body is not None else _archive_bytes(call))
    reg = registry(call)
    skill = await install(reg, data)
    return SkillInstallResponse(
        success=True,
        skill_name=skill.name,
        message=f"skill {skill.name} installed",
        skill=info(reg, skill),
    )


async def install(reg: SkillRegistry, data: bytes) -> Skill:
    """Unpack a `.skill` archive into skills/custom and reload (400/409 as ApiError)."""
    async with _install_lock:
        taken = {s.name for s in reg.skills}
        try:
            skill = await asyncio.to_thread(skill_archive.install, data, reg.root, taken)
        except skill_archive.ArchiveRefused as exc:
            raise ApiError(400, str(exc)) from None
        except skill_archive.SkillExists as exc:
            raise ApiError(409, f"skill {exc} already exists") from None
        await asyncio.to_thread(reg.reload)
    return find(reg, skill.name)


async def _thread_file(call: Call) -> bytes:
    body: SkillInstallFromThread = call.body
    await call.gw.thread(body.thread_id)
    root = thread_dirs(call.gw.service.runner.data_dir, body.thread_id, create=False).root
    path = resolve_artifact(root, body.path)
    if path.stat().st_size > skill_archive.MAX_ARCHIVE:
        raise ApiError(413, f"the archive is larger than {skill_archive.MAX_ARCHIVE} bytes")
    return await asyncio.to_thread(path.read_bytes)


async def _archive_bytes(call: Call) -> bytes:
    request = call.request
    limit = skill_archive.MAX_ARCHIVE
    if not request.content_type.startswith("multipart/"):
        data = await read_limited(request.content.read, limit)
        if not data:
            raise ApiError(400, "send the .skill archive as the body or multipart field 'files'")
        return data
    try:
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if isinstance(part, BodyPartReader) and part.name in ("files", "file"):
                data = await read_limited(part.read_chunk, limit)
                if data:
                    return data
    except (HttpProcessingError, ValueError, AssertionError) as exc:
        raise ApiError(400, f"malformed multipart body: {exc}") from None
    raise ApiError(400, "no archive in the multipart field 'files'")


async def read_limited(read: Callable[[int], Awaitable[bytes]], limit: int) -> bytes:
    """Read chunks with `read(size)` until exhausted; 413 once past `limit` bytes."""
    out = bytearray()
    while chunk := await read(64 * 1024):
        out += chunk
        if len(out) > limit:
            raise ApiError(413, f"the archive is larger than {limit} bytes")
    return bytes(out)
