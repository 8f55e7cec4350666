"""One reply as the delivery journal sees it: its platform handle as it appears, and the final.

`DeliveryTrack` is what the ReplyStreamer writes through: the handle's ids after every call that
may have changed them, the final document before it is sent, and each part and file as it goes
out. `FinalPlan` is the final in a form the journal can store and a new process can resume.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot import texts
from bot.stores.journal import Journal
from channels.base import Button, Channel, InboundMessage, ReplyDoc, ReplyHandle, ToolStep
from channels.text import split_text

if TYPE_CHECKING:
    from bot.approvals import Resume

log = logging.getLogger("bot.delivery")


@dataclass(frozen=True, slots=True)
class FinalPlan:
    """The final answer as a list of sends: the first part (finish_reply), continuation parts,
    then files. `doc` carries status, note, progress and buttons of the whole reply."""

    doc: ReplyDoc
    parts: tuple[str, ...]
    files: tuple[str, ...] = field(default=())

    @property
    def steps(self) -> int:
        return len(self.parts) + len(self.files)

    def part_doc(self, index: int) -> ReplyDoc:
        last = index == len(self.parts) - 1
        buttons = self.doc.buttons if last else ()
        if index == 0:
            return replace(self.doc, text=self.parts[0], buttons=buttons)
        return replace(self.doc, text=self.parts[index], progress=(), buttons=buttons)

    def file(self, step: int) -> Path:
        return Path(self.files[step - len(self.parts)])

    def to_json(self) -> dict[str, Any]:
        d = self.doc
        return {
            "status": d.status,
            "note": d.note,
            "parts": list(self.parts),
            "files": list(self.files),
            "buttons": [[b.label, b.value] for b in d.buttons],
            "progress": [[s.id, s.label, s.state] for s in d.progress],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FinalPlan:
        doc = ReplyDoc(
            labels=texts.labels(),
            status=data.get("status", "done"),
            note=data.get("note", ""),
            buttons=tuple(Button(label=lb, value=v) for lb, v in data.get("buttons", [])),
            progress=tuple(
                ToolStep(id=i, label=lb, state=st) for i, lb, st in data.get("progress", [])
            ),
        )
        parts = tuple(data.get("parts") or [""])
        return cls(doc=doc, parts=parts, files=tuple(data.get("files", [])))


class DeliveryTrack:
    """Writes one reply's progress to the journal (a no-op without one)."""

    def __init__(self, journal: Journal | None, msg: InboundMessage, channel: Channel) -> None:
        self.journal = journal
        self.msg = msg
        self.channel = channel
        self._last: Mapping[str, Any] | None = None

    async def seen(self, handle: ReplyHandle) -> None:
        """Keep the handle's ids if they changed since last time."""
        state = self._state(handle)
        if self.journal is not None and state is not None and state != self._last:
            await self.journal.keep_handle(self.msg, state)
            self._last = state

    async def delivering(self, plan: FinalPlan) -> None:
        if self.journal is not None:
            await self.journal.delivering(self.msg, plan.to_json())

    async def sending(self, on_its_way: bool = True) -> None:
        if self.journal is not None:
            await self.journal.part_sending(self.msg, on_its_way)

    async def done(self, steps_done: int, handle: ReplyHandle) -> None:
        if self.journal is not None:
            state = self._state(handle)
            await self.journal.part_done(self.msg, steps_done, state)
            self._last = state or self._last

    def _state(self, handle: ReplyHandle) -> Mapping[str, Any] | None:
        if handle is None:
            return None
        try:
            return self.channel.handle_state(handle)
        except Exception:  # a handle the channel cannot describe is simply not kept
            return None


def final_parts(text: str, card: str, limit: int) -> list[str]:
    """The final's text in parts of at most `limit`; an approval `card` it ends with that does
    not fit with the answer is a part of its own, the last: its buttons are there, and it is the
    message a decision updates (`card_reply`)."""
    parts = split_text(text, limit) if text else [""]
    if len(parts) > 1 and card and text.endswith(card) and len(card) <= limit:
        head = text[: -len(card)].rstrip()
        return [*split_text(head, limit), card] if head else [card]
    return parts


async def card_reply(
    journal: Journal, channel: Channel, msg: InboundMessage, decided: Resume
) -> tuple[ReplyHandle, str] | None:
    """The message showing the approval card `decided` answers (the reply to the message
    `decided.card` of `msg`'s channel), rebuilt from the ids the journal kept, and the text it
    keeps above the decision; None when the ids are unknown. A reply split over several
    messages shows the card alone in its last (the channel keeps that part's ids as `last`)."""
    try:
        entry = await journal.entry(replace(msg, event_id=decided.card))
        state = entry.handle if entry else None
        if not state:
            return None
        last = state.get("last")
        if isinstance(last, Mapping):
            handle, shown = channel.restore_handle(msg, last), decided.own or decided.shown
        else:
            handle, shown = channel.restore_handle(msg, state), decided.shown
        return (handle, shown) if handle is not None else None
    except Exception as exc:  # an unreadable old handle: the answer gets a reply of its own
        log.warning("the reply to %s:%s is not found again: %s", msg.chat.key, decided.card, exc)
        return None
