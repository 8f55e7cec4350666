"""One place settles a message: `bot/settle.py` decides the final journal state of every outcome."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot.db import open_db
from bot.metrics import Metrics
from bot.settle import Settle
from bot.stores.journal import State
from bot.stores.journal.sqlite import SqliteJournal
from channels.base import ChannelError, DeliveryRefused, InboundMessage
from tests.bot.test_journal import message

ROOT = Path(__file__).resolve().parents[2]


async def settled(tmp_path: Path, how: str) -> tuple[State, str, bool]:
    j = SqliteJournal(open_db(tmp_path), window_hours=24)
    msg: InboundMessage = message()
    await j.accept(msg)
    await j.start(msg)
    settle = Settle(j, Metrics())
    outcomes = {
        "done": lambda: settle.answered(msg, "done"),
        "failed": lambda: settle.answered(msg, "failed", "model down"),
        "cancelled": lambda: settle.answered(msg, "cancelled"),
        "stopped": lambda: settle.stopped(msg),
        "refused": lambda: settle.undeliverable("telegram", msg, DeliveryRefused("bot blocked")),
        "error": lambda: settle.undeliverable("telegram", msg, ChannelError("bad request")),
        "gave up": lambda: settle.gave_up("telegram", msg, told=True),
        "no channel": lambda: settle.unanswered(msg, "channel not running"),
    }
    await outcomes[how]()
    entry = await j.entry(msg)
    assert entry is not None
    return entry.state, entry.reason, entry.told


@pytest.mark.parametrize(
    ("how", "state", "reason", "told"),
    [
        ("done", State.delivered, "", False),
        ("failed", State.failed, "model down", True),
        ("cancelled", State.delivered, "stopped", False),
        ("stopped", State.delivered, "stopped", False),
        ("refused", State.failed, "bot blocked", False),
        ("error", State.failed, "bad request", False),
        ("gave up", State.failed, "failed twice", True),
        ("no channel", State.failed, "channel not running", False),
    ],
)
async def test_each_outcome_settles_one_way(
    tmp_path: Path, how: str, state: State, reason: str, told: bool
) -> None:
    assert await settled(tmp_path, how) == (state, reason, told)


def test_only_settle_marks_a_message_delivered_or_failed() -> None:
    """No other module calls the journal's `delivered` or `failed`."""
    offenders = []
    for path in sorted((ROOT / "bot").rglob("*.py")):
        if path.name in ("settle.py", "journal.py") or path.parent.name == "stores":
            continue  # the state machine itself and its implementations
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("delivered", "failed")
                and "journal" in ast.unparse(node.value)
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
