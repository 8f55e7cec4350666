"""One reply on Slack: native streaming first, chat.postMessage + chat.update as fallback.

A native stream (chat.startStream / appendStream / stopStream) is append-only, so text is sent
as deltas of what was already streamed. Appends are coalesced: at least `min_append_chars` new
characters (or `APPEND_MAX_HOLD` seconds' worth) per call, and within the workspace's shared
"chat.appendStream" budget. When streaming is unavailable or the stream expires
(`message_not_in_streaming_state`, e.g. during a long tool call) the rest of the reply goes into
a new message that is edited with chat.update, within the workspace's "chat.update" budget.
Both budgets are declared in the capabilities and kept in the channel's Pacer; an update that
finds no token is held and the newest document shown when one frees up (channels/held.py).
"""

from __future__ import annotations

import logging
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

from slack_sdk.web.async_client import AsyncWebClient

from channels.base import ChannelError, ChatRef, RateBudget, ReplyDoc
from channels.held import Held
from channels.pacing import Pacer
from channels.slack import render
from channels.slack.api import SlackCallFailed, call

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
APPEND, UPDATE = "chat.appendStream", "chat.update"
APPEND_MAX_HOLD = 2.0
"""A shorter delta than `min_append_chars` is still appended once it has waited this long."""


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
    appended_at: float = 0.0
    stream_stopped: bool = False
    edit_ts: str | None = None
    edit_offset: int = 0
    last_ts: str | None = None  # the last continuation part's message (its buttons)
    shown: dict[str, Any] | None = None
    status: str = ""
    queued_reaction: bool = False
    working_reaction: bool = False  # :eyes: is on the person's message (reactions.py)
    ephemeral: bool = False  # an answer to a slash command: shown to its sender only
    finished: bool = False
    held: Held[ReplyDoc] = field(
        default_factory=lambda: Held("deferred slack update", log), repr=False
    )


@dataclass(eq=False)
class ReplyWriter:
    """Sends a reply's documents to Slack, choosing the transport per reply."""

    client: AsyncWebClient
    pacer: Pacer
    budgets: tuple[RateBudget, ...]
    _: KW_ONLY
    native: bool
    stream_cap: int = render.MARKDOWN_BLOCK_LIMIT
    min_append_chars: int = 1

    def _budgets(self, reply: SlackReply, method: str) -> tuple[RateBudget, ...]:
        return tuple(
            b
            for b in self.budgets
            if b.method == method and b.chat_type in (None, reply.chat.chat_type)
        )

    def _key(self, reply: SlackReply) -> str:
        return f"{reply.channel_id}:{reply.thread_ts or reply.source_ts}"

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
        except ChannelError as exc:  # refusals too: the final says what matters
            log.debug("setStatus not shown: %s", exc)

    # ------------------------------------------------------------------ updates

    async def update(self, reply: SlackReply, doc: ReplyDoc) -> None:
        await self.set_status(reply, render.status_text(doc))
        if reply.held.waiting:
            reply.held.hold(doc)  # a held update is waiting for its token: it shows this one
            return
        if reply.mode == "stream":
            text = doc.text[: self.stream_cap]  # the final is split by the service; stop here
            if not text.startswith(reply.streamed):
                return  # a stream cannot be edited; the final reconciles
            delta = text[len(reply.streamed) :]
            if not delta or not self._worth_appending(reply, delta):
                return  # held: the next update (or the final) carries it
            if not self._token(reply, APPEND):
                self._defer(reply, doc)
                return
            if await self._stream(reply, delta):
                return
        await self._edit(reply, doc, final=False)

    def _worth_appending(self, reply: SlackReply, delta: str) -> bool:
        """The first text at once; later ones in chunks of a few words, or after a while."""
        if reply.stream_ts is None or len(delta) >= self.min_append_chars:
            return True
        return self.pacer.clock() - reply.appended_at >= APPEND_MAX_HOLD

    def _token(self, reply: SlackReply, method: str) -> bool:
        return self.pacer.try_take(reply.chat, self._budgets(reply, method), self._key(reply))

    async def finish(self, reply: SlackReply, doc: ReplyDoc) -> None:
        await reply.held.stop()  # never cuts a call off: Slack may have taken it already
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
            for index, piece in enumerate(render.stream_pieces(delta)):
                if index and reply.stream_ts is not None:
                    await self.pacer.acquire(
                        reply.chat, self._budgets(reply, APPEND), self._key(reply)
                    )
                await self._send_piece(reply, piece)
                reply.streamed += piece
                reply.appended_at = self.pacer.clock()
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
                scope="workspace",
                what="chat.startStream",
                pacer=(self.pacer, reply.chat),
                method=APPEND,  # a stream's start counts in the appendStream budget
            )
            reply.stream_ts = str(resp["ts"])
            return
        await call(
            self.client.chat_appendStream(
                channel=reply.channel_id, ts=reply.stream_ts, chunks=chunks
            ),
            scope="workspace",
            what=APPEND,
            pacer=(self.pacer, reply.chat),
        )

    def _fall_back(self, reply: SlackReply) -> None:
        reply.mode = "edit"
        reply.edit_offset = len(reply.streamed)

    async def _finish_stream(self, reply: SlackReply, doc: ReplyDoc) -> None:
        if doc.text.startswith(reply.streamed):
            delta = doc.text[len(reply.streamed) :]
            if delta:
                await self.pacer.acquire(reply.chat, self._budgets(reply, APPEND), self._key(reply))
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
        if reply.edit_ts is not None and reply.edit_ts == reply.stream_ts:
            await self._stop_stream(reply, None)  # a restored reply: its stream cannot be edited
        payload = render.message_payload(doc, offset=reply.edit_offset)
        if payload == reply.shown:
            return
        if reply.edit_ts is None:
            resp = await self._post(reply, payload)
            reply.edit_ts, reply.shown = str(resp["ts"]), payload
            return
        if final:
            await self.pacer.acquire(reply.chat, self._budgets(reply, UPDATE), self._key(reply))
        elif not self._token(reply, UPDATE):
            self._defer(reply, doc)
            return
        reply.held.take()  # this update shows more than the held one
        await self._send_update(reply, reply.edit_ts, payload)

    async def _send_update(self, reply: SlackReply, ts: str, payload: dict[str, Any]) -> None:
        await call(
            self.client.chat_update(channel=reply.channel_id, ts=ts, **payload),
            scope="workspace",
            what=UPDATE,
            pacer=(self.pacer, reply.chat),
        )
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
        reply.held.hold(doc)
        reply.held.schedule(
            lambda held: self._show_held(reply, held), lambda: self._held_token(reply)
        )

    async def _held_token(self, reply: SlackReply) -> None:
        method = APPEND if reply.mode == "stream" else UPDATE
        await self.pacer.acquire(reply.chat, self._budgets(reply, method), self._key(reply))

    async def _show_held(self, reply: SlackReply, doc: ReplyDoc) -> None:
        if reply.finished:
            return
        if reply.mode == "stream":
            delta = doc.text[: self.stream_cap][len(reply.streamed) :]
            fits = doc.text.startswith(reply.streamed) and delta
            if fits and await self._stream(reply, delta):
                return
        payload = render.message_payload(doc, offset=reply.edit_offset)
        if reply.edit_ts is not None and payload != reply.shown:
            await self._send_update(reply, reply.edit_ts, payload)
