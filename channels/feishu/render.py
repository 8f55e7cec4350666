"""ReplyDoc -> Feishu cards. Pure: builds the card JSON and splits answers across cards.

Two card flavours: a JSON 2.0 card for CardKit streaming (elements addressed by `element_id`)
and a JSON 1.0 interactive card for the patch fallback (`update_multi` so it can be patched).
Both show a header with the reply's state, the tool progress, the answer and any buttons.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from channels.base import Button, ChatRef, ReplyDoc, ToolStep
from channels.markdown import parser
from channels.text import split_text

PROGRESS_ID = "progress"
ANSWER_ID = "answer"
CARD_MAX_BYTES = 24_000  # Feishu allows ~30 KB of card JSON; leave room for the frame
CARD_MAX_TABLES = 5
CARD_MAX_CHARS = 12_000

_COLOURS = {
    "queued": "grey",
    "working": "blue",
    "done": "green",
    "failed": "red",
    "cancelled": "grey",
}
_STEP_ICON = {"running": "⏳", "done": "✅", "failed": "❌"}


@dataclass(frozen=True, slots=True)
class ButtonScope:
    """Where a button press should land: carried in the button's value."""

    chat_type: str
    topic: str | None
    main: bool = False  # the reply answers a command sent in the main chat


def header(doc: ReplyDoc, part: int = 0) -> dict[str, Any]:
    title = doc.labels.title(doc.status)
    if part:
        title = f"{title} ({doc.labels.part.format(number=part + 1)})"
    return {"title": {"tag": "plain_text", "content": title}, "template": _COLOURS[doc.status]}


def progress_md(steps: tuple[ToolStep, ...], note: str = "") -> str:
    lines = [f"{_STEP_ICON.get(s.state, '•')} {s.label}" for s in steps]
    if note:
        lines.append(f"_{note}_")
    return "\n".join(lines)


def answer_md(doc: ReplyDoc, text: str) -> str:
    if text:
        return text
    shown = {"queued": doc.labels.queued_line, "working": doc.labels.working}.get(doc.status)
    return f"_{shown}_" if shown else ""


def _button_value(button: Button, scope: ButtonScope) -> dict[str, Any]:
    value = {"cmd": button.value, "chat_type": scope.chat_type, "topic": scope.topic or ""}
    return value | {"main": True} if scope.main else value


def scope_of(chat: ChatRef, main: bool = False) -> ButtonScope:
    return ButtonScope(chat_type=chat.chat_type, topic=chat.topic_id, main=main)


def _buttons_v2(buttons: tuple[Button, ...], scope: ButtonScope) -> list[dict[str, Any]]:
    return [
        {
            "tag": "button",
            "text": {"tag": "plain_text", "content": b.label},
            "type": "default",
            "behaviors": [{"type": "callback", "value": _button_value(b, scope)}],
        }
        for b in buttons
    ]


def cardkit_card(
    doc: ReplyDoc, text: str, scope: ButtonScope, *, streaming: bool, part: int = 0
) -> dict[str, Any]:
    """A JSON 2.0 card whose progress and answer elements CardKit can stream into."""
    elements: list[dict[str, Any]] = [
        {
            "tag": "markdown",
            "element_id": PROGRESS_ID,
            "content": progress_md(doc.progress, doc.note),
        },
        {"tag": "markdown", "element_id": ANSWER_ID, "content": answer_md(doc, text)},
    ]
    if doc.final:
        elements += _buttons_v2(doc.buttons, scope)
    config: dict[str, Any] = {"update_multi": True, "streaming_mode": streaming}
    if streaming:
        config["streaming_config"] = {
            "print_frequency_ms": {"default": 30},
            "print_step": {"default": 2},
        }
    return {
        "schema": "2.0",
        "config": config,
        "header": header(doc, part),
        "body": {"elements": elements},
    }


def patch_card(doc: ReplyDoc, text: str, scope: ButtonScope, *, part: int = 0) -> dict[str, Any]:
    """A JSON 1.0 interactive card for the patch fallback (`update_multi` allows patching)."""
    elements: list[dict[str, Any]] = []
    progress = progress_md(doc.progress, doc.note)
    if progress:
        elements += [{"tag": "markdown", "content": progress}, {"tag": "hr"}]
    elements.append({"tag": "markdown", "content": answer_md(doc, text) or " "})
    if doc.final and doc.buttons:
        elements.append(
            {
                "tag": "action",
                "actions": [
                    {
                        "tag": "button",
                        "text": {"tag": "plain_text", "content": b.label},
                        "type": "default",
                        "value": _button_value(b, scope),
                    }
                    for b in doc.buttons
                ],
            }
        )
    return {
        "config": {"wide_screen_mode": True, "update_multi": True},
        "header": header(doc, part),
        "elements": elements,
    }


def card_reference(card_id: str) -> str:
    """The content of a message that shows a CardKit card entity."""
    return json.dumps({"type": "card", "data": {"card_id": card_id}})


def dumps(card: Mapping[str, Any]) -> str:
    return json.dumps(card, ensure_ascii=False, separators=(",", ":"))


def _table_starts(text: str) -> list[int]:
    """The first source line of each table (parsed, so a `|---|` in code is no table)."""
    return [tok.map[0] for tok in parser().parse(text) if tok.type == "table_open" and tok.map]


def _cut_before_table(text: str, keep: int) -> tuple[str, str]:
    """Cut `text` just before table number `keep + 1`."""
    starts = _table_starts(text)
    if len(starts) <= keep:
        return text, ""
    lines = text.splitlines(keepends=True)
    at = starts[keep]
    return "".join(lines[:at]).rstrip(), "".join(lines[at:])


def _by_bytes(part: str) -> list[str]:
    size = len(part.encode())
    if size <= CARD_MAX_BYTES:
        return [part]
    limit = max(64, int(len(part) * CARD_MAX_BYTES / size * 0.95))
    return [p for chunk in split_text(part, limit) for p in _by_bytes(chunk)]


def split_for_cards(text: str) -> list[str]:
    """Split an answer into parts that each fit one card (bytes and tables)."""
    parts: list[str] = []
    for chunk in split_text(text, CARD_MAX_CHARS):
        for part in _by_bytes(chunk):
            while len(_table_starts(part)) > CARD_MAX_TABLES:
                head, part = _cut_before_table(part, CARD_MAX_TABLES)
                parts.append(head)
            parts.append(part)
    return parts or [""]


def text_card(text: str) -> dict[str, Any]:
    """A plain markdown card for command answers and notices."""
    return {
        "config": {"wide_screen_mode": True},
        "elements": [{"tag": "markdown", "content": text or " "}],
    }
