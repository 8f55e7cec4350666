"""The config's secrets file: secrets set over the admin API, kept out of config.yaml.

`config.yaml` → `config.secrets.env` beside it, mode 0600, one `NAME=value` a line. config.yaml
refers to each value as `$NAME`, like an environment variable; a name defined here wins over the
environment (it is the newer value: the API wrote it). See docs/configuration.md, "Secrets set
over the API".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from bot.atomic_file import write_atomic

_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
NAME_PREFIX = "ANTLER_"


def secrets_path(config_path: Path) -> Path:
    return config_path.with_name(config_path.stem + ".secrets.env")


def read_secrets(path: Path) -> dict[str, str]:
    """`NAME=value` lines (blank lines and `#` comments skipped); {} when there is no file."""
    try:
        return read_secrets_text(path.read_bytes())
    except (FileNotFoundError, NotADirectoryError):
        return {}


def read_secrets_text(data: bytes) -> dict[str, str]:
    text = data.decode("utf-8")
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if match:
            found[match.group(1)] = _unquote(match.group(2))
    return found


def write_secrets(path: Path, values: Mapping[str, str]) -> None:
    """Replace the file atomically with `values`, readable by the owner only (0600)."""
    lines = ["# Secrets set over Antler's admin API; config.yaml refers to them as $NAME.\n"]
    for name, value in sorted(values.items()):
        if not _LINE.match(f"{name}=x") or "\n" in value or "\r" in value:
            raise ValueError(f"{name}: not a valid secret name or value (one line)")
        lines.append(f"{name}={_quote(value)}\n")
    write_atomic(path, "".join(lines), mode=0o600)


def variable_for(yaml_path: str) -> str:
    """A variable name for a secret first set over the API: `channels.slack.bot_token` →
    `ANTLER_CHANNELS_SLACK_BOT_TOKEN`, `models[1].api_key` → `ANTLER_MODELS_1_API_KEY`."""
    return NAME_PREFIX + re.sub(r"[^A-Za-z0-9]+", "_", yaml_path).strip("_").upper()


def _quote(value: str) -> str:
    return (
        "'" + value.replace("'", "'\"'\"'") + "'"
        if value != value.strip() or "'" in value or "#" in value or not value
        else value
    )


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1].replace("'\"'\"'", "'") if value[0] == "'" else value[1:-1]
    return value
