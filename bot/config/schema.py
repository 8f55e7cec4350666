"""The service's configuration: one pydantic tree from YAML, `$VAR`s taken from the environment.

Errors name the YAML path of the bad value (`models[0].base_url: invalid URL`), so start-up can
print one line per problem and exit 2.
"""

from __future__ import annotations

import enum
import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from agent.config import AgentConfig, ModelConfig
from agent.profiles import AgentProfile, bound_problems, profile_problems, soul_problems
from bot.access.roles import AccessConfig
from bot.config.channels import ChannelsShared, channels_model, locale_checks
from bot.config.env import substitute
from bot.config.reload import LIVE, RESTART
from bot.config.secrets import read_secrets, secrets_path
from bot.config.speech import SpeechConfig
from bot.schedules.config import SchedulesConfig
from bot.usage.config import UsageConfig


class ConfigError(Exception):
    """The configuration is invalid; `problems` has one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class StorageBackend(enum.StrEnum):
    sqlite = "sqlite"
    postgres = "postgres"


class PostgresConfig(BaseModel):
    """Where the shared state lives when `storage.backend` is `postgres` (see docs/scale-out.md)."""

    model_config = ConfigDict(extra="forbid")
    dsn: SecretStr | None = None  # postgresql://user:password@host:5432/db, from the environment
    pool_min: int = Field(default=2, ge=1)
    pool_max: int = Field(default=10, ge=2)  # checkpoint setup holds one while using another
    connect_timeout_seconds: float = Field(default=5, gt=0)
    statement_timeout_seconds: float = Field(default=30, gt=0)
    # off: a commit survives a crash of Antler, not of the database server (like SQLite's WAL
    # with synchronous=NORMAL); on: every commit waits for the server's disk
    synchronous_commit: bool = False


class StorageConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data_dir: Path = Path(".antler")
    backend: StorageBackend = StorageBackend.sqlite
    postgres: PostgresConfig = Field(default_factory=PostgresConfig)


class BusBackend(enum.StrEnum):
    memory = "memory"
    redis = "redis"


class RedisConfig(BaseModel):
    """The Redis server several workers share when `bus.backend` is `redis` (docs/scale-out.md)."""

    model_config = ConfigDict(extra="forbid")
    url: SecretStr | None = None  # redis://[:password@]host:6379/0, from the environment
    key_prefix: str = Field(default="antler", min_length=1)
    partitions: int = Field(default=16, ge=1, le=1024)
    # a dead worker's partitions, unacknowledged messages and platform connections are taken
    # over once its leases run out: this long after its last renewal
    lease_seconds: float = Field(default=10, ge=1, le=300)
    connect_timeout_seconds: float = Field(default=5, gt=0)


class BusConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    backend: BusBackend = BusBackend.memory
    redis: RedisConfig = Field(default_factory=RedisConfig)


class ApiToken(BaseModel):
    """A named admin API token: `admin` may change things, `viewer` only reads."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=64, pattern=r"^[\w.@-]+$")
    token: SecretStr
    role: Literal["admin", "viewer"] = "admin"


class GatewayConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = Field(default=True, json_schema_extra=RESTART)
    host: str = Field(default="127.0.0.1", json_schema_extra=RESTART)
    port: int = Field(default=8001, ge=0, le=65535, json_schema_extra=RESTART)
    auth_token: SecretStr | None = Field(default=None, json_schema_extra=LIVE)
    tokens: list[ApiToken] = Field(default_factory=list, json_schema_extra=LIVE)


class LoggingConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    level: Literal["debug", "info", "warning", "error"] = "info"


class Settings(BaseModel):
    """Every top-level section declares its reload boundary (tests/bot/test_config_boundary.py)."""

    model_config = ConfigDict(extra="forbid")
    storage: StorageConfig = Field(default_factory=StorageConfig, json_schema_extra=RESTART)
    bus: BusConfig = Field(default_factory=BusConfig, json_schema_extra=RESTART)
    gateway: GatewayConfig = Field(default_factory=GatewayConfig, json_schema_extra=LIVE)
    logging: LoggingConfig = Field(default_factory=LoggingConfig, json_schema_extra=LIVE)
    models: list[ModelConfig] = Field(default_factory=list, json_schema_extra=LIVE)
    default_model: str | None = Field(default=None, json_schema_extra=LIVE)
    agent: AgentConfig = Field(default_factory=AgentConfig, json_schema_extra=LIVE)
    agents: list[AgentProfile] = Field(default_factory=list, json_schema_extra=LIVE)
    channels: ChannelsShared = Field(default_factory=ChannelsShared, json_schema_extra=LIVE)
    schedules: SchedulesConfig = Field(default_factory=SchedulesConfig, json_schema_extra=LIVE)
    access: AccessConfig = Field(default_factory=AccessConfig, json_schema_extra=LIVE)
    usage: UsageConfig = Field(default_factory=UsageConfig, json_schema_extra=LIVE)
    speech: SpeechConfig = Field(default_factory=SpeechConfig, json_schema_extra=RESTART)
    config_path: Path | None = Field(default=None, exclude=True)


def load_settings(path: Path) -> Settings:
    """Read, substitute and validate `path`; raise ConfigError with YAML paths."""
    return settings_from_file(path, read_yaml(path))


def settings_from_file(
    path: Path, raw: dict[str, Any], env: Mapping[str, str] | None = None
) -> Settings:
    """Validate `raw` (read from `path`): `$VAR`s from `env`, by default its secrets file and
    the environment."""
    settings = settings_from_dict(raw, env=config_env(path) if env is None else env)
    settings.config_path = path
    resolve_paths(settings, path.absolute().parent)
    if problems := soul_problems(settings.agents):
        raise ConfigError(problems)
    return settings


def config_env(path: Path) -> Mapping[str, str]:
    """What `$VAR`s are taken from: the config's secrets file first, then the environment."""
    return {**os.environ, **read_secrets(secrets_path(path))}


def read_yaml(path: Path) -> dict[str, Any]:
    """The file's top-level mapping; ConfigError naming the file when it cannot be read."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError as exc:
        raise ConfigError([f"{path}: file not found (copy config.example.yaml)"]) from exc
    except IsADirectoryError as exc:
        raise ConfigError([f"{path}: is a folder; give the path of the config file"]) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8"]) from exc
    except OSError as exc:
        raise ConfigError([f"{path}: cannot be read ({exc.strerror or exc})"]) from exc
    except yaml.YAMLError as exc:
        raise ConfigError([f"{path}: not valid YAML: {exc}"]) from exc
    if not isinstance(raw, dict):
        raise ConfigError([f"{path}: the top level must be a mapping"])
    return raw


def resolve_paths(model: BaseModel, base: Path) -> None:
    """Make every relative path in the settings tree relative to `base` (the config's folder)."""
    for name in type(model).model_fields:
        value = getattr(model, name, None)
        if isinstance(value, Path) and name != "config_path":
            value = value.expanduser()
            # not setattr: that would count the field as set in the YAML (model_fields_set)
            model.__dict__[name] = value if value.is_absolute() else base / value
        elif isinstance(value, BaseModel):
            resolve_paths(value, base)
        elif isinstance(value, list):  # `agents[].soul_file`
            for item in (v for v in value if isinstance(v, BaseModel)):
                resolve_paths(item, base)


def path_warnings(settings: Settings) -> list[str]:
    """Configured paths that do not exist: the service starts, but without what they hold."""
    found: list[str] = []
    skills = settings.agent.skills.path
    if not skills.is_dir():
        found.append(
            f"agent.skills.path: {skills} does not exist; no skills are loaded "
            "(relative paths are relative to the config file's folder)"
        )
    return found  # extensions_config may be missing: it is optional and written by the API


def settings_from_dict(raw: dict[str, Any], env: Mapping[str, str] | None = None) -> Settings:
    unset: dict[str, str] = {}
    data = substitute(raw, env, unset)
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


_FIELD_MESSAGE = re.compile(r"^(\w+(?:\[\d+\](?:\.\w+)*)?): (.+)$", re.DOTALL)


def _problems(exc: ValidationError, unset: dict[str, str], prefix: str) -> list[str]:
    lines = []
    for err in exc.errors():
        path = prefix + _yaml_path(err["loc"])
        text = str(err["msg"]).removeprefix("Value error, ")
        named = _FIELD_MESSAGE.match(text) if err["type"] == "value_error" else None
        if named:  # a section's check names its field: `bot_token: required when ...`
            path = f"{path}.{named.group(1)}" if path else named.group(1)
            err = {**err, "msg": named.group(2)}
        lines.append(f"{path}: {_message(err, unset.get(path))}")
    return lines


def _yaml_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _message(err: Any, unset_var: str | None) -> str:
    if unset_var:
        return f"${unset_var} is not set"
    kind = err["type"]
    if kind == "missing":
        return "field required"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind.startswith("url"):
        return f"invalid URL ({err['msg']})"
    return str(err["msg"]).removeprefix("Value error, ")


def _cross_checks(settings: Settings) -> list[str]:
    problems = []
    if not settings.models:
        problems.append("models: at least one model is required (see config.example.yaml)")
    names = [m.name for m in settings.models]
    for i, name in enumerate(names):
        if names.index(name) != i:
            problems.append(f"models[{i}].name: duplicate model name {name!r}")
    if settings.default_model and settings.default_model not in names:
        problems.append(f"default_model: {settings.default_model!r} is not one of models[].name")
    problems += profile_problems(settings.agents, set(names))
    bound = {name: cfg.agent for name, cfg in settings.channels.enabled().items()}
    problems += bound_problems(bound, settings.agents)
    problems += _storage_checks(settings.storage)
    problems += settings.access.problems({m.name for m in settings.models})
    problems += settings.usage.problems(
        {m.name for m in settings.models}, set(settings.access.roles)
    )
    problems += _bus_checks(settings)
    problems += locale_checks(settings.channels)
    gw = settings.gateway
    token = gw.auth_token.get_secret_value() if gw.auth_token else ""
    if gw.enabled and not token and not is_loopback(gw.host):
        problems.append(
            f"gateway.auth_token: required when gateway.host ({gw.host}) is not a loopback "
            "address; without a token the admin API is open to anyone who can reach it "
            "(set gateway.auth_token or bind gateway.host to 127.0.0.1)"
        )
    return problems


def _storage_checks(storage: StorageConfig) -> list[str]:
    if storage.backend is not StorageBackend.postgres:
        return []
    pg = storage.postgres
    dsn = pg.dsn.get_secret_value().strip() if pg.dsn else ""
    problems = []
    if not dsn:
        problems.append(
            "storage.postgres.dsn: required when storage.backend is postgres "
            "(postgresql://user:password@host:5432/dbname, e.g. $ANTLER_PG_DSN)"
        )
    elif not dsn.startswith(("postgresql://", "postgres://")) and "=" not in dsn:
        problems.append(
            "storage.postgres.dsn: not a PostgreSQL connection string "
            "(postgresql://user:password@host:5432/dbname)"
        )
    if pg.pool_min > pg.pool_max:
        problems.append(
            f"storage.postgres.pool_min: {pg.pool_min} is more than "
            f"storage.postgres.pool_max ({pg.pool_max})"
        )
    return problems


def _bus_checks(settings: Settings) -> list[str]:
    bus = settings.bus
    if bus.backend is not BusBackend.redis:
        return []
    url = bus.redis.url.get_secret_value().strip() if bus.redis.url else ""
    problems = []
    if not url:
        problems.append(
            "bus.redis.url: required when bus.backend is redis "
            "(redis://[:password@]host:6379/0, e.g. $ANTLER_REDIS_URL)"
        )
    elif not url.startswith(("redis://", "rediss://", "unix://")):
        problems.append("bus.redis.url: not a Redis URL (redis://[:password@]host:6379/0)")
    if settings.storage.backend is not StorageBackend.postgres:
        problems.append(
            "bus.backend: redis needs storage.backend: postgres (the workers share "
            "the delivery journal and conversations there)"
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
