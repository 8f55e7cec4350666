"""The delivery journal: what became of every accepted platform message, durably.

One row per inbound message (keyed by channel and the platform's own event id), a small state
machine:

    accepted ──▶ running ──▶ delivering ──▶ delivered
        │           │             │
        └───────────┴─────────────┴──────▶ failed (reason; whether the user was told)

- `accepted`: recorded at admission; a redelivery of the same event is recognised by the key.
- `running`: the agent works on it; `attempts` counts runs (across restarts), the reply's
  platform handle (message/card/draft ids) is kept as soon as it exists.
- `delivering`: the final document is stored and being sent; `parts_done` counts the final's
  parts and files already out, so a restart continues after them instead of sending them again.
- `delivered` / `failed`: settled. The row stays for the dedupe window, without its payload.

`Journal` is the interface the service uses (async, so a database server fits behind it);
`SqlJournal` its rules, written once over a dialect (agent/sql.py); the backends are
`sqlite.SqliteJournal` (table `journal`, bot/db.py) and `postgres.PostgresJournal`.
"""

from __future__ import annotations

import enum
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Protocol

from agent.sql import Sql
from channels.base import Attachment, ChatRef, Edit, InboundMessage, UserRef

log = logging.getLogger("bot.journal")


class State(enum.StrEnum):
    accepted = "accepted"
    running = "running"
    delivering = "delivering"
    delivered = "delivered"
    failed = "failed"


UNSETTLED = (State.accepted, State.running, State.delivering)


def event_key(msg: InboundMessage) -> str:
    return f"{msg.chat.channel}:{msg.event_id}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal row as the service reads it back."""

    key: str
    state: State
    attempts: int = 0
    handle: Mapping[str, Any] | None = None
    final: Mapping[str, Any] | None = None
    parts_done: int = 0
    sending: bool = False
    reason: str = ""
    told: bool = False
    received_at: float = 0.0
    updated_at: float = 0.0
    msg: InboundMessage | None = None


class Journal(Protocol):
    """The delivery journal's interface; every state change of a message goes through it."""

    async def accept(self, msg: InboundMessage) -> bool:
        """Record `msg` as accepted; False when the same event is already recorded."""
        ...

    async def forget(self, msg: InboundMessage) -> None:
        """Drop the record (admission refused), so the platform's redelivery is taken later."""
        ...

    async def start(self, msg: InboundMessage) -> int:
        """Mark running and count the attempt; returns the attempts so far (this one included)."""
        ...

    async def give_back(self, msg: InboundMessage) -> None:
        """The attempt `start` counted ended because another worker took the message over
        (this one had paused past its lease): no failure, so it does not count toward giving
        up (only the attempts a crash or an error ended do)."""
        ...

    async def keep_handle(self, msg: InboundMessage, handle: Mapping[str, Any]) -> None:
        """Remember where the reply lives on the platform (ids only, JSON-able)."""
        ...

    async def delivering(self, msg: InboundMessage, final: Mapping[str, Any]) -> None:
        """The final document (JSON-able) is about to be sent."""
        ...

    async def part_sending(self, msg: InboundMessage, sending: bool = True) -> None:
        """The next part/file of the final is on its way (a crash now leaves it in doubt), or,
        with `sending=False`, the platform refused it (a crash now leaves no doubt)."""
        ...

    async def part_done(
        self, msg: InboundMessage, parts_done: int, handle: Mapping[str, Any] | None
    ) -> None:
        """`parts_done` parts/files of the final are out; `handle` as it is now."""
        ...

    async def delivered(self, msg: InboundMessage, reason: str = "") -> None: ...

    async def failed(self, msg: InboundMessage, reason: str, *, told: bool) -> None: ...

    async def entry(self, msg: InboundMessage) -> Entry | None: ...

    async def unsettled(self) -> list[Entry]:
        """Messages accepted but not settled (the process stopped in between), oldest first.
        On a database several processes share: only those of processes that are gone, which
        this one takes over."""
        ...

    async def own_unsettled(self) -> list[Entry]:
        """Messages this process accepted or runs and has not settled, oldest first (all of
        them on a database of one process): what goes back into a bus that lost its data."""
        ...

    async def hand_over(self, msgs: list[InboundMessage]) -> int:
        """Messages this process accepted and cannot pass on (its line to Redis is cut): left
        for any live process to take up (`unsettled`); how many were still its own to give."""
        ...

    async def recent(self, limit: int = 50, state: str | None = None) -> list[Entry]: ...

    async def count(self, state: str) -> int: ...

    async def prune(self, now: float | None = None) -> int:
        """Forget settled rows older than the dedupe window."""
        ...


TABLE = """
    key TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    handle TEXT NOT NULL DEFAULT '',
    final TEXT NOT NULL DEFAULT '',
    parts_done INTEGER NOT NULL DEFAULT 0,
    sending $bool NOT NULL DEFAULT $false,
    reason TEXT NOT NULL DEFAULT '',
    told $bool NOT NULL DEFAULT $false,
    received_at $real NOT NULL,
    updated_at $real NOT NULL,
    payload TEXT NOT NULL DEFAULT ''"""  # the journal's columns (bot/stores/schema.py)
COLUMNS = (
    "key, state, attempts, handle, final, parts_done, sending, reason, told,"
    " received_at, updated_at, payload"
)
UNSETTLED_SQL = "('accepted', 'running', 'delivering')"


class SqlJournal:
    """The journal's rules over a dialect (`Sql`): the backends (sqlite.py, postgres.py) name
    the table and say how rows are claimed (`_claim`, `_ours`, `_take`, `_unsettled_rows`)."""

    table = "journal"

    def __init__(self, sql: Sql, window_hours: float) -> None:
        self.sql = sql
        self.window = window_hours * 3600

    async def accept(self, msg: InboundMessage) -> bool:
        now, key, extra = time.time(), event_key(msg), self._claim()
        inserted = await self.sql.execute(
            f"INSERT INTO {self.table}(key, channel, state, received_at, updated_at, payload"
            f"{''.join(', ' + c for c in extra)}) VALUES (?, ?, 'accepted', ?, ?, ?"
            f"{', ?' * len(extra)}) ON CONFLICT (key) DO NOTHING",
            (key, msg.chat.channel, now, now, dump_message(msg), *extra.values()),
        )
        return inserted == 1 or await self._ours(key, extra)

    async def forget(self, msg: InboundMessage) -> None:
        await self.sql.execute(f"DELETE FROM {self.table} WHERE key = ?", (event_key(msg),))

    async def start(self, msg: InboundMessage) -> int:
        key, (take, args) = event_key(msg), self._take()
        row = await self.sql.one(
            f"UPDATE {self.table} SET state = 'running', attempts = attempts + 1,"
            f" updated_at = ?{take} WHERE key = ? AND state IN {UNSETTLED_SQL}"
            " RETURNING attempts",
            (time.time(), *args, key),
        )
        if row is None:
            row = await self.sql.one(f"SELECT attempts FROM {self.table} WHERE key = ?", (key,))
        return int(row[0]) if row else 1

    async def give_back(self, msg: InboundMessage) -> None:
        await self.sql.execute(
            f"UPDATE {self.table} SET attempts = attempts - 1 WHERE key = ? AND attempts > 0",
            (event_key(msg),),
        )

    async def keep_handle(self, msg: InboundMessage, handle: Mapping[str, Any]) -> None:
        await self._set(msg, handle=json.dumps(handle))

    async def delivering(self, msg: InboundMessage, final: Mapping[str, Any]) -> None:
        await self._set(
            msg, state=State.delivering.value, final=json.dumps(final), parts_done=0, sending=False
        )

    async def part_sending(self, msg: InboundMessage, sending: bool = True) -> None:
        await self._set(msg, sending=sending)

    async def part_done(
        self, msg: InboundMessage, parts_done: int, handle: Mapping[str, Any] | None
    ) -> None:
        if handle is None:
            await self._set(msg, parts_done=parts_done, sending=False)
        else:
            await self._set(msg, parts_done=parts_done, sending=False, handle=json.dumps(handle))

    async def delivered(self, msg: InboundMessage, reason: str = "") -> None:
        await self._set(msg, state=State.delivered.value, reason=reason, payload="", final="")

    async def failed(self, msg: InboundMessage, reason: str, *, told: bool) -> None:
        await self._set(
            msg, state=State.failed.value, reason=reason, told=told, payload="", final=""
        )

    async def entry(self, msg: InboundMessage) -> Entry | None:
        row = await self.sql.one(
            f"SELECT {COLUMNS} FROM {self.table} WHERE key = ?", (event_key(msg),)
        )
        return entry_from_row(row) if row else None

    async def unsettled(self) -> list[Entry]:
        return await self._entries(await self._unsettled_rows())

    async def own_unsettled(self) -> list[Entry]:
        return await self._entries(await self._own_unsettled_rows())

    async def hand_over(self, msgs: list[InboundMessage]) -> int:
        return 0  # one process: nobody to hand them to (the backends with several say how)

    async def _entries(self, rows: list[tuple[Any, ...]]) -> list[Entry]:
        found = []
        for row in rows:
            entry = entry_from_row(row)
            if entry.msg is None:
                log.warning("journal: unreadable entry %s settled as failed", entry.key)
                await self.sql.execute(
                    f"UPDATE {self.table} SET state = 'failed', reason = 'unreadable'"
                    " WHERE key = ?",
                    (entry.key,),
                )
                continue
            found.append(entry)
        return found

    async def recent(self, limit: int = 50, state: str | None = None) -> list[Entry]:
        where, args = ("WHERE state = ?", (state, limit)) if state else ("", (limit,))
        rows = await self.sql.all(
            f"SELECT {COLUMNS} FROM {self.table} {where} ORDER BY updated_at DESC LIMIT ?", args
        )
        return [entry_from_row(row) for row in rows]

    async def count(self, state: str) -> int:
        row = await self.sql.one(f"SELECT COUNT(*) FROM {self.table} WHERE state = ?", (state,))
        return int(row[0]) if row else 0

    async def prune(self, now: float | None = None) -> int:
        cutoff = (now or time.time()) - self.window
        return await self.sql.execute(
            f"DELETE FROM {self.table} WHERE received_at < ? AND state IN ('delivered', 'failed')",
            (cutoff,),
        )

    async def _set(self, msg: InboundMessage, **values: Any) -> None:
        values["updated_at"] = time.time()
        assignments = ", ".join(f"{column} = ?" for column in values)
        await self.sql.execute(
            f"UPDATE {self.table} SET {assignments} WHERE key = ?",
            (*values.values(), event_key(msg)),
        )

    # what the backends spell their own way (here: one process owns every row) --------------

    def _claim(self) -> dict[str, Any]:
        """Extra columns (and their values) an accepted row carries."""
        return {}

    async def _ours(self, key: str, claim: dict[str, Any]) -> bool:
        """Whether a row found at `key` is this process's own insert (answer lost, retried)."""
        return False

    def _take(self) -> tuple[str, tuple[Any, ...]]:
        """Extra assignments (and values) when this process starts running a row."""
        return "", ()

    async def _unsettled_rows(self) -> list[tuple[Any, ...]]:
        """The unsettled rows this process takes up, oldest first."""
        return await self.sql.all(
            f"SELECT {COLUMNS} FROM {self.table} WHERE state IN {UNSETTLED_SQL}"
            " ORDER BY received_at"
        )

    async def _own_unsettled_rows(self) -> list[tuple[Any, ...]]:
        """The unsettled rows of this process, oldest first (one process: all of them)."""
        return await self._unsettled_rows()


def entry_from_row(row: tuple[Any, ...]) -> Entry:
    (
        key,
        state,
        attempts,
        handle,
        final,
        parts_done,
        sending,
        reason,
        told,
        received,
        updated,
        payload,
    ) = row
    msg = None
    if payload:
        try:
            msg = load_message(payload)
        except (ValueError, KeyError, TypeError):
            msg = None
    return Entry(
        key=key,
        state=State(state),
        attempts=int(attempts),
        handle=json.loads(handle) if handle else None,
        final=json.loads(final) if final else None,
        parts_done=int(parts_done),
        sending=bool(sending),
        reason=reason or "",
        told=bool(told),
        received_at=received,
        updated_at=updated,
        msg=msg,
    )


_MESSAGE_FIELDS = tuple(f.name for f in fields(InboundMessage))
_FIELDS = {
    kind: tuple(f.name for f in fields(kind)) for kind in (ChatRef, UserRef, Attachment, Edit)
}


def _shallow(value: Any) -> dict[str, Any]:
    """A message part's fields (plain values and tuples of them: JSON writes them as `asdict`
    would have copied them)."""
    names = _FIELDS.get(type(value)) or tuple(f.name for f in fields(value))
    return {name: getattr(value, name) for name in names}


def dump_message(msg: InboundMessage) -> str:
    """The message as JSON: what `asdict` gives, without its deep copy of every field (a
    message is written once per turn); anything JSON does not take goes the slow way below."""
    data: dict[str, Any] = {name: getattr(msg, name) for name in _MESSAGE_FIELDS}
    data["chat"], data["sender"] = _shallow(msg.chat), _shallow(msg.sender)
    data["attachments"] = [_shallow(a) for a in msg.attachments]
    if msg.edit is not None:
        data["edit"] = _shallow(msg.edit)
    try:
        return json.dumps(data)
    except (TypeError, ValueError):
        return _dump_odd_message(msg)


def _dump_odd_message(msg: InboundMessage) -> str:
    data = asdict(msg)
    try:
        json.dumps(data["raw"])
    except (TypeError, ValueError):
        data["raw"] = {}
    return json.dumps(data, default=str)


def load_message(payload: str) -> InboundMessage:
    data: dict[str, Any] = json.loads(payload)
    data["chat"] = ChatRef(**data["chat"])
    data["sender"] = UserRef.from_json(data["sender"])
    data["attachments"] = tuple(Attachment(**a) for a in data["attachments"])
    if data.get("edit"):
        data["edit"] = Edit(**data["edit"])
    return InboundMessage(**data)
