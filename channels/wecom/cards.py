"""Template cards with buttons for any choice: /models, a clarification, an approval card.

A `button_interaction` card holds at most 6 buttons, so a longer list goes out as several cards.
Each card has a fresh `task_id` (WeCom refuses a task id used before) under which the service's
choice store (channels/choices.py) keeps the buttons' values and the card itself; a button's
key is its index. A press arrives as a `template_card_event` naming the task id and the key,
on whichever worker holds the connection, after a restart too; the card is then updated (within
WeCom's 5 seconds) to show what was chosen in place of its buttons.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from channels.base import Button
from channels.choices import ChoiceStore
from channels.text import truncate

PER_CARD = 6
TITLE_LIMIT = 26
DESC_LIMIT = 120
LABEL_LIMIT = 40  # WeCom advises short labels (about 10 characters); not a hard limit
CHOSEN = "✓ {label}"


def _card(title: str, buttons: Sequence[Button], task_id: str) -> dict[str, Any]:
    return {
        "card_type": "button_interaction",
        "main_title": {"title": truncate(title, TITLE_LIMIT) or "Antler"},
        "task_id": task_id,
        "button_list": [
            {"text": truncate(b.label, LABEL_LIMIT) or "?", "style": 1, "key": str(index)}
            for index, b in enumerate(buttons)
        ],
    }


async def cards_for(
    buttons: Sequence[Button], title: str, choices: ChoiceStore
) -> list[dict[str, Any]]:
    """The cards showing `buttons` (six a card), each recorded in the choice store."""
    out = []
    for start in range(0, len(buttons), PER_CARD):
        group = list(buttons[start : start + PER_CARD])
        task_id = f"antler-{secrets.token_hex(12)}"
        card = _card(title, group, task_id)
        payload = {"values": [b.value for b in group], "labels": [b.label for b in group]}
        await choices.put(task_id, "wecom", {**payload, "card": card})
        out.append(card)
    return out


async def pressed(
    task_id: str, key: str, choices: ChoiceStore
) -> tuple[str, dict[str, Any]] | None:
    """The pressed button's value and its card updated to show the choice; None when the
    card is unknown (another bot's, or older than the store keeps)."""
    choice = await choices.get(task_id) if task_id else None
    if choice is None or not key.isdigit():
        return None
    values, labels = choice.payload.get("values"), choice.payload.get("labels")
    card = choice.payload.get("card")
    if not isinstance(values, list) or not isinstance(labels, list) or int(key) >= len(values):
        return None
    updated = dict(card) if isinstance(card, dict) else _card("Antler", [], task_id)
    updated["replace_text"] = truncate(CHOSEN.format(label=labels[int(key)]), LABEL_LIMIT)
    return str(values[int(key)]), updated


def title_of(text: str) -> str:
    """A card's title: the first line of the message it belongs to."""
    first = next((line.strip("#*_ ") for line in text.splitlines() if line.strip()), "")
    return first or "Antler"
