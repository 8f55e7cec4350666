"""Choices waiting for a press, kept by the service so a press is honoured after a restart and on
any worker (the card is sent by the worker that ran the reply; the press reaches the worker that
holds the platform connection).

A channel records a choice when it shows the buttons (`put`: its chat, text and buttons as a JSON
object) and settles it on the first press (`choose`): one atomic step from pending to chosen, so
two presses (a redelivery, two people in a group) cannot both win. `pending` lists the choices
not yet made under a key prefix (approvals, bot/approvals.py). The service implements the
store on its database (SQLite or PostgreSQL, `bot/stores/choices/`); `MemoryChoices` is the
in-process stand-in for contexts without one (tests, benchmarks).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

KEEP_SECONDS = 30 * 86400.0
"""How long a choice is kept: a press on an older card is treated as unknown."""


@dataclass(frozen=True)
class Choice:
    """One choice: `chosen` is None while pending, else the chosen button's index."""

    key: str
    channel: str
    payload: dict[str, Any]
    chosen: int | None = None


class ChoiceStore(Protocol):
    async def put(self, key: str, channel: str, payload: dict[str, Any]) -> None:
        """Record a pending choice (a key already recorded keeps its state)."""
        ...

    async def get(self, key: str) -> Choice | None: ...

    async def choose(self, key: str, index: int) -> Choice | None:
        """Mark the choice made with button `index` if it is still pending. Returns the choice
        as it is afterwards (its `chosen` says which press won); None for an unknown key."""
        ...

    async def pending(self, prefix: str, limit: int = 100) -> list[Choice]:
        """Choices still pending whose key starts with `prefix`, oldest first."""
        ...


class MemoryChoices:
    """A `ChoiceStore` in this process only (lost on restart)."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[Choice, float]] = {}

    async def put(self, key: str, channel: str, payload: dict[str, Any]) -> None:
        now = time.time()
        self._rows = {k: v for k, v in self._rows.items() if v[1] > now - KEEP_SECONDS}
        self._rows.setdefault(key, (Choice(key, channel, dict(payload)), now))

    async def get(self, key: str) -> Choice | None:
        row = self._rows.get(key)
        return row[0] if row else None

    async def choose(self, key: str, index: int) -> Choice | None:
        row = self._rows.get(key)
        if row is None:
            return None
        choice, at = row
        if choice.chosen is None:
            choice = Choice(choice.key, choice.channel, choice.payload, index)
            self._rows[key] = (choice, at)
        return choice

    async def pending(self, prefix: str, limit: int = 100) -> list[Choice]:
        rows = sorted(self._rows.values(), key=lambda row: row[1])
        found = [c for c, _ in rows if c.chosen is None and c.key.startswith(prefix)]
        return found[:limit]
