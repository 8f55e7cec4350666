"""A Gateway thread's title: after a run's first exchange, the same title step as a chat's
(agent/titles.py, `agent.title` in config), kept in the thread's metadata (`values.title`)."""

from __future__ import annotations

from typing import Any

from agent.relay import content_text
from agent.uploads import TAG


def first_exchange(values: dict[str, Any]) -> tuple[str, str] | None:
    """(the person's text, the answer) when `values` hold a thread's first exchange."""
    messages = [m for m in values.get("messages") or [] if isinstance(m, dict)]
    humans = [m for m in messages if m.get("type") == "human"]
    if len(humans) != 1 or not messages or messages[-1].get("type") != "ai":
        return None
    human = humans[0]
    meta = (human.get("additional_kwargs") or {}).get("antler") or {}
    text = meta.get("text") if isinstance(meta.get("text"), str) else None
    if text is None:  # the content without the uploads note
        text = content_text(human.get("content")).split(f"<{TAG}>")[0]
    answer = content_text(messages[-1].get("content"))
    return (text, answer) if text.strip() and answer.strip() else None
