"""One-off robot messages: markdown via the session webhook while it is valid, else the robot
send API; images and files through an upload and the robot send API.

A session webhook that answers an error (an errcode such as 300001, an HTTP error, no answer) is
treated like an expired one: it is forgotten and the message goes through the robot send API.
A throttled webhook (`RateLimited`) is not bypassed: the caller waits out its retry-after.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from channels.base import ChannelError, ChatRef, RateLimited
from channels.dingtalk.api import DingTalkApi
from channels.dingtalk.config import DingTalkConfig
from channels.dingtalk.render import title_of
from channels.text import split_text

log = logging.getLogger("channels.dingtalk.outbox")

WEBHOOK_MARGIN_MS = 30_000
"""Do not use a session webhook that expires within this many milliseconds."""
MARKDOWN_LIMIT = 5000
"""Characters per robot markdown message (sampleMarkdown / webhook markdown)."""
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".bmp"}


class Outbox:
    """Sends markdown, images and files to a chat; remembers each chat's session webhook."""

    def __init__(
        self, api: DingTalkApi, config: DingTalkConfig, clock: Callable[[], float] = time.time
    ) -> None:
        self.api = api
        self.config = config
        self._clock = clock
        self._webhooks: dict[str, tuple[str, int]] = {}

    def remember_webhook(self, chat: ChatRef, url: str, expires_ms: int) -> None:
        """Keep the chat's session webhook that lives longest (a message answered on another
        worker, or after a restart, brings its own, maybe older than one known here)."""
        if url and expires_ms >= self._webhooks.get(chat.key, ("", 0))[1]:
            self._webhooks[chat.key] = (url, expires_ms)

    def webhook_for(self, chat: ChatRef) -> str:
        url, expires_ms = self._webhooks.get(chat.key, ("", 0))
        now_ms = int(self._clock() * 1000)
        return url if url and expires_ms - now_ms > WEBHOOK_MARGIN_MS else ""

    async def send_markdown(self, chat: ChatRef, text: str) -> None:
        """Send `text` (already in the DingTalk dialect), split to the message limit."""
        for part in split_text(text, MARKDOWN_LIMIT) or [" "]:
            await self._send_one(chat, part)

    async def _send_one(self, chat: ChatRef, text: str) -> None:
        title = title_of(text, self.config.markdown_title)
        webhook = self.webhook_for(chat)
        if webhook and await self._via_webhook(chat, webhook, title, text):
            return
        param = {"title": title, "text": text}
        await self.api.robot_send(chat.chat_type, chat.chat_id, "sampleMarkdown", param)

    async def _via_webhook(self, chat: ChatRef, webhook: str, title: str, text: str) -> bool:
        """Send through the session webhook; False (and the webhook forgotten) if it failed."""
        body = {"msgtype": "markdown", "markdown": {"title": title, "text": text}}
        try:
            await self.api.post_webhook(webhook, body)
        except RateLimited:
            raise
        except ChannelError as exc:
            log.warning(
                "dingtalk: session webhook of %s failed (%s); using the robot send API",
                chat.key,
                exc,
            )
            self._webhooks.pop(chat.key, None)
            return False
        return True

    async def send_file(self, chat: ChatRef, path: Path) -> None:
        """Upload `path` and send it as an image or a file message."""
        if path.suffix.lower() in IMAGE_SUFFIXES:
            media_id = await self.api.upload(path, "image")
            param = {"photoURL": media_id}
            await self.api.robot_send(chat.chat_type, chat.chat_id, "sampleImageMsg", param)
            return
        media_id = await self.api.upload(path, "file")
        file_type = path.suffix.lstrip(".").lower() or "file"
        param = {"mediaId": media_id, "fileName": path.name, "fileType": file_type}
        await self.api.robot_send(chat.chat_type, chat.chat_id, "sampleFile", param)
