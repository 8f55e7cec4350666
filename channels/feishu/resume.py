"""A Feishu reply's cards for the delivery journal, and the reply rebuilt from them after a restart.

Cards are rewritten whole (CardKit element content, card update, or message patch), so a restored
reply simply sends its next document again. CardKit wants each card's `sequence` to grow: the
restored count starts past what the old process may have used after it last wrote the journal,
and the card's budget starts spent (the old process may have used its burst a moment ago).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from channels.base import InboundMessage
from channels.feishu.stream import CardPart, FeishuReply

SEQUENCE_MARGIN = 50


def reply_state(reply: FeishuReply) -> dict[str, Any]:
    parts = [[p.message_id, p.card_id, p.sequence, p.streaming] for p in reply.parts]
    state: dict[str, Any] = {
        "mode": reply.mode,
        "reply_to": reply.reply_to,
        "in_thread": reply.in_thread,
        "finished": reply.finished,
        "delivered": sorted(reply.delivered),
        "parts": parts,
    }
    if len(parts) > 1:  # the reply's last card (its buttons), as a reply of its own
        state["last"] = {**state, "finished": 1, "delivered": [], "parts": parts[-1:]}
    return state


def restore_reply(msg: InboundMessage, state: Mapping[str, Any]) -> FeishuReply | None:
    mode = state.get("mode")
    if mode not in ("cardkit", "patch"):
        return None
    parts = [
        CardPart(str(mid), card_id, sequence=int(seq) + SEQUENCE_MARGIN, streaming=bool(streaming))
        for mid, card_id, seq, streaming in state.get("parts", [])
    ]
    return FeishuReply(
        chat=msg.chat,
        reply_to=state.get("reply_to"),
        in_thread=bool(state.get("in_thread")),
        mode=mode,
        parts=parts,
        finished=int(state.get("finished") or 0),
        delivered=set(state.get("delivered", [])),
    )


def finish_replayable(reply: FeishuReply) -> bool:
    """The final rewrites cards already posted: repeating it shows nothing twice."""
    return bool(reply.parts)
