"""ReplyDoc -> a Discord message: markdown content (Discord renders it) and button rows. Pure.

A message holds 2,000 characters; the service splits a final answer to `MAX_TEXT_LEN` (room
for the note below it) and a streaming preview longer than that shows its end, so the newest
text is what the user sees until the final splits it into parts.
"""

from __future__ import annotations

from dataclasses import dataclass

from channels.base import Button, ReplyDoc
from channels.text import reply_markdown, truncate

MAX_MESSAGE = 2000
MAX_TEXT_LEN = 1900
MAX_BUTTONS = 25  # 5 rows of 5
LABEL_LIMIT = 80


@dataclass(frozen=True, slots=True)
class Shown:
    """What one message shows: its content and its buttons (label, value)."""

    content: str
    buttons: tuple[Button, ...] = ()


def body(doc: ReplyDoc, *, preview: bool = False) -> str:
    """The visible markdown of a reply: tool steps while working, text, note."""
    content = reply_markdown(doc, f"_{doc.labels.queued_line}_")
    if len(content) <= MAX_MESSAGE:
        return content
    if preview:  # the newest text, as the stream goes on
        return "…" + content[-(MAX_MESSAGE - 1) :]
    return truncate(content, MAX_MESSAGE)


def shown(doc: ReplyDoc, *, preview: bool = False) -> Shown:
    return Shown(body(doc, preview=preview), doc.buttons[:MAX_BUTTONS])


def split(text: str) -> list[str]:
    """Plain text (a command's answer) in messages of at most 2,000 characters."""
    from channels.text import split_text

    return split_text(text, MAX_TEXT_LEN) if text.strip() else ["…"]


def label(button: Button) -> str:
    return truncate(button.label, LABEL_LIMIT) or "?"
