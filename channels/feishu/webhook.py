"""Webhook mode: Feishu POSTs events to a route on the service's HTTP server.

lark-oapi's `EventDispatcherHandler.do` does what Feishu specifies: the URL-verification
challenge, the verification token, the `X-Lark-Signature` check (sha256 of timestamp + nonce +
encrypt_key + body) and AES-256-CBC decryption with the encrypt key. It is pure CPU; the
handlers it calls only schedule work on the service loop, so it runs inline.
"""

from __future__ import annotations

import lark_oapi as lark
from aiohttp import web

from channels.base import Handler

_AUTH_FAILURES = (b"verification_token", b"signature", b"encrypt_key", b"ciphertext", b"padding")


def webhook_route(handler: lark.EventDispatcherHandler) -> Handler:
    async def receive(request: web.Request) -> web.Response:
        raw = lark.RawRequest()
        raw.uri = request.path
        raw.body = await request.read()
        raw.headers = request.headers  # type: ignore[assignment]  # case-insensitive lookups
        resp = handler.do(raw)
        status = resp.status_code or 500
        body = resp.content or b""
        if status >= 500 and any(word in body for word in _AUTH_FAILURES):
            status = 401
        return web.Response(status=status, body=resp.content,
                            content_type="application/json")

    return receive
