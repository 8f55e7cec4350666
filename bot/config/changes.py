"""The record of configuration changes: who changed which keys when, and what became of them.

One JSON object a line in `<data_dir>/config_changes.jsonl` (appended, fsynced); never a value,
so never a secret. `GET /api/config/changes` reads it back, newest first.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FILE_NAME = "config_changes.jsonl"


@dataclass
class Change:
    at: float
    source: str  # "api", "file" (the watcher), "reload" (POST /api/config/reload)
    who: str  # the API caller when known ("admin token"), else "file"
    ok: bool
    changed: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    channels_restarted: list[str] = field(default_factory=list)
    pending_restart: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class ChangeLog:
    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / FILE_NAME

    def record(self, change: Change) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(asdict(change), ensure_ascii=False) + "\n"
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())

    def recent(self, limit: int = 100) -> list[dict[str, Any]]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in reversed(lines):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line cut by a crash mid-write
            if len(out) >= limit:
                break
        return out


def now() -> float:
    return round(time.time(), 3)
