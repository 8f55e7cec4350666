"""Exactly one answer per message: a persistent record of every accepted platform event.

A message is `accepted` when recorded (before the platform is told so, where the protocol allows)
and `done` once answered. Redeliveries within the window are recognised; accepted-but-unanswered
messages are found again at start-up.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from dataclasses import asdict
from typing import Any

from channels.base import Attachment, ChatRef, InboundMessage, UserRef

log = logging.getLogger("bot.ledger")


def event_key(msg: InboundMessage) -> str:
    return f"{msg.chat.channel}:{msg.event_id}"


class Ledger:
    def __init__(self, db: sqlite3.Connection, window_hours: float) -> None:
        self.db = db
        self.window = window_hours * 3600

    def accept(self, msg: InboundMessage) -> bool:
        """Record `msg`; False when the same event was already recorded within the window."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO inbox(key, channel, state, received_at, payload)"
            " VALUES (?, ?, 'accepted', ?, ?)",
            (event_key(msg), msg.chat.channel, time.time(), _dump(msg)),
        )
        return cur.rowcount == 1

    def forget(self, msg: InboundMessage) -> None:
        """Drop the record, so a redelivery of the same event is taken again."""
        self.db.execute("DELETE FROM inbox WHERE key = ?", (event_key(msg),))

    def done(self, msg: InboundMessage) -> None:
        self.db.execute(
            "UPDATE inbox SET state = 'done', payload = '' WHERE key = ?", (event_key(msg),)
        )

    def pending(self) -> list[InboundMessage]:
        """Messages accepted but never answered (the process stopped in between)."""
        rows = self.db.execute(
            "SELECT key, payload FROM inbox WHERE state = 'accepted' ORDER BY received_at"
        ).fetchall()
        found = []
        for key, payload in rows:
            try:
                found.append(_load(payload))
            except (ValueError, KeyError, TypeError):
                log.warning("ledger: unreadable pending entry %s dropped", key)
                self.db.execute("UPDATE inbox SET state = 'done' WHERE key = ?", (key,))
        return found

    def prune(self, now: float | None = None) -> int:
        cutoff = (now or time.time()) - self.window
        cur = self.db.execute(
            "DELETE FROM inbox WHERE received_at < ? AND state = 'done'", (cutoff,)
        )
        return cur.rowcount

    def count(self, state: str) -> int:
        (n,) = self.db.execute("SELECT COUNT(*) FROM inbox WHERE state = ?", (state,)).fetchone()
        return int(n)


def _dump(msg: InboundMessage) -> str:
    data = asdict(msg)
    try:
        json.dumps(data["raw"])
    except (TypeError, ValueError):
        data["raw"] = {}
    return json.dumps(data, default=str)


def _load(payload: str) -> InboundMessage:
    data: dict[str, Any] = json.loads(payload)
    data["chat"] = ChatRef(**data["chat"])
    data["sender"] = UserRef(**data["sender"])
    data["attachments"] = tuple(Attachment(**a) for a in data["attachments"])
    return InboundMessage(**data)
