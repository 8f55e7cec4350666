"""Streaming a reply into Feishu cards: CardKit streaming, or an interactive card patched in place.

A reply is one or more cards ("parts"): the answer is split with `render.split_for_cards`, and
when it outgrows a card the card is closed and the rest streams on in a further card. Each reply
has its own budget in the channel's Pacer (`CARD_BUDGETS`, declared in the capabilities) so no
card ever sees more than Feishu's limits (10 CardKit operations/s per card, we stay at ~5; 5
patches/s per message, we stay at 4). Every update carries the whole document and only changed
elements are sent, so a retried update (after `RateLimited`) is harmless.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from dataclasses import dataclass, field, replace
from typing import Literal

from channels.base import ChatRef, RateBudget, ReplyDoc
from channels.feishu import render
from channels.feishu.api import FeishuApi, FeishuApiError
from channels.pacing import Pacer

log = logging.getLogger("channels.feishu")
Mode = Literal["cardkit", "patch"]


CARD_BUDGETS = (
    RateBudget(scope="reply", method="cardkit", per_second=5.0, burst=5),
    RateBudget(scope="reply", method="patch", per_second=4.0, burst=1),
)


@dataclass
class CardPart:
    """One card on the platform. `sent` remembers what the platform shows (element -> content)."""

    message_id: str
    card_id: str | None
    sequence: int = 0
    streaming: bool = True
    sent: dict[str, str] = field(default_factory=dict)

    def next_seq(self) -> int:
        self.sequence += 1
        return self.sequence


@dataclass
class FeishuReply:
    """The reply handle the service passes back to update/finish/continuation/send_file."""

    chat: ChatRef
    reply_to: str | None
    in_thread: bool
    mode: Mode
    parts: list[CardPart] = field(default_factory=list)
    finished: int = 0  # parts that show final text; the stream may have opened more
    delivered: set[str] = field(default_factory=set)
    main_chat: bool = False  # answers a command sent in the main chat (its buttons say so)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    key: str = field(default_factory=lambda: f"feishu-reply-{uuid.uuid4().hex}")


def _scope(reply: FeishuReply) -> render.ButtonScope:
    return render.scope_of(reply.chat, reply.main_chat)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


class CardStreamer:
    """Opens, streams and finishes card replies through `FeishuApi`."""

    def __init__(
        self,
        api: FeishuApi,
        pacer: Pacer,
        mode: Mode = "cardkit",
        budgets: tuple[RateBudget, ...] = CARD_BUDGETS,
    ) -> None:
        self.api = api
        self.pacer = pacer
        self.mode: Mode = mode
        self._budgets = budgets

    def taken_over(self, reply: FeishuReply) -> FeishuReply:
        """A reply restored after a restart: its budget starts spent."""
        self.pacer.spend(
            reply.chat, tuple(b for b in self._budgets if b.method == reply.mode), reply.key
        )
        return reply

    async def _take(self, reply: FeishuReply) -> None:
        """One card operation within the reply's budget for its mode (and any 429 block)."""
        budgets = tuple(b for b in self._budgets if b.method == reply.mode)
        await self.pacer.acquire(reply.chat, budgets, reply.key)

    async def open(
        self, chat: ChatRef, reply_to: str | None, doc: ReplyDoc, *, in_thread: bool
    ) -> FeishuReply:
        reply = FeishuReply(chat=chat, reply_to=reply_to, in_thread=in_thread, mode=self.mode)
        async with reply.lock:
            await self._add_part(reply, doc, "")
        return reply

    async def update(self, reply: FeishuReply, doc: ReplyDoc) -> None:
        async with reply.lock:
            chunks = render.split_for_cards(doc.text)
            for i, chunk in enumerate(chunks):
                last = i == len(chunks) - 1
                part_doc = doc if last else replace(doc, progress=(), buttons=(), note="")
                if i >= len(reply.parts):
                    await self._add_part(reply, part_doc, chunk)
                    continue
                part = reply.parts[i]
                if last and not doc.final:
                    await self._stream(reply, part, part_doc, chunk, i)
                else:
                    await self._close(
                        reply,
                        part,
                        part_doc
                        if last
                        else replace(
                            doc,
                            status="done" if doc.status == "working" else doc.status,
                            progress=(),
                            buttons=(),
                            note="",
                        ),
                        chunk,
                        i,
                    )
            if doc.final:
                reply.finished = len(chunks)

    async def continuation(self, reply: FeishuReply, doc: ReplyDoc) -> None:
        """A further part of a long final answer: one finished card per chunk, reusing (and
        closing) a card the stream already opened for that part of the text."""
        async with reply.lock:
            for chunk in render.split_for_cards(doc.text):
                key = _digest(chunk)
                if key in reply.delivered:
                    continue
                index = reply.finished
                if index < len(reply.parts):
                    await self._close(reply, reply.parts[index], doc, chunk, index)
                else:
                    await self._add_part(reply, doc, chunk, final=True)
                reply.finished += 1
                reply.delivered.add(key)

    # ------------------------------------------------------------------ parts
    async def _add_part(
        self, reply: FeishuReply, doc: ReplyDoc, text: str, *, final: bool = False
    ) -> None:
        index = len(reply.parts)
        scope = _scope(reply)
        if reply.mode == "cardkit":
            try:
                await self._take(reply)
                card = render.cardkit_card(
                    doc, text, scope, streaming=not (final or doc.final), part=index
                )
                card_id = await self.api.card_create(render.dumps(card))
            except FeishuApiError as exc:
                log.warning("CardKit unavailable (%s); falling back to card patching", exc)
                self.mode = reply.mode = "patch"
            else:
                mid = await self._post(reply, render.card_reference(card_id))
                sent = {
                    render.PROGRESS_ID: card["body"]["elements"][0]["content"],
                    render.ANSWER_ID: card["body"]["elements"][1]["content"],
                }
                reply.parts.append(
                    CardPart(
                        mid,
                        card_id,
                        streaming=card["config"]["streaming_mode"],
                        sent=sent | {"card": render.dumps(card)},
                    )
                )
                return
        card_json = render.dumps(render.patch_card(doc, text, scope, part=index))
        mid = await self._post(reply, card_json)
        reply.parts.append(CardPart(mid, None, streaming=False, sent={"card": card_json}))

    async def _post(self, reply: FeishuReply, content: str) -> str:
        if reply.reply_to:
            return await self.api.reply(
                reply.reply_to, "interactive", content, in_thread=reply.in_thread
            )
        return await self.api.send(reply.chat.chat_id, "interactive", content)

    async def _stream(
        self, reply: FeishuReply, part: CardPart, doc: ReplyDoc, text: str, index: int
    ) -> None:
        if part.card_id is None:
            await self._patch(reply, part, doc, text, index)
            return
        if not part.streaming:  # a card closed by a restart: it streams again, in place
            await self._take(reply)
            await self.api.card_settings(
                part.card_id, {"config": {"streaming_mode": True}}, part.next_seq()
            )
            part.streaming = True
        wanted = {
            render.PROGRESS_ID: render.progress_md(doc.progress, doc.note),
            render.ANSWER_ID: render.answer_md(doc, text),
        }
        for element_id, content in wanted.items():
            if part.sent.get(element_id) != content:
                await self._take(reply)
                await self.api.element_content(part.card_id, element_id, content, part.next_seq())
                part.sent[element_id] = content

    async def _close(
        self, reply: FeishuReply, part: CardPart, doc: ReplyDoc, text: str, index: int
    ) -> None:
        """Give a card its final look: stop streaming, then replace it with the finished card."""
        if part.card_id is None:
            await self._patch(reply, part, doc, text, index)
            return
        card = render.dumps(
            render.cardkit_card(doc, text, _scope(reply), streaming=False, part=index)
        )
        if part.streaming:
            await self._take(reply)
            await self.api.card_settings(
                part.card_id, {"config": {"streaming_mode": False}}, part.next_seq()
            )
            part.streaming = False
        if part.sent.get("card") != card:
            await self._take(reply)
            await self.api.card_update(part.card_id, card, part.next_seq())
            part.sent["card"] = card

    async def _patch(
        self, reply: FeishuReply, part: CardPart, doc: ReplyDoc, text: str, index: int
    ) -> None:
        card = render.dumps(render.patch_card(doc, text, _scope(reply), part=index))
        if part.sent.get("card") != card:
            await self._take(reply)
            await self.api.patch(part.message_id, card)
            part.sent["card"] = card
