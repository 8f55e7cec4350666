"""The record of configuration changes: who changed which keys when, and what became of them.

Kept in the one audit trail (bot/access/store.py, entries of kind `config`); never a value, so
never a secret. `GET /api/config/changes` reads them back, newest first (`GET /api/audit` too).
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from bot.access.store import AccessStore, AuditEntry, AuditQuery

log = logging.getLogger("bot.config")

KIND = "config"


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
    def __init__(self, store: AccessStore) -> None:
        self.store = store

    async def record(self, change: Change) -> None:
        entry = AuditEntry(
            kind=KIND,
            actor=change.who,
            subject=", ".join(change.changed),
            outcome="ok" if change.ok else "refused",
            detail=asdict(change),
            at=change.at,
        )
        try:
            await self.store.append(entry)
        except Exception as exc:  # the change stands; only its record is lost
            log.warning("config change not recorded in the audit trail: %s", exc)

    async def recent(self, limit: int = 100) -> list[dict[str, Any]]:
        entries = await self.store.audit(AuditQuery(kind=KIND, limit=limit))
        return [e.detail for e in entries]


def now() -> float:
    return round(time.time(), 3)
