"""SlackChannel: lifecycle (Socket Mode or HTTP events) and the reply verbs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from channels.base import (
    Attachment,
    Capabilities,
    Channel,
    ChannelError,
    ChatRef,
    InboundMessage,
    RateBudget,
    ReplyDoc,
    effective_limit,
)
from channels.slack import files, parse, render, resume
from channels.slack.api import SlackCallFailed, call
from channels.slack.config import SlackConfig
from channels.slack.follow import FollowedThreads
from channels.slack.inbound import Inbound
from channels.slack.reactions import REACTIONS, StatusReactions
from channels.slack.socket import FencedSocketHandler, app_id
from channels.slack.stream import APPEND, UPDATE, ReplyWriter, SlackReply

MAX_TEXT_LEN = 11_000  # leaves room in a 12,000-char markdown block / stream call


def capabilities_for(config: SlackConfig) -> Capabilities:
    """Every Slack budget, once. The service paces each reply's updates (2/s); the channel
    itself keeps the workspace's chat.update (Tier 3, ~50/min) and chat.appendStream (Tier 4,
    100+/min; chat.startStream counts in it) budgets, shared by every reply in the workspace."""
    budgets = (
        RateBudget(scope="reply", per_second=2.0, burst=2),
        RateBudget(
            scope="workspace", method=UPDATE, per_second=config.workspace_edits_per_second, burst=3
        ),
        RateBudget(
            scope="workspace",
            method=APPEND,
            per_second=config.workspace_appends_per_second,
            burst=5,
        ),
        RateBudget(scope="workspace", method=REACTIONS, per_second=0.8, burst=3),  # Tier 3
    )
    return Capabilities(
        max_text_len=MAX_TEXT_LEN,
        buttons=True,
        max_file_in=config.max_file_bytes,
        edit_budget=budgets,
    )


REJECTED = "unauthorized"


class SlackChannel(Channel):
    name = "slack"

    config: SlackConfig

    def setup(self) -> None:
        config, ctx = self.config, self.ctx
        self.capabilities = capabilities_for(config)
        self.client = AsyncWebClient(token=config.token, base_url=config.api_base)
        self.writer = ReplyWriter(
            self.client,
            self.pacer,
            self.capabilities.edit_budget,
            native=config.native_stream,
            stream_cap=MAX_TEXT_LEN,
            min_append_chars=config.min_append_chars,
        )
        self.reactions = StatusReactions(
            self.client,
            self.pacer,
            self.capabilities.edit_budget,
            enabled=config.status_reactions,
        )
        self.followed = FollowedThreads(Path(ctx.data_dir) / "slack" / "followed_threads.sqlite")
        self.me = parse.BotIdentity(user_id="")
        self.app: AsyncApp | None = None
        self._socket: FencedSocketHandler | None = None
        self._session: aiohttp.ClientSession | None = None

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
        if self.config.mode == "http":
            self.ctx.add_route("POST", self.config.http_path, self._http_events)
        elif self.receiving:
            await self.start_receiving()
        self.ctx.report(connected=True)

    def exclusive_connection(self) -> str | None:
        """Socket Mode: one connection per app across the workers (named by the app id)."""
        if self.config.mode == "http" or self.config.app_token is None:
            return None
        return app_id(self.config.app_token.get_secret_value())

    async def start_receiving(self) -> None:
        if self._socket is not None:
            return
        assert self.app is not None
        assert self.config.app_token is not None
        token = self.config.app_token.get_secret_value()
        socket = FencedSocketHandler(self.app, token, lambda: self.may_receive())
        self._socket = socket
        try:
            # the Socket Mode URL asked here, so a start outage (a 5xx, a bad app token) fails
            # the start and the supervisor retries it, shown as retrying; the SDK would retry
            # on its own unseen, logging a traceback every ten seconds
            opened = await call(
                socket.client.web_client.apps_connections_open(app_token=token),
                what="apps.connections.open",
            )
            socket.client.wss_uri = str(opened["url"])
            await socket.connect_async()
        except BaseException:
            self._socket = None
            await socket.close_async()
            raise

    async def stop_receiving(self) -> None:
        if self._socket is not None:
            socket, self._socket = self._socket, None
            await socket.close_async()

    def _build_app(self) -> AsyncApp:
        secret = self.config.signing_secret
        app = AsyncApp(
            name="antler",  # bolt would otherwise read it off inspect.stack(): 0.1-0.3 s a start
            client=self.client,
            signing_secret=secret.get_secret_value() if secret else "unused-in-socket-mode",
            request_verification_enabled=self.config.mode == "http",
            process_before_response=False,
        )
        Inbound(self.config, self.ctx, self.me, self.followed).register(app)
        return app

    async def _http_events(self, request: web.Request) -> web.StreamResponse:
        """HTTP Events API: bolt verifies the signature (401), answers url_verification, acks."""
        assert self.app is not None
        try:
            bolt_request = await to_bolt_request(request)
        except ValueError:  # a body that is neither JSON nor a form: not from Slack
            return self._reject(request, "unreadable body")
        bolt_response = await self.app.async_dispatch(bolt_request)
        if bolt_response.status in (401, 403):
            return self._reject(request, "bad or missing signature")
        return await to_aiohttp_response(bolt_response)

    def _reject(self, request: web.Request, reason: str) -> web.Response:
        self.log.warning("slack http: rejected a request from %s (%s)", request.remote, reason)
        return web.Response(status=401, text=REJECTED)

    async def stop(self) -> None:
        await self.stop_receiving()
        await self.reactions.close()
        if self._session is not None:
            await self._session.close()
            self._session = None
        self.followed.close()
        self.ctx.report(connected=False)

    # ------------------------------------------------------------------ replies

    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> SlackReply:
        if user := parse.ephemeral_user(msg.message_id):
            return SlackReply(
                chat=msg.chat,
                channel_id=msg.chat.chat_id,
                thread_ts=None,
                team=msg.chat.workspace or self.me.team_id,
                user=user,
                source_ts=None,
                mode="edit",
                ephemeral=True,
            )
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
            return reply
        self.reactions.working(reply)
        if reply.thread_ts is not None:
            await self.writer.set_status(reply, render.status_text(doc))
        else:
            await self.writer.update(reply, doc)
        return reply

    async def update_reply(self, handle: SlackReply, doc: ReplyDoc) -> None:
        if handle.ephemeral:
            return  # an ephemeral message cannot be edited: the final is posted once
        if handle.queued_reaction and doc.status != "queued":
            await self._react(handle, "remove")
        if doc.status == "working":
            self.reactions.working(handle)
        await self.writer.update(handle, doc)

    async def finish_reply(self, handle: SlackReply, doc: ReplyDoc) -> None:
        if handle.ephemeral:
            await self._ephemeral(handle.chat, handle.user, render.message_payload(doc))
            return
        if handle.queued_reaction:
            await self._react(handle, "remove")
        await self.writer.finish(handle, doc)
        self.reactions.finished(handle, doc.status)

    def handle_state(self, handle: SlackReply) -> dict[str, Any]:
        return resume.reply_state(handle)

    def restore_handle(self, msg: InboundMessage, state: Mapping[str, Any]) -> SlackReply | None:
        return resume.restore_reply(msg, state)

    def reopen_reply(self, msg: InboundMessage, state: Mapping[str, Any]) -> SlackReply | None:
        return resume.reopen_reply(msg, state)

    def finish_is_replayable(self, handle: SlackReply) -> bool:
        return resume.finish_replayable(handle)

    async def send_continuation(self, handle: SlackReply, doc: ReplyDoc) -> None:
        if handle.ephemeral:
            await self._ephemeral(handle.chat, handle.user, render.message_payload(doc))
            return
        resp = await call(
            self.client.chat_postMessage(
                channel=handle.channel_id, thread_ts=handle.thread_ts, **render.message_payload(doc)
            ),
            what="chat.postMessage",
        )
        handle.last_ts = str(resp["ts"])

    async def send_text(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> None:
        if user := parse.ephemeral_user(reply_to):
            for part in render.split_for_slack(text):
                await self._ephemeral(chat, user, render.text_payload(part))
            return
        # a thread's root, never a reply's ts (Slack: "use its parent instead")
        thread = (chat.topic_id if chat.chat_type == "group" else None) or reply_to
        for part in render.split_for_slack(text):
            await call(
                self.client.chat_postMessage(
                    channel=chat.chat_id, thread_ts=thread, **render.text_payload(part)
                ),
                what="chat.postMessage",
            )

    async def send_file(self, handle: SlackReply, path: Path) -> None:
        await files.upload(self.client, path, channel=handle.channel_id, thread_ts=handle.thread_ts)

    async def fetch_file(
        self, msg: InboundMessage, att: Attachment, dest_dir: Path, *, limit: int | None = None
    ) -> Path:
        if self._session is None:
            raise ChannelError("slack channel is not started")
        return await files.download(
            self._session,
            att,
            dest_dir,
            token=self.config.token,
            api_base=self.config.api_base,
            limit=effective_limit(self.config.max_file_bytes, limit),
        )

    # ------------------------------------------------------------------ helpers

    async def _ephemeral(self, chat: ChatRef, user: str, payload: dict[str, Any]) -> None:
        """A message only `user` sees (the answer to their slash command)."""
        await call(
            self.client.chat_postEphemeral(channel=chat.chat_id, user=user, **payload),
            what="chat.postEphemeral",
        )

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
