"""SlackChannel: lifecycle (Socket Mode or HTTP events) and the reply verbs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from channels.base import (
    Attachment,
    Capabilities,
    Channel,
    ChannelContext,
    ChannelError,
    ChatRef,
    InboundMessage,
    RateBudget,
    ReplyDoc,
)
from channels.slack import files, parse, render
from channels.slack.api import SlackCallFailed, call
from channels.slack.budget import WorkspaceBudgets
from channels.slack.config import SlackConfig
from channels.slack.follow import FollowedThreads
from channels.slack.inbound import REFUSAL, Inbound
from channels.slack.stream import ReplyWriter, SlackReply

MAX_TEXT_LEN = 11_000  # leaves room in a 12,000-char markdown block / stream call
REFUSAL_INTERVAL = 3600.0


def capabilities_for(config: SlackConfig) -> Capabilities:
    """Native streams are paced per reply; without them chat.update shares a workspace bucket."""
    budgets = [RateBudget(scope="reply", per_second=2.0, burst=2)]
    if not config.native_stream:
        budgets.append(
            RateBudget(scope="workspace", per_second=config.workspace_edits_per_second, burst=3)
        )
    return Capabilities(
        max_text_len=MAX_TEXT_LEN,
        can_edit=True,
        native_stream=config.native_stream,
        cards=True,
        buttons=True,
        files_in=True,
        files_out=True,
        threads=True,
        markdown="commonmark",
        max_file_in=config.max_file_bytes,
        edit_budget=tuple(budgets),
    )


class SlackChannel(Channel):
    name = "slack"

    def __init__(self, config: SlackConfig, ctx: ChannelContext) -> None:
        super().__init__(config, ctx)
        self.config: SlackConfig = config
        self.capabilities = capabilities_for(config)
        self.client = AsyncWebClient(
            token=config.token, base_url=config.api_base
        )
        self.budgets = WorkspaceBudgets(config.workspace_edits_per_second)
        self.writer = ReplyWriter(
            self.client, self.budgets, native=config.native_stream, stream_cap=MAX_TEXT_LEN
        )
        self.followed = FollowedThreads(Path(ctx.data_dir) / "slack" / "followed_threads.sqlite")
        self.me = parse.BotIdentity(user_id="")
        self.app: AsyncApp | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._session: aiohttp.ClientSession | None = None
        self._refused: dict[tuple[str, str], float] = {}

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self.followed.open()
        try:
            auth = await call(self.client.auth_test(), what="auth.test")
        except ChannelError as exc:
            self.ctx.report(connected=False, error=str(exc))
            raise
        self.me = parse.BotIdentity(
            user_id=str(auth.get("user_id") or ""),
            bot_id=str(auth.get("bot_id") or ""),
            team_id=str(auth.get("team_id") or ""),
        )
        self._session = aiohttp.ClientSession()
        self.app = self._build_app()
        if self.config.mode == "socket":
            assert self.config.app_token is not None
            self._socket = AsyncSocketModeHandler(
                self.app, app_token=self.config.app_token.get_secret_value()
            )
            await self._socket.connect_async()
        else:
            self.ctx.add_route("POST", self.config.http_path, self._http_events)
        self.ctx.report(connected=True)

    def _build_app(self) -> AsyncApp:
        secret = self.config.signing_secret
        app = AsyncApp(
            client=self.client,
            signing_secret=secret.get_secret_value() if secret else "unused-in-socket-mode",
            request_verification_enabled=self.config.mode == "http",
            process_before_response=False,
        )
        Inbound(self.config, self.ctx, self.me, self.followed, self._refuse).register(app)
        return app

    async def _http_events(self, request: web.Request) -> web.StreamResponse:
        """HTTP Events API: bolt verifies the signature (401), answers url_verification, acks."""
        assert self.app is not None
        bolt_response = await self.app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(bolt_response)

    async def stop(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        if self._session is not None:
            await self._session.close()
            self._session = None
        self.followed.close()
        self.ctx.report(connected=False)

    # ------------------------------------------------------------------ replies

    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> SlackReply:
        reply = SlackReply(
            chat=msg.chat,
            channel_id=msg.chat.chat_id,
            thread_ts=msg.raw.get("thread_ts") or msg.chat.topic_id,
            team=msg.chat.workspace or self.me.team_id,
            user=msg.sender.id,
            source_ts=msg.message_id,
        )
        if reply.thread_ts is None:
            reply.mode = "edit"  # a slash command outside a thread: nothing to stream into
        if msg.chat.chat_type == "group" and reply.thread_ts and self.config.thread_follow:
            await self.followed.add(reply.channel_id, reply.thread_ts)
        if doc.status == "queued":
            await self._react(reply, "add")
        elif reply.thread_ts is not None:
            await self.writer.set_status(reply, render.status_text(doc))
        else:
            await self.writer.update(reply, doc)
        return reply

    async def update_reply(self, handle: SlackReply, doc: ReplyDoc) -> None:
        if handle.queued_reaction and doc.status != "queued":
            await self._react(handle, "remove")
        await self.writer.update(handle, doc)

    async def finish_reply(self, handle: SlackReply, doc: ReplyDoc) -> None:
        if handle.queued_reaction:
            await self._react(handle, "remove")
        await self.writer.finish(handle, doc)

    async def send_continuation(self, handle: SlackReply, doc: ReplyDoc) -> None:
        await call(
            self.client.chat_postMessage(
                channel=handle.channel_id, thread_ts=handle.thread_ts, **render.message_payload(doc)
            ),
            what="chat.postMessage",
        )

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        thread = reply_to or (chat.topic_id if chat.chat_type == "group" else None)
        for part in render.split_for_slack(text):
            await call(
                self.client.chat_postMessage(
                    channel=chat.chat_id, thread_ts=thread, **render.text_payload(part)
                ),
                what="chat.postMessage",
            )

    async def send_file(self, handle: SlackReply, path: Path) -> None:
        await files.upload(self.client, path, channel=handle.channel_id, thread_ts=handle.thread_ts)

    async def fetch_file(self, msg: InboundMessage, att: Attachment, dest_dir: Path) -> Path:
        if self._session is None:
            raise ChannelError("slack channel is not started")
        return await files.download(
            self._session,
            att,
            dest_dir,
            token=self.config.token,
            api_base=self.config.api_base,
            limit=self.config.max_file_bytes,
        )

    # ------------------------------------------------------------------ helpers

    async def _react(self, reply: SlackReply, op: str) -> None:
        if reply.source_ts is None:
            return
        method: Any = self.client.reactions_add if op == "add" else self.client.reactions_remove
        try:
            await call(
                method(channel=reply.channel_id, timestamp=reply.source_ts, name="hourglass"),
                what=f"reactions.{op}",
            )
        except (SlackCallFailed, ChannelError) as exc:
            self.log.debug("reaction not changed: %s", exc)
        reply.queued_reaction = op == "add"

    async def _refuse(self, msg: InboundMessage) -> None:
        """One short refusal per user and chat (per hour), in the message's thread."""
        key = (msg.chat.chat_id, msg.sender.id)
        now = time.monotonic()
        if now - self._refused.get(key, -REFUSAL_INTERVAL) < REFUSAL_INTERVAL:
            return
        self._refused[key] = now
        thread = msg.raw.get("thread_ts") if msg.chat.chat_type == "group" else None
        try:
            await call(
                self.client.chat_postMessage(
                    channel=msg.chat.chat_id, thread_ts=thread, text=REFUSAL
                ),
                what="chat.postMessage",
            )
        except ChannelError as exc:
            self.log.info("refusal not sent: %s", exc)
