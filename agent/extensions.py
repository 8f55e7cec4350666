"""`extensions_config.json` (DeerFlow's format): `mcpServers` and `skills` enabled state.

```json
{"mcpServers": {"files": {"type": "stdio", "command": "npx", "args": ["..."],
                          "env": {"TOKEN": "$FILES_TOKEN"}, "enabled": true}},
 "skills": {"chart-from-data": {"enabled": false}}}
```
A missing file means no MCP servers and every skill enabled. `$VAR` / `${VAR}` in string values
are taken from the environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")


class ExtensionsError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Extensions:
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    skills: dict[str, bool] = field(default_factory=dict)


def signature(path: Path) -> tuple[float, int, str] | None:
    """(mtime, size, sha256) of the file, None when it does not exist."""
    try:
        data = path.read_bytes()
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_mtime, stat.st_size, hashlib.sha256(data).hexdigest())


def load_extensions(path: Path) -> Extensions:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Extensions()
    except (OSError, json.JSONDecodeError) as exc:
        raise ExtensionsError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise ExtensionsError(f"{path}: the top level must be an object")
    servers = raw.get("mcpServers") or {}
    skills = raw.get("skills") or {}
    if not isinstance(servers, dict) or not isinstance(skills, dict):
        raise ExtensionsError(f"{path}: mcpServers and skills must be objects")
    enabled = {
        name: bool((entry or {}).get("enabled", True)) if isinstance(entry, dict) else bool(entry)
        for name, entry in skills.items()
    }
    return Extensions(
        mcp_servers={k: v for k, v in servers.items() if isinstance(v, dict)}, skills=enabled
    )


def expand_vars(value: Any) -> Any:
    """`$VAR`s in strings (recursively); an unset variable becomes an empty string."""
    if isinstance(value, str):
        return _VAR.sub(lambda m: os.environ.get(m.group(1) or m.group(2), ""), value)
    if isinstance(value, list):
        return [expand_vars(v) for v in value]
    if isinstance(value, dict):
        return {k: expand_vars(v) for k, v in value.items()}
    return value
