"""AI cards: create + deliver, stream the whole text (coalesced), set the finished state.

`PUT /v1.0/card/streaming` replaces the card's `content_key` with the whole text (`isFull`) at
most every `stream_interval` (the "card.stream" budget, per card, in the channel's Pacer); the
last PUT carries `isFinalize` (or `isError` on failure), then `PUT /v1.0/card/instances` sets
`flowStatus` so the card stops showing "generating". A 429 blocks every call of the app until
its Retry-After has passed; the newest text is shown after it (held and coalesced by
channels/held.py, never dropped).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field

from channels.base import ChannelError, ChatRef, RateBudget, RateLimited
from channels.dingtalk.api import DingTalkApi
from channels.dingtalk.config import DingTalkConfig
from channels.held import Held
from channels.pacing import Pacer

log = logging.getLogger("channels.dingtalk.cards")

FLOW_PROCESSING, FLOW_FINISHED, FLOW_FAILED = "1", "3", "5"
CARD_STREAM = "card.stream"


@dataclass(eq=False)
class CardState:
    """One AI card being streamed."""

    chat: ChatRef
    sender_id: str
    card_id: str = field(default_factory=lambda: f"antler-{uuid.uuid4().hex}")
    shown: str = ""
    held: Held[str] = field(default_factory=lambda: Held("dingtalk card streaming update", log))
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class CardStreamer:
    """Card calls for one channel, coalesced per card to its "card.stream" budget."""

    def __init__(
        self,
        api: DingTalkApi,
        config: DingTalkConfig,
        pacer: Pacer,
        budgets: tuple[RateBudget, ...],
    ) -> None:
        self.api = api
        self.config = config
        self.pacer = pacer
        self._budgets = tuple(b for b in budgets if b.method == CARD_STREAM)

    async def create(self, card: CardState, text: str) -> None:
        """Create the card instance and deliver it to the DM or group; raise on failure."""
        params = {self.config.card_content_key: text, "flowStatus": FLOW_PROCESSING}
        async with self.pacer.slot(card.chat, (), card.card_id):
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
        deliver = deliver_body(card.card_id, card.chat, card.sender_id, self.config)
        async with self.pacer.slot(card.chat, self._budgets, card.card_id):
            await self.api.call("POST", "/v1.0/card/instances/deliver", deliver)
        card.shown = text

    async def update(self, card: CardState, text: str) -> None:
        """Show `text` now if the card's budget allows, else once it does (latest text wins).

        Inside a 429's Retry-After nothing is sent: the text waits and goes out after it."""
        card.held.hold(text)
        if card.held.waiting:
            return
        if self._wait(card) <= 0:
            await self._put(card, card.held.take())
            return
        card.held.schedule(lambda held: self._put_held(card, held), lambda: self._ready(card))

    async def finish(self, card: CardState, text: str, *, failed: bool) -> None:
        """The final PUT (isFinalize / isError) and the card's finished state; raise on failure."""
        await card.held.stop()  # an update on its way lands first
        # The final waits for 429 blocks only: the per-card interval is ours, not DingTalk's.
        async with card.lock, self.pacer.slot(card.chat, (), card.card_id):
            await self._stream(card, text, final=True, error=failed)
        status = FLOW_FAILED if failed else FLOW_FINISHED
        try:
            async with self.pacer.slot(card.chat, (), card.card_id):
                await self._set_state(card, text, status)
        except ChannelError as exc:
            if isinstance(exc, RateLimited):
                raise
            log.warning("dingtalk: card %s final state not set: %s", card.card_id, exc)

    async def _set_state(self, card: CardState, text: str, status: str) -> None:
        params = {self.config.card_content_key: text, "flowStatus": status}
        body = {
            "outTrackId": card.card_id,
            "cardData": {"cardParamMap": params},
            "cardUpdateOptions": {"updateCardDataByKey": True},
        }
        await self.api.call("PUT", "/v1.0/card/instances", body)

    async def _put_held(self, card: CardState, text: str) -> None:
        """A held text, once the budget (and any 429 block) allows; a 429 holds it again."""
        try:
            await self._put(card, text)
        except RateLimited:
            card.held.hold_again(text)  # the block is in the pacer: the next round waits it out

    async def _put(self, card: CardState, text: str | None) -> None:
        async with card.lock:
            if text is not None and text != card.shown:
                async with self.pacer.slot(card.chat, self._budgets, card.card_id):
                    await self._stream(card, text, final=False, error=False)

    def _wait(self, card: CardState) -> float:
        return self.pacer.wait_time(card.chat, self._budgets, card.card_id)

    async def _ready(self, card: CardState) -> None:
        await self.pacer.sleep(max(self._wait(card), 0.0))

    async def _stream(self, card: CardState, text: str, *, final: bool, error: bool) -> None:
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


def deliver_body(
    card_id: str, chat: ChatRef, sender_id: str, config: DingTalkConfig
) -> dict[str, object]:
    """Where `POST /v1.0/card/instances/deliver` shows a card: the group, or the sender's DM."""
    body: dict[str, object] = {"outTrackId": card_id, "userIdType": 1}
    if chat.chat_type == "group":
        body["openSpaceId"] = f"dtv1.card//IM_GROUP.{chat.chat_id}"
        body["imGroupOpenDeliverModel"] = {"robotCode": config.robot}
    else:
        body["openSpaceId"] = f"dtv1.card//IM_ROBOT.{sender_id}"
        body["imRobotOpenDeliverModel"] = {"spaceType": "IM_ROBOT", "robotCode": config.robot}
    return body
