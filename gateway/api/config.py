"""`/api/config`: the service's configuration, read (secrets masked), changed and reloaded live.

Every change is validated with the models config.yaml is read with (a PUT body first against
its section's own model, then the whole edited file), written back atomically with comments and
key order kept, applied without a restart where the reload boundary allows, and recorded (see
bot/config/live.py). An invalid change is a 422 naming the YAML paths; nothing is written or
applied. Without a config file (a service built from a dict) these routes answer 409.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from agent.config import AgentConfig, ModelConfig
from bot.config.boundary import Kind, reload_boundary, restart_only
from bot.config.changes import Change
from bot.config.file import masked
from bot.config.live import LiveConfig
from bot.config.schema import ChannelsShared
from channels import REGISTRY, config_model
from gateway.errors import ApiError
from gateway.principals import principal_of
from gateway.registry import Call, Registry

TAG = "config"
api = Registry(tag=TAG)
ACTOR_HEADER = "X-Antler-Actor"


class ConfigResponse(BaseModel):
    path: str
    config: dict[str, Any] = Field(description="the effective configuration; secrets are `***`")
    pending_restart: list[str] = Field(description="changed keys that wait for a restart")


class BoundaryResponse(BaseModel):
    keys: dict[str, Kind] = Field(
        description="every key: live, channel (restarts that channel "
        "only) or restart (waits for a restart)"
    )
    restart_only: list[str]


class ConfigChange(BaseModel):
    at: float
    source: Literal["api", "file", "reload"]
    who: str
    ok: bool
    changed: list[str] = Field(default_factory=list)
    applied: list[str] = Field(default_factory=list)
    channels_restarted: list[str] = Field(default_factory=list)
    pending_restart: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class ConfigChanges(BaseModel):
    changes: list[ConfigChange]


class ChangesQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    limit: int = Field(default=100, ge=1, le=1000)


class SectionPatch(RootModel[dict[str, Any]]):
    """Any subset of the section's keys; nested sections are merged, lists replaced."""


class ModelsUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    models: list[ModelConfig]
    default_model: str | None = Field(default=None, description="omitted: kept as it is")


def _live(call: Call) -> LiveConfig:
    live: LiveConfig | None = call.gw.service.live_config()
    if live is None:
        raise ApiError(409, "the service was not started from a config file; nothing to change")
    return live


def _who(call: Call) -> str:
    actor = call.request.headers.get(ACTOR_HEADER, "").strip()[:64]
    remote = call.request.remote or "?"
    principal = principal_of(call.request)
    token = principal.name if principal else "no token"
    return f"{actor} ({token}, {remote})" if actor else f"{token}, {remote}"


def _answer(change: Change) -> ConfigChange:
    if not change.ok:
        raise ApiError(
            422,
            {"message": "configuration not valid; nothing was changed", "errors": change.errors},
        )
    return ConfigChange.model_validate(change.__dict__)


async def _edit(
    call: Call, section: tuple[str, ...], body: dict[str, Any], *, replace: bool
) -> ConfigChange:
    live = _live(call)
    try:
        change = await live.edit(section, body, replace=replace, who=_who(call))
    except OSError as exc:  # e.g. config.yaml mounted read-only: nothing was applied
        raise ApiError(500, f"could not write {live.path.name}: {exc.strerror or exc}") from None
    return _answer(change)


async def _raw_body(call: Call) -> dict[str, Any]:
    """The body as sent (masks and `$VAR`s are read by the edit); the route's model already
    checked it is valid JSON."""
    _live(call)  # 409 before anything else
    raw = await call.request.read()
    body = json.loads(raw) if raw.strip() else {}
    if not isinstance(body, dict):
        raise ApiError(422, "the body must be a JSON object")
    return body


@api.route("GET", "/api/config", errors=(409,))
async def get_config(call: Call) -> ConfigResponse:
    """The effective configuration (secrets masked)"""
    live = _live(call)
    dump = live.settings.model_dump(mode="json", exclude={"config_path"}, serialize_as_any=True)
    return ConfigResponse(
        path=str(live.path), config=masked(dump), pending_restart=live.pending_restart()
    )


@api.route("GET", "/api/config/boundary")
async def get_boundary(call: Call) -> BoundaryResponse:
    """Which keys apply live, restart a channel, or wait for a restart"""
    return BoundaryResponse(keys=reload_boundary(), restart_only=restart_only())


@api.route("POST", "/api/config/reload", errors=(409, 422))
async def reload_config(call: Call) -> ConfigChange:
    """Read config.yaml again and apply it"""
    return _answer(await _live(call).reload(source="reload", who=_who(call)))


@api.route("GET", "/api/config/changes", query=ChangesQuery, errors=(409, 422))
async def list_changes(call: Call) -> ConfigChanges:
    """Recorded configuration changes, newest first"""
    live = _live(call)
    rows = await live.changes.recent(call.query.limit)
    return ConfigChanges(changes=[ConfigChange.model_validate(r) for r in rows])


@api.route("PUT", "/api/config/models", body=ModelsUpdate, errors=(409, 422))
async def put_models(call: Call) -> ConfigChange:
    """Replace the models list (and the default)"""
    raw = await _raw_body(call)
    body = {"models": raw["models"]}
    if raw.get("default_model") is not None:
        body["default_model"] = raw["default_model"]
    return await _edit(call, (), body, replace=False)


class ChannelsSharedPatch(RootModel[dict[str, Any]]):
    """Keys shared by every channel (`busy_policy`, `max_upload_mb`, ...); a platform's
    section has its own route."""


@api.route("PATCH", "/api/config/channels", body=ChannelsSharedPatch, errors=(409, 422))
async def patch_channels_shared(call: Call) -> ConfigChange:
    """Change keys shared by every channel"""
    body = await _raw_body(call)
    unknown = sorted(set(body) - set(ChannelsShared.model_fields))
    if unknown:
        raise ApiError(
            422,
            {
                "message": "not a shared channel key; use "
                "/api/config/channels/{name} for a platform's section",
                "errors": [f"channels.{k}: not a shared key" for k in unknown],
            },
        )
    return await _edit(call, ("channels",), body, replace=False)


def _section_routes(path: str, section: tuple[str, ...], model: type[BaseModel], what: str) -> None:
    """PUT (replace the section) and PATCH (merge into it) for one section of the file."""

    def handler(replace: bool) -> Callable[[Call], Awaitable[ConfigChange]]:
        async def change(call: Call) -> ConfigChange:
            return await _edit(call, section, await _raw_body(call), replace=replace)

        change.__name__ = f"{'put' if replace else 'patch'}_{'_'.join(section)}_config"
        return change

    api.route("PUT", path, f"Replace {what}", body=model, response=ConfigChange, errors=(409, 422))(
        handler(True)
    )
    api.route(
        "PATCH",
        path,
        f"Change some keys of {what}",
        body=SectionPatch,
        response=ConfigChange,
        errors=(409, 422),
    )(handler(False))


_section_routes("/api/config/agent", ("agent",), AgentConfig, "the agent's settings")
for _name in REGISTRY:
    _section_routes(
        f"/api/config/channels/{_name}",
        ("channels", _name),
        config_model(_name),
        f"the {_name} channel's section",
    )
