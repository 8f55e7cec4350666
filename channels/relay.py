"""Sends relayed to the worker holding a bot's one connection (the transport's protocol).

A platform whose replies can only travel on its one long connection (WeCom) cannot send from a
worker that does not hold that connection. With several workers, `bot.cluster` gives such a
channel a `SendRelay` (`Channel.relay`): a send made on a worker without the connection is
handed to the holder, which runs it in order per `order` key and answers with the handler's
result. Each send carries an idempotency key: the holder runs a key at most once; a send whose
holder died while running it is run again only when `idempotent` (replacing a stream's text),
otherwise it fails as `OutcomeUnknown` (never posted twice). While no worker holds the
connection a send waits, bounded, then fails retryable (the journal answers again).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from channels.errors import ChannelError

Payload = dict[str, Any]
"""A send and its answer: JSON-serialisable."""
Handler = Callable[[Payload], Awaitable[Payload]]
"""The holder's side: runs one send on the connection, answers (errors included) as JSON."""


class OutcomeUnknown(ChannelError):
    """The holder died while running this send: it may or may not have reached the platform."""


class SendRelay(Protocol):
    async def call(self, send: Payload, *, key: str, order: str, idempotent: bool) -> Payload:
        """Run `send` on the holder of the connection and return its answer; ChannelError
        (retryable) when no holder ran it in time, OutcomeUnknown as above."""
        ...

    def serve(self, handler: Handler) -> None:
        """This worker holds the connection now: run the sends relayed to it."""
        ...

    async def stop_serving(self) -> None:
        """This worker no longer holds the connection: leave what is queued to the next."""
        ...
