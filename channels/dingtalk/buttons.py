"""Choices as interactive cards: buttons whose presses come back over the Stream connection.

A robot markdown message has no buttons that work in groups: a `dtmd://` link sends the choice as
the user's own message, without the @ DingTalk needs to deliver a group message to the robot. So
a reply with buttons gets a card (`POST /v1.0/card/instances`, `callbackType: STREAM`, then
`/deliver`) on a card-platform template with a `msgButtons` list, the way dingtalk-stream's
`AIMarkdownCardInstance` / `CarouselCardInstance` show buttons: the markdown in
`staticMsgContent`, `flowStatus` 3 (finished) and, in `sys_full_json_obj`, one
`{"text", "color", "id", "request": true}` button per choice. (`StandardCard` is the template of
the robot's older `interactiveCards/send`; the card-instance API does not know it.) A press
arrives as a CALLBACK frame on `/v1.0/card/instances/callback` (the SDK's `CardCallbackMessage`,
the button's id in `cardPrivateData.actionIds`).

The card's choice is kept in the service's store (`ctx.choices`: SQLite or PostgreSQL), so a press
is honoured after a restart and on whichever worker holds the connection. The first press settles
it (atomically); the card then shows "✓ choice" in place of its buttons. When the reply the card
belongs to goes on (an approval decided anywhere: a press, the console, its expiry) the card is
closed: its buttons go, and where the card is the reply (no AI card) it shows the reply's text.
A press DingTalk delivers again, a second press, a press naming no button of the card, or one on
a card Antler does not know (forged, or older than the store keeps) changes nothing: one log
line, no card update.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any

from dingtalk_stream.card_callback import CardCallbackMessage

from channels.base import Button, ChannelError, ChatRef, InboundMessage, UserRef
from channels.choices import Choice, ChoiceStore
from channels.dingtalk.api import DingTalkApi
from channels.dingtalk.cards import FLOW_FINISHED, deliver_body
from channels.dingtalk.config import DingTalkConfig
from channels.pacing import Pacer

log = logging.getLogger("channels.dingtalk.buttons")

CARD_PREFIX = "antler-btn-"
ACTION_PREFIX = "antler_btn_"
FULL_JSON_KEY = "sys_full_json_obj"  # the template's structured part (order, msgButtons)
TEXT_KEY = "staticMsgContent"  # the template's markdown shown without streaming
CLOSED = "Closed"  # a card whose choice is no longer open (answered elsewhere, or expired)
ORDER = ("msgTitle", "msgContent", "staticMsgContent", "msgTextList", "msgImages", "msgButtons")


@dataclass(frozen=True)
class ButtonCard:
    card_id: str
    chat: ChatRef
    sender_id: str
    text: str
    buttons: tuple[Button, ...]

    def payload(self) -> dict[str, Any]:
        chat = self.chat
        return {
            "chat": [chat.channel, chat.chat_id, chat.chat_type, chat.workspace, chat.topic_id],
            "sender_id": self.sender_id,
            "text": self.text,
            "buttons": [[b.label, b.value] for b in self.buttons],
        }

    @classmethod
    def from_payload(cls, card_id: str, data: dict[str, Any]) -> ButtonCard:
        channel, chat_id, chat_type, workspace, topic_id = data["chat"]
        chat = ChatRef(
            channel=channel,
            chat_id=chat_id,
            chat_type=chat_type,
            workspace=workspace,
            topic_id=topic_id,
        )
        buttons = tuple(Button(label=str(b[0]), value=str(b[1])) for b in data["buttons"])
        return cls(card_id, chat, str(data["sender_id"]), str(data["text"]), buttons)


def card_params(
    text: str, buttons: tuple[Button, ...], chosen: str | None = None
) -> dict[str, str]:
    """The card's variables: the markdown, then the buttons (or, once pressed, the choice)."""
    full: dict[str, Any] = {"order": list(ORDER)}
    if chosen is None:
        full["msgButtons"] = [
            {"text": b.label, "color": "blue" if i == 0 else "gray",
             "id": f"{ACTION_PREFIX}{i}", "request": True}
            for i, b in enumerate(buttons)
        ]  # fmt: skip
    shown = text if chosen is None else f"{text}\n\n**{chosen}**"
    return {TEXT_KEY: shown or " ", "flowStatus": FLOW_FINISHED, FULL_JSON_KEY: _dumps(full)}


class ButtonCards:
    """Sends button cards and turns their presses into messages (every call paced by the
    channel's pacer, like the AI cards)."""

    def __init__(
        self, api: DingTalkApi, config: DingTalkConfig, pacer: Pacer, store: ChoiceStore
    ) -> None:
        self.api = api
        self.config = config
        self.pacer = pacer
        self.store = store

    async def send(
        self, chat: ChatRef, sender_id: str, text: str, buttons: tuple[Button, ...]
    ) -> str:
        """Create and deliver a card with `buttons` (returns its id); raise ChannelError when
        DingTalk refuses."""
        card = ButtonCard(f"{CARD_PREFIX}{uuid.uuid4().hex}", chat, sender_id, text, buttons)
        async with self.pacer.slot(chat, (), card.card_id):
            await self.api.call("POST", "/v1.0/card/instances", {
                "cardTemplateId": self.config.button_card_template_id,
                "outTrackId": card.card_id,
                "cardData": {"cardParamMap": card_params(text, buttons)},
                "callbackType": "STREAM",
                "imGroupOpenSpaceModel": {"supportForward": False},
                "imRobotOpenSpaceModel": {"supportForward": False},
            })  # fmt: skip
        # recorded before it is shown: a press can only follow the delivery
        await self.store.put(card.card_id, chat.channel, card.payload())
        async with self.pacer.slot(chat, (), card.card_id):
            await self.api.call(
                "POST",
                "/v1.0/card/instances/deliver",
                deliver_body(card.card_id, chat, sender_id, self.config),
            )
        return card.card_id

    async def close(self, card_id: str, text: str | None = None) -> None:
        """The card's buttons go (the reply it belongs to went on: its choice was made or is no
        longer open). It shows `text` (the reply now, where the card is the reply), else its own
        text with the choice pressed on it, or `CLOSED`."""
        found = await self._card(card_id)
        if found is None:
            return
        card, choice = found
        if text is not None:
            await self._show(replace(card, text=text), None)
            return
        pressed = choice.chosen if choice.chosen is not None else len(card.buttons)
        label = card.buttons[pressed].label if pressed < len(card.buttons) else ""
        await self._show(card, f"✓ {label}" if label else CLOSED)

    async def press(self, data: dict[str, Any], *, received_at: float) -> InboundMessage | None:
        """The message a press stands for (None: nothing to act on). A redelivered press stands
        for the same message (same event id: the journal takes it once)."""
        try:
            callback = CardCallbackMessage.from_dict(data)
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("dingtalk: skipped a malformed card callback (%s)", type(exc).__name__)
            return None
        card_id, action = str(callback.card_instance_id or ""), _action_of(callback.content)
        found = await self._card(card_id)
        if found is None:
            return None
        card, before = found
        if action is None or action >= len(card.buttons):
            log.warning("dingtalk: a press naming no button of card %s; ignored", card_id)
            return None
        settled = await self.store.choose(card_id, action)
        if settled is None or settled.chosen != action:
            log.info("dingtalk: card %s was already answered; this press is ignored", card_id)
            return None
        button = card.buttons[action]
        if before.chosen is None:  # this press made the choice (not a redelivery of it)
            await self._show(card, f"✓ {button.label}")
        return InboundMessage(
            event_id=f"card:{card.card_id}:{action}",
            chat=card.chat,
            sender=UserRef(id=str(callback.user_id or card.sender_id)),
            text=button.value,
            is_button=True,
            mentions_bot=True,
            received_at=received_at,
        )

    async def _card(self, card_id: str) -> tuple[ButtonCard, Choice] | None:
        """The card a press names and its choice as stored (None: not a card of ours)."""
        choice = await self.store.get(card_id) if card_id.startswith(CARD_PREFIX) else None
        if choice is None:
            log.warning(
                "dingtalk: a press on a card Antler does not know (%.80r); ignored", card_id
            )
            return None
        try:
            return ButtonCard.from_payload(card_id, choice.payload), choice
        except (KeyError, TypeError, ValueError, IndexError):
            log.warning("dingtalk: the stored choice of card %s is unreadable; ignored", card_id)
            return None

    async def _show(self, card: ButtonCard, chosen: str | None) -> None:
        """The card shows the choice in place of its buttons (a failure is logged: the choice
        is made either way)."""
        body = {
            "outTrackId": card.card_id,
            "cardData": {"cardParamMap": card_params(card.text, (), chosen)},
            "cardUpdateOptions": {"updateCardDataByKey": True},
        }
        try:
            async with self.pacer.slot(card.chat, (), card.card_id):
                await self.api.call("PUT", "/v1.0/card/instances", body)
        except ChannelError as exc:
            log.warning("dingtalk: card %s not updated with its choice: %s", card.card_id, exc)


def _action_of(content: Any) -> int | None:
    private = content.get("cardPrivateData") if isinstance(content, dict) else None
    ids = private.get("actionIds") if isinstance(private, dict) else None
    if not isinstance(ids, list) or not ids or not str(ids[0]).startswith(ACTION_PREFIX):
        return None
    index = str(ids[0])[len(ACTION_PREFIX) :]
    return int(index) if index.isdigit() and len(index) < 4 else None


def _dumps(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
