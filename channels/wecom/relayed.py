"""WeCom's calls from a worker that does not hold the bot's connection, through `Channel.relay`.

`Link` is what replies and uploads call: the `Connection` on the holder, `RelayedLink` on the
other workers. A relayed call is one JSON send (`op` and its arguments) with a key of its own;
the holder runs it on its `Connection` (`run_send`) and answers with WeCom's acknowledgement or
the error, which the sender raises again as the same contract error (a frequency limit as
RateLimited, a refusal as WeComRefused), so the reply's streaming state stays what it would be
on the holder. Stream frames that are not the final, card updates and the upload commands are
idempotent (run again after a holder died); a push and a stream's final are never sent twice.
"""

from __future__ import annotations

import secrets
from typing import Any, Protocol

from channels.base import ChannelError, RateLimited
from channels.relay import Payload, SendRelay
from channels.wecom.connection import Connection, WeComRefused


class Link(Protocol):
    async def command(self, cmd: str, body: dict[str, Any], req_id: str | None = None) -> Any: ...

    async def stream(self, req_id: str, stream_id: str, content: str, *, finish: bool) -> Any: ...

    async def push(self, chatid: str, body: dict[str, Any]) -> Any: ...

    async def update_card(self, req_id: str, card: dict[str, Any]) -> Any: ...


class RelayedLink:
    """The Connection's calls, run by the worker holding it."""

    def __init__(self, relay: SendRelay) -> None:
        self.relay = relay

    async def _call(self, send: Payload, order: str, *, idempotent: bool) -> Any:
        key = secrets.token_hex(12)
        answer = await self.relay.call(send, key=key, order=order, idempotent=idempotent)
        return raise_error(answer)

    async def command(self, cmd: str, body: dict[str, Any], req_id: str | None = None) -> Any:
        send = {"op": "command", "cmd": cmd, "body": body, "req_id": req_id}
        return await self._call(send, str(body.get("upload_id") or cmd), idempotent=True)

    async def stream(self, req_id: str, stream_id: str, content: str, *, finish: bool) -> Any:
        send = {"op": "stream", "req_id": req_id, "stream_id": stream_id, "content": content}
        return await self._call({**send, "finish": finish}, req_id, idempotent=not finish)

    async def push(self, chatid: str, body: dict[str, Any]) -> Any:
        return await self._call(
            {"op": "push", "chatid": chatid, "body": body}, chatid, idempotent=False
        )

    async def update_card(self, req_id: str, card: dict[str, Any]) -> Any:
        send = {"op": "update_card", "req_id": req_id, "card": card}
        return await self._call(send, req_id, idempotent=True)


async def run_send(connection: Connection, send: Payload) -> Payload:
    """The holder's side: one relayed send on the connection; errors are answered, not raised."""
    try:
        return {"ok": await _dispatch(connection, send)}
    except RateLimited as exc:
        return {"error": "rate", "wait": exc.retry_after, "scope": exc.scope, "method": exc.method}
    except WeComRefused as exc:
        return {"error": "refused", "code": exc.code, "message": str(exc)}
    except ChannelError as exc:
        return {"error": "channel", "message": str(exc), "retryable": exc.retryable}


async def _dispatch(connection: Connection, send: Payload) -> Any:
    op = send.get("op")
    if op == "stream":
        return await connection.stream(
            send["req_id"], send["stream_id"], send["content"], finish=bool(send["finish"])
        )
    if op == "push":
        return await connection.push(send["chatid"], send["body"])
    if op == "update_card":
        return await connection.update_card(send["req_id"], send["card"])
    if op == "command":
        return await connection.command(send["cmd"], send["body"], send.get("req_id"))
    raise ChannelError(f"wecom relay: unknown send {op!r}")


def raise_error(answer: Payload) -> Any:
    """The acknowledgement of a relayed send, or its error raised as on the holder."""
    kind = answer.get("error")
    if kind is None:
        return answer.get("ok")
    if kind == "rate":
        scope, method = answer.get("scope", "chat"), str(answer.get("method") or "")
        raise RateLimited(float(answer["wait"]), scope=scope, method=method)
    if kind == "refused":
        error = WeComRefused("a relayed send", int(answer["code"]), "")
        error.args = (str(answer["message"]),)
        raise error
    raise ChannelError(str(answer.get("message")), retryable=bool(answer.get("retryable")))
