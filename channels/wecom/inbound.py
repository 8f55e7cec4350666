"""Callback frames -> ctx.publish: messages and template card button presses.

WeCom pushes each callback on the bot's one connection; nothing is acknowledged, so a
redelivered message is recognised by its `msgid` in the service's journal. While this worker's
hold on the connection has lapsed (`may_receive`) it publishes nothing. A button press is
answered first, within WeCom's 5 seconds: its card is updated to show the choice (best effort),
then the press is published as the button's value typed by the presser.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from channels.base import ChannelContext, ChannelError, InboundMessage
from channels.wecom import cards, parse
from channels.wecom.connection import Connection

log = logging.getLogger("channels.wecom")
CARD_EVENT = "template_card_event"
TAKEN_OVER = "disconnected_event"


class Inbound:
    def __init__(
        self,
        ctx: ChannelContext,
        conn: Callable[[], Connection],
        may_receive: Callable[[], bool],
        push: Callable[[InboundMessage, str], Any],
    ) -> None:
        self.ctx, self.conn, self.may_receive, self.push = ctx, conn, may_receive, push
        self._tasks: set[asyncio.Task[None]] = set()

    def on_frame(self, frame: dict[str, Any]) -> None:
        """The SDK's `message` and `event` listener (called on the loop, not awaited)."""
        task = asyncio.create_task(self.handle(frame))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def handle(self, frame: dict[str, Any]) -> None:
        if not self.may_receive():
            return
        body = frame.get("body")
        req_id = str((frame.get("headers") or {}).get("req_id") or "")
        if not isinstance(body, dict):
            return
        try:
            if frame.get("cmd") == "aibot_event_callback":
                await self._event(body, req_id)
                return
            msg = parse.parse_message(body, req_id)
        except (AttributeError, KeyError, TypeError, ValueError):
            log.warning("malformed wecom callback %s skipped", body.get("msgid", "?"))
            log.debug("parse failure", exc_info=True)
            return
        if msg is not None:
            await self._publish(msg)

    async def _event(self, body: dict[str, Any], req_id: str) -> None:
        event = body.get("event") or {}
        if event.get("eventtype") == TAKEN_OVER:
            self.conn().taken_over()
            return
        if event.get("eventtype") != CARD_EVENT:
            log.debug("wecom event %s not handled", event.get("eventtype"))
            return
        card_event = event.get(CARD_EVENT) or {}
        task_id = str(card_event.get("task_id") or "")
        found = await cards.pressed(
            task_id, str(card_event.get("event_key") or ""), self.ctx.choices
        )
        msg = parse.parse_press(body, req_id, found[0] if found else "")
        if msg is None:
            return
        if found is None:
            log.info("a press on a card this bot does not know (%s)", task_id[:24])
            await self.push(msg, self.ctx.choice_expired)
            return
        await self._update_card(found[1], req_id)
        await self._publish(msg)

    async def _update_card(self, card: dict[str, Any], req_id: str) -> None:
        try:
            await self.conn().update_card(req_id, card)
        except ChannelError as exc:
            log.info("updating the pressed card failed: %s", exc)

    async def _publish(self, msg: InboundMessage) -> None:
        result = await self.ctx.publish(msg)
        if not result.done:
            log.info("wecom message %s not accepted: %s", msg.event_id, result.value)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
