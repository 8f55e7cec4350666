"""Choices waiting for a press (`channels.choices.ChoiceStore`): one row per choice, the channel's
JSON payload and, once pressed, the chosen button's index. The first press wins in one UPDATE
(`chosen IS NULL`); rows older than `KEEP_SECONDS` are dropped when a new choice is recorded.
Backends: `sqlite.py` (the service's SQLite file, table `choices`), `postgres.py` (table
`antler_choices`, shared by every process: the worker that sent a card and the one that receives
its press may differ).
"""

from __future__ import annotations

import json
from typing import Any

from channels.choices import Choice


def choice_from_row(row: tuple[Any, ...]) -> Choice:
    key, channel, payload, chosen = row
    data = json.loads(payload) if isinstance(payload, str) else payload
    return Choice(key, channel, data if isinstance(data, dict) else {}, chosen)


def payload_text(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)
