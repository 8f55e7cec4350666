"""`$VAR` and `${VAR}` in config.yaml: replaced from the environment (and the secrets file)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def substitute(
    raw: dict[str, Any], env: Mapping[str, str] | None = None, unset: dict[str, str] | None = None
) -> dict[str, Any]:
    """`raw` with `$VAR`s replaced from `env` (default: the environment)."""
    data: dict[str, Any] = _substitute(
        raw, "", {} if unset is None else unset, os.environ if env is None else env
    )
    return data


def var_reference(value: Any) -> str | None:
    """The variable's name when `value` is only a `$VAR` or `${VAR}` reference."""
    whole = _VAR.fullmatch(value.strip()) if isinstance(value, str) else None
    return (whole.group(1) or whole.group(2)) if whole else None


def _substitute(value: Any, path: str, unset: dict[str, str], env: Mapping[str, str]) -> Any:
    """Replace `$VAR`/`${VAR}` in strings; a value that is only an unset `$VAR` becomes None."""
    if isinstance(value, dict):
        return {
            k: _substitute(v, f"{path}.{k}" if path else str(k), unset, env)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_substitute(v, f"{path}[{i}]", unset, env) for i, v in enumerate(value)]
    if not isinstance(value, str) or "$" not in value:
        return value
    name = var_reference(value)
    if name:
        if name not in env:
            unset[path] = name
            return None
        return env[name]
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), ""), value)
