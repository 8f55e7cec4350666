"""Inline keyboards. A button's value travels as callback_data (1-64 bytes) behind a marker that
says it is ours; longer values are kept here under a short token (lost on restart: the press then
asks the user to type it). Data without the marker (forged, or another bot's) is never a value."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from channels.base import Button

TOKEN_PREFIX = "\x1fb:"
VALUE_PREFIX = "\x1fv:"
MAX_DATA = 64
KEEP = 2048


class ButtonTokens:
    """Maps button values to callback_data and back."""

    def __init__(self) -> None:
        self._values: OrderedDict[str, str] = OrderedDict()
        self._next = 0

    def data_for(self, value: str) -> str:
        data = VALUE_PREFIX + value
        if len(data.encode()) <= MAX_DATA:
            return data
        self._next += 1
        token = f"{TOKEN_PREFIX}{self._next}"
        self._values[token] = value
        while len(self._values) > KEEP:
            self._values.popitem(last=False)
        return token

    def value_of(self, data: str) -> str | None:
        """The button's value; None for a token this process no longer knows or foreign data."""
        if data.startswith(TOKEN_PREFIX):
            return self._values.get(data)
        if data.startswith(VALUE_PREFIX):
            return data.removeprefix(VALUE_PREFIX) or None
        return None

    def keyboard(self, buttons: Sequence[Button]) -> InlineKeyboardMarkup:
        """Short labels two per row, long labels one per row."""
        rows: list[list[InlineKeyboardButton]] = []
        for button in buttons:
            key = InlineKeyboardButton(button.label, callback_data=self.data_for(button.value))
            if rows and len(rows[-1]) == 1 and len(button.label) <= 16 and _short(rows[-1][0]):
                rows[-1].append(key)
            else:
                rows.append([key])
        return InlineKeyboardMarkup(rows)


def _short(button: InlineKeyboardButton) -> bool:
    return len(button.text) <= 16
