"""Where access keeps its state: roles given through the admin API, pending `/link` codes (as
hashes), failed `/link` tries, and the append-only audit trail.

One set of statements for both backends on the one statement runner (`agent.sql`): the service's
SQLite database (tables `access_*`) or PostgreSQL (tables `antler_access_*`); the table prefix is
the only difference.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from agent.sql import Sql, put


@dataclass(frozen=True, slots=True)
class AuditEntry:
    kind: str  # tool, denied, link, unlink, role, config, console
    actor: str = ""  # who acted: an account, "admin token", "file"
    person: str = ""  # whom it concerns
    chat: str = ""
    subject: str = ""  # the tool, command, account or key
    outcome: str = "ok"
    duration_ms: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    at: float = 0.0
    id: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "kind": self.kind,
            "actor": self.actor,
            "person": self.person,
            "chat": self.chat,
            "subject": self.subject,
            "outcome": self.outcome,
            "duration_ms": self.duration_ms,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class AuditQuery:
    kind: str | None = None
    person: str | None = None
    chat: str | None = None
    subject: str | None = None
    since: float | None = None
    until: float | None = None
    before_id: int | None = None  # paging: entries older than this id
    limit: int = 50


_AUDIT_COLUMNS = "id, at, kind, actor, person, chat, subject, outcome, duration_ms, detail"


class AccessStore:
    def __init__(self, run: Sql, prefix: str) -> None:
        self.run = run
        self.t = prefix  # "access_" or "antler_access_"

    # roles given through the API --------------------------------------------------------------

    async def _put(self, table: str, key: tuple[str, Any], values: dict[str, Any] | None) -> None:
        """The row of `key` in `table` set to `values`; None deletes it."""
        if values is None:
            await self.run.execute(f"DELETE FROM {self.t}{table} WHERE {key[0]} = ?", (key[1],))
        else:
            await put(self.run, f"{self.t}{table}", key, values)

    async def role(self, person: str) -> str | None:
        row = await self.run.one(f"SELECT role FROM {self.t}roles WHERE person = ?", (person,))
        return str(row[0]) if row else None

    async def set_role(self, person: str, role: str | None, by: str) -> None:
        """Give `person` a role; None takes it back (the config's applies again)."""
        values = None if role is None else {"role": role, "set_by": by, "set_at": time.time()}
        await self._put("roles", ("person", person), values)

    async def roles(self) -> dict[str, str]:
        rows = await self.run.all(f"SELECT person, role FROM {self.t}roles ORDER BY person")
        return {str(p): str(r) for p, r in rows}

    # the language a person chose (/lang) ---------------------------------------------------

    async def language(self, person: str) -> str | None:
        row = await self.run.one(
            f"SELECT locale FROM {self.t}languages WHERE person = ?", (person,)
        )
        return str(row[0]) if row else None

    async def set_language(self, person: str, locale: str | None) -> None:
        """Remember `person`'s language; None forgets it (the platform's hint applies again)."""
        values = None if locale is None else {"locale": locale, "set_at": time.time()}
        await self._put("languages", ("person", person), values)

    # /link codes and tries ----------------------------------------------------------------------

    async def put_code(self, code_hash: str, account: str, expires_at: float) -> None:
        """One pending code per account: a new one replaces the old."""
        await self.run.execute(f"DELETE FROM {self.t}link_codes WHERE account = ?", (account,))
        await self.run.execute(
            f"INSERT INTO {self.t}link_codes(code_hash, account, expires_at) VALUES (?, ?, ?)",
            (code_hash, account, expires_at),
        )

    async def take_code(self, code_hash: str, now: float) -> str | None:
        """The account that asked for the code, once: the code is gone after (or expired)."""
        row = await self.run.one(
            f"SELECT account, expires_at FROM {self.t}link_codes WHERE code_hash = ?",
            (code_hash,),
        )
        if row is None:
            return None
        taken = await self.run.execute(
            f"DELETE FROM {self.t}link_codes WHERE code_hash = ?", (code_hash,)
        )
        return str(row[0]) if taken and float(row[1]) > now else None

    async def tries(self, account: str) -> tuple[int, float]:
        row = await self.run.one(
            f"SELECT failures, locked_until FROM {self.t}link_tries WHERE account = ?",
            (account,),
        )
        return (int(row[0]), float(row[1])) if row else (0, 0.0)

    async def set_tries(self, account: str, failures: int, locked_until: float) -> None:
        clean = failures == 0 and locked_until == 0
        values = None if clean else {"failures": failures, "locked_until": locked_until}
        await self._put("link_tries", ("account", account), values)

    # the audit trail ------------------------------------------------------------------------------

    async def append(self, entry: AuditEntry) -> None:
        await self.run.execute(
            f"INSERT INTO {self.t}audit(at, kind, actor, person, chat, subject, outcome,"
            " duration_ms, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.at or time.time(),
                entry.kind,
                entry.actor,
                entry.person,
                entry.chat,
                entry.subject,
                entry.outcome,
                entry.duration_ms,
                json.dumps(entry.detail, ensure_ascii=False, default=str),
            ),
        )

    async def audit(self, q: AuditQuery) -> list[AuditEntry]:
        """Newest first; `before_id` pages back."""
        where, args = [], []
        for column in ("kind", "person", "chat", "subject"):
            value = getattr(q, column)
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        for column, op, value in (
            ("at", ">=", q.since),
            ("at", "<", q.until),
            ("id", "<", q.before_id),
        ):
            if value is not None:
                where.append(f"{column} {op} ?")
                args.append(value)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = await self.run.all(
            f"SELECT {_AUDIT_COLUMNS} FROM {self.t}audit{clause} ORDER BY id DESC LIMIT ?",
            (*args, q.limit),
        )
        return [_entry(r) for r in rows]

    async def prune(self, older_than: float) -> int:
        """Drop audit entries before `older_than` (the retention setting)."""
        return await self.run.execute(f"DELETE FROM {self.t}audit WHERE at < ?", (older_than,))


def _entry(row: tuple[Any, ...]) -> AuditEntry:
    id_, at, kind, actor, person, chat, subject, outcome, duration, detail = row
    return AuditEntry(
        id=int(id_),
        at=float(at),
        kind=str(kind),
        actor=str(actor),
        person=str(person),
        chat=str(chat),
        subject=str(subject),
        outcome=str(outcome),
        duration_ms=float(duration) if duration is not None else None,
        detail=json.loads(detail) if detail else {},
    )
