"""What the dispatcher's lanes show of the conversations on this worker: which replies run,
for whom, and what waits (read by /status, /stop, the console and the metrics)."""

from __future__ import annotations

from bot.lanes import Lane, current_message
from channels.base import ChatRef, InboundMessage, ReplyDoc


class LaneViews:
    lanes: dict[str, Lane]

    def runs_in_chat(self, chat: ChatRef, sender_id: str) -> list[InboundMessage]:
        """The messages of `sender_id` whose replies are being written anywhere in `chat`
        (the chat itself and each of its threads or topics)."""
        top = chat.with_topic(None)
        return [
            msg
            for lane in self.lanes.values()
            if (msg := current_message(lane)) is not None
            and msg.chat.with_topic(None) == top
            and msg.sender.id == sender_id
        ]

    def is_running(self, key: str) -> bool:
        lane = self.lanes.get(key)
        return lane is not None and lane.run is not None

    def live_reply(self, key: str) -> ReplyDoc | None:
        """The document of the reply being written in conversation `key` on this worker."""
        lane = self.lanes.get(key)
        if lane is None or lane.run is None or lane.reply is None:
            return None
        return lane.reply.doc

    def queued(self, key: str) -> int:
        """Messages of conversation `key` waiting: behind its reply, or for a run slot."""
        lane = self.lanes.get(key)
        return len(lane.jobs) + (lane.waiting is not None) if lane else 0

    @property
    def active_runs(self) -> int:
        return sum(1 for lane in self.lanes.values() if lane.run is not None)
