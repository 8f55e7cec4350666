"""`DelegatedReplies`: the reply half of a `Channel` whose platform `Replies` object does the
work (Discord, Telegram): the channel's reply methods are that object's, once."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from channels.base import Channel, InboundMessage, ReplyDoc

H = TypeVar("H")


class StreamReplies(Protocol[H]):
    """A platform's reply writer (`channels/<platform>/stream.py`)."""

    async def open(self, msg: InboundMessage, doc: ReplyDoc) -> H: ...
    async def update(self, handle: H, doc: ReplyDoc) -> None: ...
    async def finish(self, handle: H, doc: ReplyDoc) -> None: ...
    async def materialize(self, handle: H, doc: ReplyDoc) -> None: ...
    async def continuation(self, handle: H, doc: ReplyDoc) -> None: ...


class DelegatedReplies(Channel, Generic[H]):
    """A channel whose `replies` opens, updates, finishes and continues its replies."""

    replies: StreamReplies[H]

    async def open_reply(self, msg: InboundMessage, doc: ReplyDoc) -> H:
        return await self.replies.open(msg, doc)

    async def update_reply(self, handle: H, doc: ReplyDoc) -> None:
        await self.replies.update(handle, doc)

    async def finish_reply(self, handle: H, doc: ReplyDoc) -> None:
        await self.replies.finish(handle, doc)

    async def materialize_reply(self, handle: H, doc: ReplyDoc) -> None:
        await self.replies.materialize(handle, doc)

    async def send_continuation(self, handle: H, doc: ReplyDoc) -> None:
        await self.replies.continuation(handle, doc)
