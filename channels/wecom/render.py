"""ReplyDoc -> the markdown a WeCom message shows (a stream frame's content, a push). Pure.

A message holds 20,480 bytes of UTF-8. The service splits a final answer to `MAX_TEXT_LEN`
characters (5,000: four bytes each still fit, with room for the note); a streaming preview
longer than a message shows its end, so the newest text is what the person sees.
"""

from __future__ import annotations

from channels.base import ReplyDoc
from channels.text import reply_markdown, split_text

MAX_BYTES = 20480
MAX_TEXT_LEN = 5000


def body(doc: ReplyDoc, *, preview: bool = False) -> str:
    """The visible markdown of a reply: tool steps while working, text, note."""
    return fit(reply_markdown(doc, f"⏳ {doc.labels.queued_line}", emphasis="*"), tail=preview)


def fit(content: str, *, tail: bool = False) -> str:
    """`content` within a message's bytes: its end (`tail`) or its beginning, marked `…`."""
    data = content.encode()
    if len(data) <= MAX_BYTES:
        return content
    room = MAX_BYTES - len("…".encode())
    if tail:
        return "…" + data[-room:].decode(errors="ignore")
    return data[:room].decode(errors="ignore") + "…"


def split(text: str) -> list[str]:
    """Plain text (a command's answer) in messages that fit."""
    return [fit(p) for p in split_text(text, MAX_TEXT_LEN)] if text.strip() else ["…"]
