"""AI cards: create + deliver, stream the whole text (coalesced), set the finished state.

`PUT /v1.0/card/streaming` replaces the card's `content_key` with the whole text (`isFull`) at
most every `stream_interval`; the last PUT carries `isFinalize` (or `isError` on failure), then
`PUT /v1.0/card/instances` sets `flowStatus` so the card stops showing "generating".
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from channels.base import ChannelError, ChatRef, RateLimited
from channels.dingtalk.api import DingTalkApi
from channels.dingtalk.config import DingTalkConfig

log = logging.getLogger("channels.dingtalk.cards")

FLOW_PROCESSING, FLOW_FINISHED, FLOW_FAILED = "1", "3", "5"


@dataclass(eq=False)
class CardState:
    """One AI card being streamed."""

    chat: ChatRef
    sender_id: str
    card_id: str = field(default_factory=lambda: f"antler-{uuid.uuid4().hex}")
    wanted: str = ""
    shown: str = ""
    last_put: float = 0.0
    flush: asyncio.Task[None] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class CardStreamer:
    """Card calls for one channel, with the per-card coalescing to `stream_interval`."""

    def __init__(
        self, api: DingTalkApi, config: DingTalkConfig, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.api = api
        self.config = config
        self._clock = clock

    async def create(self, card: CardState, text: str) -> None:
        """Create the card instance and deliver it to the DM or group; raise on failure."""
        params = {self.config.card_content_key: text, "flowStatus": FLOW_PROCESSING}
        await self.api.call(
            "POST",
            "/v1.0/card/instances",
            {
                "cardTemplateId": self.config.card_template_id,
                "outTrackId": card.card_id,
                "cardData": {"cardParamMap": params},
                "callbackType": "STREAM",
                "imGroupOpenSpaceModel": {"supportForward": True},
                "imRobotOpenSpaceModel": {"supportForward": True},
            },
        )
        deliver = _deliver_body(card, self.config)
        await self.api.call("POST", "/v1.0/card/instances/deliver", deliver)
        card.shown = text
        card.last_put = self._clock()

    async def update(self, card: CardState, text: str) -> None:
        """Show `text` now if the interval allows, else once it does (latest text wins)."""
        card.wanted = text
        if card.flush is not None and not card.flush.done():
            return
        wait = card.last_put + self.config.stream_interval - self._clock()
        if wait <= 0:
            await self._put_wanted(card)
            return
        card.flush = asyncio.create_task(self._flush_later(card, wait))

    async def finish(self, card: CardState, text: str, *, failed: bool) -> None:
        """The final PUT (isFinalize / isError) and the card's finished state; raise on failure."""
        await self.cancel_flush(card)
        card.wanted = text
        async with card.lock:
            await self._stream(card, text, final=True, error=failed)
        status = FLOW_FAILED if failed else FLOW_FINISHED
        try:
            await self.api.call(
                "PUT",
                "/v1.0/card/instances",
                {
                    "outTrackId": card.card_id,
                    "cardData": {
                        "cardParamMap": {self.config.card_content_key: text, "flowStatus": status}
                    },
                    "cardUpdateOptions": {"updateCardDataByKey": True},
                },
            )
        except ChannelError as exc:
            if isinstance(exc, RateLimited):
                raise
            log.warning("dingtalk: card %s final state not set: %s", card.card_id, exc)

    async def cancel_flush(self, card: CardState) -> None:
        task, card.flush = card.flush, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _flush_later(self, card: CardState, wait: float) -> None:
        await asyncio.sleep(wait)
        card.flush = None
        try:
            await self._put_wanted(card)
        except ChannelError as exc:
            log.warning("dingtalk: card %s streaming update failed: %s", card.card_id, exc)

    async def _put_wanted(self, card: CardState) -> None:
        async with card.lock:
            if card.wanted != card.shown:
                await self._stream(card, card.wanted, final=False, error=False)

    async def _stream(self, card: CardState, text: str, *, final: bool, error: bool) -> None:
        card.last_put = self._clock()
        await self.api.call(
            "PUT",
            "/v1.0/card/streaming",
            {
                "outTrackId": card.card_id,
                "guid": uuid.uuid4().hex,
                "key": self.config.card_content_key,
                "content": text,
                "isFull": True,
                "isFinalize": final,
                "isError": error,
            },
        )
        card.shown = text


def _deliver_body(card: CardState, config: DingTalkConfig) -> dict[str, object]:
    body: dict[str, object] = {"outTrackId": card.card_id, "userIdType": 1}
    if card.chat.chat_type == "group":
        body["openSpaceId"] = f"dtv1.card//IM_GROUP.{card.chat.chat_id}"
        body["imGroupOpenDeliverModel"] = {"robotCode": config.robot}
    else:
        body["openSpaceId"] = f"dtv1.card//IM_ROBOT.{card.sender_id}"
        body["imRobotOpenDeliverModel"] = {"spaceType": "IM_ROBOT", "robotCode": config.robot}
    return body
