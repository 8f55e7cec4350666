"""A Telegram reply's ids for the delivery journal, and the reply rebuilt from them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from channels.base import InboundMessage
from channels.telegram.stream import TelegramReply


def reply_state(handle: TelegramReply) -> dict[str, Any]:
    state: dict[str, Any] = {
        "mode": handle.mode,
        "draft_id": handle.draft_id,
        "message_id": handle.message_id,
        "reply_to": handle.reply_to,
        "parts_sent": handle.parts_sent,
    }
    if handle.last_message_id is not None:  # the reply's last part, as a reply of its own
        state["last"] = {"mode": "edit", "message_id": handle.last_message_id}
    return state


def restore_reply(msg: InboundMessage, state: Mapping[str, Any]) -> TelegramReply | None:
    """The reply as the last process left it; `shown` is unknown, so the next update edits."""
    kept = state.get("mode")
    if kept not in ("draft", "edit"):
        return None
    mode: Literal["draft", "edit"] = "edit" if kept == "edit" else "draft"
    message_id = _int(state.get("message_id"))
    if message_id is not None:
        mode = "edit"  # a message is shown (a draft's final, a shutdown notice): continue in it
    return TelegramReply(
        chat=msg.chat,
        reply_to=_int(state.get("reply_to")),
        mode=mode,
        draft_id=_int(state.get("draft_id")) or 0,
        message_id=message_id,
        parts_sent=_int(state.get("parts_sent")) or 0,
    )


def reopen_reply(msg: InboundMessage, state: Mapping[str, Any]) -> TelegramReply | None:
    """A finished reply's message, to be rewritten by editing it (its first part: the parts
    after it stay as they are); None when it never became a message (nothing to edit)."""
    reply = restore_reply(msg, state)
    if reply is None or reply.message_id is None:
        return None
    reply.mode, reply.parts_sent = "edit", 0
    return reply


def finish_replayable(handle: TelegramReply) -> bool:
    """An edited placeholder takes the final by an edit: repeating it changes nothing visible."""
    return handle.mode == "edit" and handle.message_id is not None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | str) and str(value).lstrip("-").isdigit() else None
