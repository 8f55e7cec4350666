"""Status reactions on the person's message: :eyes: while the agent works on it,
:white_check_mark: once it is answered; :eyes: removed when the answer failed or was stopped
(`status_reactions`). The :hourglass: of a queued message is the channel's own (channel.py).

Each change goes out in the background, in order per message (channels/in_order.py), within
the workspace's reactions budget (Tier 3, about 50 a minute: declared in the channel's
capabilities and kept in its Pacer); a refusal (`already_reacted`, `no_reaction`, no scope) is
only logged.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from channels.base import ChannelError, RateBudget, ReplyStatus
from channels.in_order import InOrder
from channels.pacing import Pacer
from channels.slack.api import call
from channels.slack.stream import SlackReply

log = logging.getLogger("channels.slack")
REACTIONS = "reactions"  # the budget's method: reactions.add and reactions.remove
WORKING, DONE = "eyes", "white_check_mark"


class StatusReactions:
    def __init__(
        self,
        client: AsyncWebClient,
        pacer: Pacer,
        budgets: tuple[RateBudget, ...],
        *,
        enabled: bool,
    ) -> None:
        self.client, self.pacer, self.enabled = client, pacer, enabled
        self.budgets = tuple(b for b in budgets if b.method == REACTIONS)
        self.calls = InOrder()

    def working(self, reply: SlackReply) -> None:
        if reply.working_reaction or not self._applies(reply):
            return
        reply.working_reaction = True
        self._queue(reply, "add", WORKING)

    def finished(self, reply: SlackReply, status: ReplyStatus) -> None:
        if not self._applies(reply):
            return
        if reply.working_reaction:
            reply.working_reaction = False
            self._queue(reply, "remove", WORKING)
        if status == "done":
            self._queue(reply, "add", DONE)

    def _applies(self, reply: SlackReply) -> bool:
        return self.enabled and reply.source_ts is not None and not reply.ephemeral

    def _queue(self, reply: SlackReply, op: str, name: str) -> None:
        key = (reply.channel_id, str(reply.source_ts))
        self.calls.run(key, lambda: self._send(reply, op, name))

    async def _send(self, reply: SlackReply, op: str, name: str) -> None:
        method: Any = self.client.reactions_add if op == "add" else self.client.reactions_remove
        try:
            async with self.pacer.slot(reply.chat, self.budgets):
                await call(
                    method(channel=reply.channel_id, timestamp=reply.source_ts, name=name),
                    scope="workspace",
                    what=f"reactions.{op}",
                    pacer=(self.pacer, reply.chat),
                    method=REACTIONS,
                )
        except ChannelError as exc:  # the answer matters, not its reaction
            log.debug("reaction %s not changed on %s: %s", name, reply.channel_id, exc)

    async def close(self) -> None:
        await self.calls.close()
