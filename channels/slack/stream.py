"""One reply on Slack: native streaming first, chat.postMessage + chat.update as fallback.

A native stream (chat.startStream / appendStream / stopStream) is append-only, so text is sent
as deltas of what was already streamed. When streaming is unavailable or the stream expires
(`message_not_in_streaming_state`, e.g. during a long tool call) the rest of the reply goes into
a new message that is edited with chat.update, within the workspace's shared budget.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from slack_sdk.web.async_client import AsyncWebClient

from channels.base import ChatRef, RateLimited, ReplyDoc
from channels.slack import render
from channels.slack.api import SlackCallFailed, call
from channels.slack.budget import WorkspaceBudgets

log = logging.getLogger("channels.slack")

# Errors after which this reply continues with chat.postMessage + chat.update.
STREAM_FALLBACK_ERRORS = frozenset(
    {
        "message_not_in_streaming_state",
        "unknown_method",
        "not_allowed_token_type",
        "method_not_supported_for_channel_type",
        "missing_scope",
        "not_in_streaming_state",
        "invalid_arguments",
        "feature_not_enabled",
    }
)
# Errors that mean the workspace cannot stream at all: stop trying for later replies too.
STREAM_UNSUPPORTED = frozenset({"unknown_method", "not_allowed_token_type", "feature_not_enabled"})


@dataclass(eq=False)
class SlackReply:
    """The reply handle: where the reply lives and how much of it is shown."""

    chat: ChatRef
    channel_id: str
    thread_ts: str | None
    team: str
    user: str
    source_ts: str | None
    mode: Literal["stream", "edit"] = "stream"
    stream_ts: str | None = None
    streamed: str = ""
    stream_stopped: bool = False
    edit_ts: str | None = None
    edit_offset: int = 0
    shown: dict[str, Any] | None = None
    status: str = ""
    queued_reaction: bool = False
    finished: bool = False
    pending: ReplyDoc | None = None
    flusher: asyncio.Task[None] | None = field(default=None, repr=False)


class ReplyWriter:
    """Sends a reply's documents to Slack, choosing the transport per reply."""

    def __init__(
        self,
        client: AsyncWebClient,
        budgets: WorkspaceBudgets,
        *,
        native: bool,
        stream_cap: int = render.MARKDOWN_BLOCK_LIMIT,
    ) -> None:
        self.stream_cap = stream_cap
        self.client = client
        self.budgets = budgets
        self.native = native

    # ------------------------------------------------------------------ status line

    async def set_status(self, reply: SlackReply, status: str) -> None:
        """assistant.threads.setStatus; best effort (only assistant threads support it)."""
        if reply.thread_ts is None or status == reply.status:
            return
        reply.status = status
        try:
            await call(
                self.client.assistant_threads_setStatus(
                    channel_id=reply.channel_id, thread_ts=reply.thread_ts, status=status
                ),
                what="assistant.threads.setStatus",
            )
        except (SlackCallFailed, RateLimited) as exc:
            log.debug("setStatus not shown: %s", exc)

    # ------------------------------------------------------------------ updates

    async def update(self, reply: SlackReply, doc: ReplyDoc) -> None:
        await self.set_status(reply, render.status_text(doc))
        if reply.mode == "stream":
            text = doc.text[: self.stream_cap]  # the final is split by the service; stop here
            if not text.startswith(reply.streamed):
                return  # a stream cannot be edited; the final reconciles
            delta = text[len(reply.streamed) :]
            if not delta or await self._stream(reply, delta):
                return
        await self._edit(reply, doc, final=False)

    async def finish(self, reply: SlackReply, doc: ReplyDoc) -> None:
        if reply.flusher is not None:
            reply.flusher.cancel()
            reply.flusher = None
        if reply.mode == "stream" and reply.stream_ts is None:
            reply.mode = "edit"  # nothing streamed yet: one plain message is simpler
        if reply.mode == "stream":
            await self._finish_stream(reply, doc)
        else:
            await self._edit(reply, doc, final=True)
        reply.finished = True

    # ------------------------------------------------------------------ native stream

    async def _stream(self, reply: SlackReply, delta: str) -> bool:
        """Append `delta`; False when this reply must fall back to chat.update."""
        if not self.native or reply.thread_ts is None:
            self._fall_back(reply)
            return False
        try:
            for piece in render.stream_pieces(delta):
                await self._send_piece(reply, piece)
                reply.streamed += piece
        except SlackCallFailed as exc:
            if exc.code not in STREAM_FALLBACK_ERRORS:
                raise
            log.info("slack stream unavailable (%s); continuing with chat.update", exc.code)
            if exc.code in STREAM_UNSUPPORTED:
                self.native = False
            self._fall_back(reply)
            return False
        return True

    async def _send_piece(self, reply: SlackReply, piece: str) -> None:
        chunks = [{"type": "markdown_text", "text": piece}]
        if reply.stream_ts is None:
            resp = await call(
                self.client.chat_startStream(
                    channel=reply.channel_id,
                    thread_ts=reply.thread_ts or "",
                    recipient_team_id=reply.team or None,
                    recipient_user_id=reply.user or None,
                    chunks=chunks,
                ),
                scope="reply",
                what="chat.startStream",
            )
            reply.stream_ts = str(resp["ts"])
            return
        await call(
            self.client.chat_appendStream(
                channel=reply.channel_id, ts=reply.stream_ts, chunks=chunks
            ),
            scope="reply",
            what="chat.appendStream",
        )

    def _fall_back(self, reply: SlackReply) -> None:
        reply.mode = "edit"
        reply.edit_offset = len(reply.streamed)

    async def _finish_stream(self, reply: SlackReply, doc: ReplyDoc) -> None:
        if doc.text.startswith(reply.streamed):
            delta = doc.text[len(reply.streamed) :]
            if delta and not await self._stream(reply, delta):
                await self._stop_stream(reply, None)
                await self._edit(reply, doc, final=True)
                return
            await self._stop_stream(reply, doc)
            return
        # The final differs from what was streamed: stop, then replace the whole message.
        await self._stop_stream(reply, None)
        reply.mode, reply.edit_ts, reply.edit_offset = "edit", reply.stream_ts, 0
        await self._edit(reply, doc, final=True)

    async def _stop_stream(self, reply: SlackReply, doc: ReplyDoc | None) -> None:
        if reply.stream_stopped or reply.stream_ts is None:
            return
        extras = render.final_extras(doc) if doc is not None else []
        try:
            await call(
                self.client.chat_stopStream(
                    channel=reply.channel_id, ts=reply.stream_ts, blocks=extras or None
                ),
                scope="reply",
                what="chat.stopStream",
            )
        except SlackCallFailed as exc:
            if exc.code not in STREAM_FALLBACK_ERRORS:
                raise
            if extras and doc is not None:  # expired: the note/buttons go in a message of their own
                await self._post(reply, {"text": doc.note or "options", "blocks": extras})
        reply.stream_stopped = True

    # ------------------------------------------------------------------ post + update

    async def _edit(self, reply: SlackReply, doc: ReplyDoc, *, final: bool) -> None:
        payload = render.message_payload(doc, offset=reply.edit_offset)
        if payload == reply.shown:
            return
        if reply.edit_ts is None:
            resp = await self._post(reply, payload)
            reply.edit_ts, reply.shown = str(resp["ts"]), payload
            return
        bucket = self.budgets[reply.team]
        if final:
            await bucket.take()
        elif not bucket.try_take():
            self._defer(reply, doc)
            return
        reply.pending = None
        await self._send_update(reply, payload)

    async def _send_update(self, reply: SlackReply, payload: dict[str, Any]) -> None:
        try:
            await call(
                self.client.chat_update(channel=reply.channel_id, ts=reply.edit_ts, **payload),
                scope="workspace",
                what="chat.update",
            )
        except RateLimited as exc:
            self.budgets[reply.team].block_for(exc.retry_after)
            raise
        reply.shown = payload

    async def _post(self, reply: SlackReply, payload: dict[str, Any]) -> Any:
        return await call(
            self.client.chat_postMessage(
                channel=reply.channel_id, thread_ts=reply.thread_ts, **payload
            ),
            scope="chat",
            what="chat.postMessage",
        )

    def _defer(self, reply: SlackReply, doc: ReplyDoc) -> None:
        """No workspace token now: keep the newest doc and show it when a token frees up."""
        reply.pending = doc
        if reply.flusher is None or reply.flusher.done():
            reply.flusher = asyncio.create_task(self._flush(reply))

    async def _flush(self, reply: SlackReply) -> None:
        try:
            await self.budgets[reply.team].take()
            doc, reply.pending = reply.pending, None
            if doc is None or reply.finished:
                return
            payload = render.message_payload(doc, offset=reply.edit_offset)
            if payload != reply.shown:
                await self._send_update(reply, payload)
        except (SlackCallFailed, RateLimited) as exc:
            log.debug("deferred slack update dropped: %s", exc)
        finally:
            reply.flusher = None
