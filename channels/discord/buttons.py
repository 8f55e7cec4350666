"""Buttons (message components) for any choice: /models, a clarification, an approval card.

A button's value travels in its custom_id (up to 100 characters) behind a marker that says it
is ours. A longer value is kept in the service's choice store (channels/choices.py) under the
message's key, so a press is honoured after a restart and on whichever worker holds the
gateway connection; the custom_id then names the key and the button's index.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import discord

from channels.base import Button
from channels.choices import ChoiceStore
from channels.discord.render import label

VALUE = "av:"
CHOICE = "ac:"
MAX_ID = 100
PER_ROW = 5


async def view(
    buttons: Sequence[Button], choices: ChoiceStore, channel: str = "discord"
) -> discord.ui.View | None:
    """A finished (never stored) view: presses arrive as interactions the channel handles."""
    if not buttons:
        return None
    key = ""
    if any(len(VALUE + b.value) > MAX_ID for b in buttons):
        values = [b.value for b in buttons]
        key = hashlib.sha256(json.dumps(values).encode()).hexdigest()[:32]
        await choices.put(key, channel, {"values": values})
    out = discord.ui.View(timeout=None)
    for index, button in enumerate(buttons):
        custom_id = VALUE + button.value
        if key and len(custom_id) > MAX_ID:
            custom_id = f"{CHOICE}{key}:{index}"
        out.add_item(
            discord.ui.Button(
                label=label(button), custom_id=custom_id, row=min(index // PER_ROW, 4)
            )
        )
    out.stop()  # nothing to dispatch in discord.py: the channel reads the press itself
    return out


async def value_of(custom_id: str, choices: ChoiceStore) -> str | None:
    """The pressed button's value; None for data that is not ours or a choice now unknown."""
    if custom_id.startswith(VALUE):
        return custom_id.removeprefix(VALUE) or None
    if not custom_id.startswith(CHOICE):
        return None
    key, _, index = custom_id.removeprefix(CHOICE).rpartition(":")
    choice = await choices.get(key)
    values = choice.payload.get("values") if choice else None
    if not isinstance(values, list) or not index.isdigit() or int(index) >= len(values):
        return None
    return str(values[int(index)])
