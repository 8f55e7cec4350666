"""A Slack reply's ids for the delivery journal, and the reply rebuilt from them after a restart.

A reply that was streaming natively comes back as an edit of the streamed message: what the old
process streamed is unknown, so the stream is stopped and the message rewritten with chat.update.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from channels.base import InboundMessage
from channels.slack.stream import SlackReply

_KEPT = ("channel_id", "thread_ts", "team", "user", "source_ts", "stream_ts", "edit_ts")


def reply_state(reply: SlackReply) -> dict[str, Any]:
    state: dict[str, Any] = {name: getattr(reply, name) for name in _KEPT}
    state.update(
        mode=reply.mode,
        stream_stopped=reply.stream_stopped,
        edit_offset=reply.edit_offset,
        queued_reaction=reply.queued_reaction,
    )
    if reply.last_ts is not None:  # the reply's last part, as a reply of its own
        last = {name: state[name] for name in ("channel_id", "thread_ts", "team", "user")}
        state["last"] = {**last, "edit_ts": reply.last_ts, "mode": "edit"}
    return state


def restore_reply(msg: InboundMessage, state: Mapping[str, Any]) -> SlackReply | None:
    if not state.get("channel_id"):
        return None
    kept: dict[str, Any] = {name: state.get(name) for name in _KEPT}
    reply = SlackReply(chat=msg.chat, **kept)
    reply.queued_reaction = bool(state.get("queued_reaction"))
    reply.stream_stopped = bool(state.get("stream_stopped"))
    if reply.stream_ts is not None:
        reply.mode, reply.edit_ts, reply.edit_offset = "edit", reply.stream_ts, 0
    elif reply.edit_ts is not None or state.get("mode") == "edit":
        reply.mode, reply.edit_offset = "edit", int(state.get("edit_offset") or 0)
    return reply


def reopen_reply(msg: InboundMessage, state: Mapping[str, Any]) -> SlackReply | None:
    """A finished reply's message, rewritten with chat.update (a streamed one from its start);
    None when no message was posted."""
    reply = restore_reply(msg, state)
    if reply is None or reply.edit_ts is None:
        return None
    return reply


def finish_replayable(reply: SlackReply) -> bool:
    """A final that rewrites a message already posted (chat.update) can be repeated."""
    return reply.mode == "edit" and reply.edit_ts is not None
