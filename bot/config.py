"""The service's configuration: one pydantic tree from YAML, `$VAR`s taken from the environment.

Errors name the YAML path of the bad value (`models[0].base_url: invalid URL`), so start-up can
print one line per problem and exit 2.
"""

from __future__ import annotations

import ipaddress
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, create_model

from agent.config import AgentConfig, ModelConfig
from channels import REGISTRY, config_model
from channels.base import BusyPolicy, ChannelConfig

_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")


class ConfigError(Exception):
    """The configuration is invalid; `problems` has one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class StorageConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data_dir: Path = Path(".antler")


class GatewayConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=8001, ge=0, le=65535)
    auth_token: SecretStr | None = None


class ChannelsShared(BaseModel):
    """Settings shared by every channel; each platform adds its own section."""

    model_config = ConfigDict(extra="forbid")
    max_concurrent_runs: int = Field(default=16, ge=1)
    busy_policy: BusyPolicy = BusyPolicy.queue
    inbound_queue_size: int = Field(default=1000, ge=1)
    dedupe_window_hours: float = Field(default=24, gt=0)
    shutdown_grace_seconds: float = Field(default=10, ge=0)
    max_upload_mb: float = Field(default=20, gt=0)

    def platform(self, name: str) -> ChannelConfig | None:
        section = getattr(self, name, None)
        return section if isinstance(section, ChannelConfig) else None

    def enabled(self) -> dict[str, ChannelConfig]:
        found = {name: self.platform(name) for name in REGISTRY}
        return {name: cfg for name, cfg in found.items() if cfg is not None and cfg.enabled}

    def busy_policy_for(self, name: str) -> BusyPolicy:
        cfg = self.platform(name)
        return cfg.busy_policy if cfg is not None and cfg.busy_policy else self.busy_policy


@cache
def channels_model() -> type[ChannelsShared]:
    """ChannelsShared plus one optional section per registered platform."""
    fields: dict[str, Any] = {name: (config_model(name) | None, None) for name in REGISTRY}
    model: type[ChannelsShared] = create_model("ChannelsConfig", __base__=ChannelsShared, **fields)
    return model


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    storage: StorageConfig = Field(default_factory=StorageConfig)
    gateway: GatewayConfig = Field(default_factory=GatewayConfig)
    models: list[ModelConfig] = Field(default_factory=list)
    default_model: str | None = None
    agent: AgentConfig = Field(default_factory=AgentConfig)
    channels: ChannelsShared = Field(default_factory=ChannelsShared)
    config_path: Path | None = Field(default=None, exclude=True)


def load_settings(path: Path) -> Settings:
    """Read, substitute and validate `path`; raise ConfigError with YAML paths."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError as exc:
        raise ConfigError([f"{path}: file not found (copy config.example.yaml)"]) from exc
    except yaml.YAMLError as exc:
        raise ConfigError([f"{path}: not valid YAML: {exc}"]) from exc
    if not isinstance(raw, dict):
        raise ConfigError([f"{path}: the top level must be a mapping"])
    settings = settings_from_dict(raw)
    settings.config_path = path
    return settings


def settings_from_dict(raw: dict[str, Any]) -> Settings:
    unset: dict[str, str] = {}
    data = _substitute(raw, "", unset)
    data["channels"] = data.get("channels") or {}
    problems: list[str] = []
    settings = channels = None
    try:
        settings = Settings.model_validate({**data, "channels": {}})
    except ValidationError as exc:
        problems += _problems(exc, unset, prefix="")
    try:
        channels = channels_model().model_validate(data["channels"])
    except ValidationError as exc:
        problems += _problems(exc, unset, prefix="channels.")
    if settings is None or channels is None:
        raise ConfigError(problems)
    settings.channels = channels
    problems = _cross_checks(settings)
    if problems:
        raise ConfigError(problems)
    return settings


def _problems(exc: ValidationError, unset: dict[str, str], prefix: str) -> list[str]:
    lines = []
    for err in exc.errors():
        path = prefix + _yaml_path(err["loc"])
        lines.append(f"{path}: {_message(err, unset.get(path))}")
    return lines


def _yaml_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _message(err: Any, unset_var: str | None) -> str:
    if unset_var:
        return f"environment variable {unset_var} is not set"
    kind = err["type"]
    if kind == "missing":
        return "field required"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind.startswith("url"):
        return f"invalid URL ({err['msg']})"
    return str(err["msg"]).removeprefix("Value error, ")


def _substitute(value: Any, path: str, unset: dict[str, str]) -> Any:
    """Replace `$VAR`/`${VAR}` in strings; a value that is only an unset `$VAR` becomes None."""
    if isinstance(value, dict):
        return {
            k: _substitute(v, f"{path}.{k}" if path else str(k), unset) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_substitute(v, f"{path}[{i}]", unset) for i, v in enumerate(value)]
    if not isinstance(value, str) or "$" not in value:
        return value
    whole = _VAR.fullmatch(value.strip())
    if whole:
        name = whole.group(1) or whole.group(2)
        if name not in os.environ:
            unset[path] = name
            return None
        return os.environ[name]
    return _VAR.sub(lambda m: os.environ.get(m.group(1) or m.group(2), ""), value)


def _cross_checks(settings: Settings) -> list[str]:
    problems = []
    names = [m.name for m in settings.models]
    for i, name in enumerate(names):
        if names.index(name) != i:
            problems.append(f"models[{i}].name: duplicate model name {name!r}")
    if settings.default_model and settings.default_model not in names:
        problems.append(f"default_model: {settings.default_model!r} is not one of models[].name")
    gw = settings.gateway
    token = gw.auth_token.get_secret_value() if gw.auth_token else ""
    if gw.enabled and not token and not is_loopback(gw.host):
        problems.append(
            f"gateway.auth_token: required when gateway.host ({gw.host}) is not a loopback "
            "address; without a token the admin API is open to anyone who can reach it "
            "(set gateway.auth_token or bind gateway.host to 127.0.0.1)"
        )
    return problems


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
