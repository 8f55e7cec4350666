"""Webhook mode: Feishu POSTs events to a route on the service's HTTP server.

lark-oapi's `EventDispatcherHandler.do` does what Feishu specifies: the URL-verification
challenge, the verification token, the `X-Lark-Signature` check (sha256 of timestamp + nonce +
encrypt_key + body) and AES-256-CBC decryption with the encrypt key. It is pure CPU; the
handlers it calls only schedule work on the service loop, so it runs inline.

Whatever it rejects (unsigned, forged, undecryptable, not JSON) is answered 401 with a fixed body
and one WARNING line here; lark's own traceback for it is filtered out. An authenticated event of
a type we do not handle is acknowledged (200) so Feishu does not redeliver it.
"""

from __future__ import annotations

import json
import logging

import lark_oapi as lark
from aiohttp import web

from channels.base import Handler

log = logging.getLogger("channels.feishu")

REJECTED = b'{"error":"unauthorized"}'
IGNORED = b'{"msg":"ignored"}'
_LARK_FAILURE = "handle event failed"


class _NoWebhookTraceback(logging.Filter):
    """Drops lark's `handle event failed` traceback; the route logs one WARNING line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_LARK_FAILURE)


_FILTER = _NoWebhookTraceback()


def webhook_route(handler: lark.EventDispatcherHandler) -> Handler:
    lark_log = logging.getLogger("Lark")
    if _FILTER not in lark_log.filters:
        lark_log.addFilter(_FILTER)

    async def receive(request: web.Request) -> web.Response:
        raw = lark.RawRequest()
        raw.uri = request.path
        raw.body = await request.read()
        raw.headers = request.headers  # case-insensitive lookups
        try:
            resp = handler.do(raw)
        except Exception as exc:  # lark catches its own errors; this is belt and braces
            return _reject(request, type(exc).__name__)
        status = resp.status_code or 500
        if status < 300:
            return web.Response(status=status, body=resp.content, content_type="application/json")
        reason = _reason(resp.content)
        if reason.startswith("processor not found"):
            log.info("feishu webhook: event type we do not handle acknowledged (%s)", reason)
            return web.Response(status=200, body=IGNORED, content_type="application/json")
        return _reject(request, reason)

    return receive


def _reject(request: web.Request, reason: str) -> web.Response:
    log.warning("feishu webhook: rejected a request from %s: %s", request.remote, reason)
    return web.Response(status=401, body=REJECTED, content_type="application/json")


def _reason(content: bytes | None) -> str:
    try:
        text = str(json.loads(content or b"{}").get("msg") or "")
    except (ValueError, AttributeError):
        text = ""
    return (text or "rejected")[:120]
