"""Where a message's time goes between its update and its first sign (issue 34, point 1).

`StageTrace` wraps the service's intake functions while a bench runs (the bench's own
instrumentation; nothing in the service changes): each wrapped call stamps, per chat, the
monotonic time it began. `report()` gives, for every stage, the time from the update's push to
the stage, p50/p99 over the messages, so the stage where the waiting happens stands out.
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from bench.support import pct

Key = Callable[..., Any]


class StageTrace:
    def __init__(self) -> None:
        self.stamps: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        self.order: list[str] = []
        self._undo: list[tuple[Any, str, Any]] = []

    def stamp(self, stage: str, chat: str) -> None:
        if stage not in self.order:
            self.order.append(stage)
        self.stamps[stage][str(chat)].append(time.monotonic())

    def wrap(self, owner: Any, name: str, stage: str, chat_of: Key, after: bool = False) -> None:
        """Stamp `stage` for the chat `chat_of(*args)` names when `owner.name` is called (or,
        with `after`, when its call returned)."""
        original = getattr(owner, name)
        trace = self

        @functools.wraps(original)
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            chat = chat_of(*args, **kwargs)
            if chat is not None and not after:
                trace.stamp(stage, chat)
            result = await original(*args, **kwargs)
            if chat is not None and after:
                trace.stamp(stage, chat)
            return result

        setattr(owner, name, wrapped)
        self._undo.append((owner, name, original))

    def undo(self) -> None:
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)
        self._undo.clear()

    def first_after(self, stage: str, chat: str, since: float) -> float | None:
        times = [t for t in self.stamps[stage].get(str(chat), ()) if t >= since]
        return min(times) if times else None

    def report(self, pushed: list[tuple[str, float]], prefix: str) -> dict[str, float]:
        """For each stage: push → stage p50/p99 in ms over the messages `pushed` (chat, time)."""
        figures: dict[str, float] = {}
        for stage in self.order:
            waits = [
                t - at
                for chat, at in pushed
                if (t := self.first_after(stage, chat, at)) is not None
            ]
            figures[f"{prefix}{stage}_ms_p50"] = round(pct(waits, 50) * 1000, 1)
            figures[f"{prefix}{stage}_ms_p99"] = round(pct(waits, 99) * 1000, 1)
        return figures


def telegram_stages(trace: StageTrace) -> StageTrace:
    """The stages of a Telegram update, from getUpdates' answer to the sign's call."""
    from bot.bus import MessageBus
    from bot.context import ServiceContext
    from bot.dispatcher import Dispatcher
    from bot.turns import TurnRunner
    from channels.telegram.api import Sender
    from channels.telegram.inbound import Inbound, Poller
    from channels.telegram.stream import Replies

    def update_chat(_self: Any, update: Any) -> Any:
        msg = update.get("message") or {}
        return (msg.get("chat") or {}).get("id")

    def msg_chat(_self: Any, msg: Any, *_: Any, **__: Any) -> str:
        return msg.chat.chat_id

    def channel_msg_chat(_self: Any, _channel: Any, msg: Any, *_: Any, **__: Any) -> str:
        return msg.chat.chat_id

    def chat_chat(_self: Any, chat: Any, *_: Any, **__: Any) -> str:
        return chat.chat_id

    original = Poller._get_updates

    async def received(self: Any) -> Any:
        updates = await original(self)
        for update in updates:
            if (chat := update_chat(self, update)) is not None:
                trace.stamp("0_received", chat)
        return updates

    Poller._get_updates = received  # type: ignore[method-assign]
    trace._undo.append((Poller, "_get_updates", original))
    trace.wrap(Inbound, "handle", "1_parse", update_chat)
    trace.wrap(ServiceContext, "publish", "2_gate", msg_chat)
    trace.wrap(MessageBus, "publish", "3_journal", msg_chat)
    trace.wrap(MessageBus, "publish", "4_bus_queued", msg_chat, after=True)
    trace.wrap(Dispatcher, "dispatch", "5_dispatch", msg_chat)
    trace.wrap(TurnRunner, "run", "6_turn_start", channel_msg_chat)
    trace.wrap(Replies, "open", "7_reply_open", msg_chat)
    trace.wrap(Sender, "typing", "8_typing_call", chat_chat)
    trace.wrap(Sender, "typing", "9_typing_answered", chat_chat, after=True)
    trace.wrap(Sender, "visible", "8_visible_call", chat_chat)
    return trace
