"""The one audit trail: tool calls, denials, links, role and configuration changes, console
actions. Who, when, what: arguments as a digest with secrets redacted, never a secret.

Appends go to the access store (append-only; `prune` drops what is older than
`access.audit.retention_days`, at most once an hour). Tool calls arrive from the agent as
`ToolUse` (a synchronous callback on the run's path): they are written on a task of their own,
so the audit never slows or breaks a run. /metrics counts them without person labels.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from agent.grant import ToolUse
from bot.access.store import AccessStore, AuditEntry
from bot.metrics import Metrics

log = logging.getLogger("bot.access.audit")

PRUNE_EVERY = 3600.0
MAX_ARG_CHARS = 200
REDACTED = "[redacted]"
_SECRET_KEY = re.compile(
    r"token|secret|passw|api[_-]?key|authori[sz]ation|cookie|credential|private[_-]?key|signature",
    re.IGNORECASE,
)
_SECRET_VALUE = re.compile(
    r"\b(?:sk-[\w-]{8,}|xox[abposr]-[\w-]{8,}|xapp-[\w-]{8,}|gh[pousr]_\w{16,}|"
    r"AKIA[0-9A-Z]{16}|Bearer\s+[\w.~+/-]{8,})",
)


def redact(value: Any, known: Callable[[str], str] = str) -> Any:
    """`value` with secret-looking keys and values replaced, long strings cut."""
    if isinstance(value, dict):
        return {
            str(k): REDACTED if _SECRET_KEY.search(str(k)) else redact(v, known)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v, known) for v in value]
    if isinstance(value, str):
        text = _SECRET_VALUE.sub(REDACTED, known(value))
        return text if len(text) <= MAX_ARG_CHARS else text[:MAX_ARG_CHARS] + "…"
    return value


def digest(args: dict[str, Any], known: Callable[[str], str] = str) -> dict[str, Any]:
    """What the audit keeps of a call's arguments: redacted, cut, and a hash of the whole."""
    whole = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    return {
        "args": redact(args, known),
        "sha256": hashlib.sha256(whole.encode()).hexdigest()[:16],
    }


class Audit:
    def __init__(
        self,
        store: AccessStore,
        metrics: Metrics,
        retention_days: Callable[[], float],
        known_secrets: Callable[[str], str] = str,
    ) -> None:
        self.store = store
        self.metrics = metrics
        self.retention_days = retention_days
        self.known_secrets = known_secrets  # masks the configured secrets (bot/logs.py)
        self._tasks: set[asyncio.Task[None]] = set()
        self._pruned = 0.0

    async def record(self, entry: AuditEntry) -> None:
        try:
            await self.store.append(entry)
            await self._maybe_prune()
        except Exception as exc:  # the database is away: the action stands, its record is lost
            log.warning("audit entry %s/%s not written: %s", entry.kind, entry.subject, exc)

    def spawn(self, entry: AuditEntry) -> None:
        """Record without waiting (from synchronous code on a run's path)."""
        self._start(self.record(entry))

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def denied(self, kind: str, person: str, chat: str, subject: str, role: str) -> None:
        self.metrics.access_denied.labels(kind=kind).inc()
        self.spawn(
            AuditEntry(
                kind="denied",
                actor=person,
                person=person,
                chat=chat,
                subject=subject,
                outcome=kind,
                detail={"role": role},
            )
        )

    def tool_used(self, use: ToolUse, person: Callable[[str], Awaitable[str]]) -> None:
        """Count the call now; write its entry (under the account's person) on a task."""
        self.metrics.tool_calls.labels(tool=_tool(use), outcome=use.outcome).inc()
        if use.outcome == "denied":
            self.metrics.access_denied.labels(kind="tool").inc()

        async def write() -> None:
            try:
                who = await person(use.user_id)
            except Exception:  # the links are away: the account stands for the person
                who = use.user_id
            await self.record(self._tool_entry(use, who))

        self._start(write())

    def _tool_entry(self, use: ToolUse, person: str) -> AuditEntry:
        return AuditEntry(
            kind="denied" if use.outcome == "denied" else "tool",
            actor=person,
            person=person,
            chat=use.chat,
            subject=_tool(use),
            outcome="tool" if use.outcome == "denied" else use.outcome,
            duration_ms=use.duration_ms,
            detail={
                **digest(use.args, self.known_secrets),
                "role": use.role,
                "account": use.user_id,
                "thread": use.thread_id,
            },
        )

    async def drain(self) -> None:
        """Wait for the entries on their way (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _maybe_prune(self) -> None:
        now = time.time()
        if now - self._pruned < PRUNE_EVERY:
            return
        self._pruned = now
        removed = await self.store.prune(now - self.retention_days() * 86400)
        if removed:
            log.info("audit: %d entries past their retention removed", removed)


def _tool(use: ToolUse) -> str:
    return f"{use.server}:{use.tool}" if use.server else use.tool
