"""Choices as interactive cards: buttons whose presses come back over the Stream connection.

A robot markdown message has no buttons that work in groups: a `dtmd://` link sends the choice as
the user's own message, without the @ DingTalk needs to deliver a group message to the robot. So
a reply with buttons gets an interactive card on DingTalk's standard template (`StandardCard`,
config `button_card_template_id`): markdown plus one `request` button per choice, created with
`callbackType: STREAM`. A press arrives as a CALLBACK frame on `/v1.0/card/instances/callback`
(the SDK's `CardCallbackMessage`); it becomes a button-press InboundMessage carrying the choice,
and the card is updated to show the choice in place of its buttons.

Cards waiting for a press are kept in memory (the newest `KEEP`); a press on a card from before a
restart is logged and its card is updated to say so.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from dingtalk_stream.card_callback import CardCallbackMessage

from channels.base import Button, ChatRef, InboundMessage, UserRef
from channels.dingtalk.api import DingTalkApi
from channels.dingtalk.cards import deliver_body
from channels.dingtalk.config import DingTalkConfig
from channels.pacing import Pacer

log = logging.getLogger("channels.dingtalk.buttons")

KEEP = 1000
ACTION_PREFIX = "antler_btn_"
FULL_JSON_KEY = "sys_full_json_obj"  # the standard card's whole JSON, as one card parameter


@dataclass
class ButtonCard:
    card_id: str
    chat: ChatRef
    sender_id: str
    text: str
    buttons: tuple[Button, ...]


def card_json(text: str, buttons: tuple[Button, ...], chosen: str | None = None) -> dict[str, Any]:
    """The standard card: the markdown, then the buttons (or, once pressed, the choice)."""
    contents: list[dict[str, Any]] = [{"type": "markdown", "text": text or " ", "id": "text"}]
    if chosen is not None:
        contents.append({"type": "markdown", "text": chosen, "id": "choice"})
    else:
        contents.append({"type": "action", "id": "actions", "actions": [
            {"type": "button", "id": f"{ACTION_PREFIX}{i}", "actionType": "request",
             "status": "primary" if i == 0 else "normal",
             "label": {"type": "text", "text": b.label, "id": f"label_{i}"}}
            for i, b in enumerate(buttons)
        ]})  # fmt: skip
    return {"config": {"autoLayout": True, "enableForward": False}, "contents": contents}


class ButtonCards:
    """Sends button cards and turns their presses into messages (every call paced by the
    channel's pacer, like the AI cards)."""

    def __init__(
        self, api: DingTalkApi, config: DingTalkConfig, pacer: Pacer, expired: str
    ) -> None:
        self.expired = expired  # the answer on a card whose buttons are gone (bot/texts.py)
        self.api = api
        self.config = config
        self.pacer = pacer
        self._waiting: OrderedDict[str, ButtonCard] = OrderedDict()

    async def send(
        self, chat: ChatRef, sender_id: str, text: str, buttons: tuple[Button, ...]
    ) -> None:
        """Create and deliver a card with `buttons`; raise ChannelError when DingTalk refuses."""
        card = ButtonCard(f"antler-btn-{uuid.uuid4().hex}", chat, sender_id, text, buttons)
        async with self.pacer.slot(chat, (), card.card_id):
            await self.api.call("POST", "/v1.0/card/instances", {
                "cardTemplateId": self.config.button_card_template_id,
                "outTrackId": card.card_id,
                "cardData": {"cardParamMap": {FULL_JSON_KEY: _dumps(card_json(text, buttons))}},
                "callbackType": "STREAM",
                "imGroupOpenSpaceModel": {"supportForward": False},
                "imRobotOpenSpaceModel": {"supportForward": False},
            })  # fmt: skip
        async with self.pacer.slot(chat, (), card.card_id):
            await self.api.call(
                "POST",
                "/v1.0/card/instances/deliver",
                deliver_body(card.card_id, chat, sender_id, self.config),
            )
        self._waiting[card.card_id] = card
        while len(self._waiting) > KEEP:
            self._waiting.popitem(last=False)

    async def press(
        self, data: dict[str, Any], *, channel: str, received_at: float
    ) -> InboundMessage | None:
        """The message a press stands for (None: not one of our waiting cards or buttons)."""
        callback = CardCallbackMessage.from_dict(data)
        action = _action_of(callback.content)
        card = self._waiting.get(callback.card_instance_id)
        if card is None or action is None or action >= len(card.buttons):
            log.info(
                "dingtalk: a press on an unknown card or button (%s)", callback.card_instance_id
            )
            if callback.card_instance_id.startswith("antler-btn-"):
                await self._show(None, callback.card_instance_id, "", self.expired)
            return None
        button = card.buttons[action]
        del self._waiting[card.card_id]  # one choice per card: the buttons go away
        await self._show(card.chat, card.card_id, card.text, f"✓ {button.label}")
        return InboundMessage(
            event_id=f"card:{card.card_id}:{action}",
            chat=card.chat,
            sender=UserRef(id=callback.user_id or card.sender_id),
            text=button.value,
            is_button=True,
            mentions_bot=True,
            received_at=received_at,
        )

    async def _show(self, chat: ChatRef | None, card_id: str, text: str, chosen: str) -> None:
        body = {
            "outTrackId": card_id,
            "cardData": {"cardParamMap": {FULL_JSON_KEY: _dumps(card_json(text, (), chosen))}},
            "cardUpdateOptions": {"updateCardDataByKey": True},
        }
        if chat is None:  # a card from before a restart: its chat is not known
            await self.api.call("PUT", "/v1.0/card/instances", body)
            return
        async with self.pacer.slot(chat, (), card_id):
            await self.api.call("PUT", "/v1.0/card/instances", body)


def _action_of(content: Any) -> int | None:
    private = content.get("cardPrivateData") if isinstance(content, dict) else None
    ids = private.get("actionIds") if isinstance(private, dict) else None
    if not ids or not str(ids[0]).startswith(ACTION_PREFIX):
        return None
    index = str(ids[0])[len(ACTION_PREFIX) :]
    return int(index) if index.isdigit() else None


def _dumps(card: dict[str, Any]) -> str:
    return json.dumps(card, ensure_ascii=False, separators=(",", ":"))
