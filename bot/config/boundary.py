"""The reload boundary: which configuration keys apply live and which wait for a restart.

It is declared on the fields themselves (`json_schema_extra={"reload": ...}` in the pydantic
models; a field without a marker inherits its section's) and read from there by the reloader
(bot/config/live.py), the admin API (`GET /api/config/boundary`), docs/configuration.md and
tests/bot/test_config_boundary.py, which fails when they drift apart. The three kinds:

- `live`: applied to the next turn or message; running replies finish as they started;
- `channel`: the channel is restarted (its running replies finish first), others go on;
- `restart`: the change is kept in the file and reported as waiting for a restart.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any, Literal, get_args

from pydantic import BaseModel

from bot.config.schema import Settings, channels_model

Kind = Literal["live", "channel", "restart"]
KINDS: tuple[Kind, ...] = get_args(Kind)


@cache
def reload_boundary() -> dict[str, Kind]:
    """Every configuration key (`channels.telegram.bot_token`) → its kind. Lists and free-form
    mappings (`models`, `agent.tools`, `allowed_users`) are one key each."""
    found: dict[str, Kind] = {}
    _walk(Settings, "", "live", found, {"channels": channels_model()})
    return found


def marker(extra: Any) -> Kind | None:
    """The kind a field declares (None: it inherits); ValueError for an unknown kind."""
    value = extra.get("reload") if isinstance(extra, dict) else None
    if value is not None and value not in KINDS:
        raise ValueError(f"unknown reload kind {value!r} (one of {', '.join(KINDS)})")
    return value


def _walk(
    model: type[BaseModel],
    prefix: str,
    inherited: Kind,
    found: dict[str, Kind],
    override: dict[str, type[BaseModel]] | None = None,
) -> None:
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        path = f"{prefix}.{name}" if prefix else name
        kind = marker(field.json_schema_extra) or inherited
        sub = (override or {}).get(name) or model_of(field.annotation)
        if sub is None:
            found[path] = kind
        else:
            _walk(sub, path, kind, found)


def model_of(annotation: Any) -> type[BaseModel] | None:
    """The model of a field typed `Model` or `Model | None`; None for anything else."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        models = [
            a for a in get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)
        ]
        return models[0] if len(models) == 1 else None
    return None


def kind_of(path: str) -> Kind:
    """The kind of `path` or of the nearest key above it (`models[2].api_key` → `models`)."""
    table = reload_boundary()
    key = path.split("[", 1)[0]
    while key:
        if key in table:
            return table[key]
        key = key.rpartition(".")[0]
    return "restart"  # not a known key: say so rather than pretend it applied


def restart_only() -> list[str]:
    return sorted(path for path, kind in reload_boundary().items() if kind == "restart")


def changed_keys(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """The keys whose value differs between two substituted config dicts, at the depth of the
    boundary's keys (a list or a free-form mapping counts as one key)."""
    table = reload_boundary()
    out: list[str] = []
    for key in sorted(set(old) | set(new), key=str):
        path = f"{prefix}.{key}" if prefix else str(key)
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        deeper = path not in table and any(k.startswith(path + ".") for k in table)
        if deeper and isinstance(a or {}, dict) and isinstance(b or {}, dict):
            out += changed_keys(a or {}, b or {}, path)
        else:
            out.append(path)
    return out
