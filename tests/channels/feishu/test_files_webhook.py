"""Files in and out, and webhook mode (challenge, token, signature, encryption)."""

from __future__ import annotations

import base64
import hashlib
import json
import os

import aiohttp
import pytest
from aiohttp import web
from Crypto.Cipher import AES

from channels.base import Attachment, ChatRef, FileTooLarge, InboundMessage, ReplyDoc, UserRef
from tests.channels.feishu import payloads


def _msg(att: Attachment) -> InboundMessage:
    return InboundMessage(
        event_id="om_f",
        message_id="om_f",
        text="",
        attachments=(att,),
        chat=ChatRef(channel="feishu", chat_id="oc_dm"),
        sender=UserRef(id="ou_alice"),
    )


async def test_fetch_image_into_uploads(fake, make_channel, tmp_path):
    channel = await make_channel(start=False)
    fake.add_resource("om_f", "img_1", b"\x89PNG data", "photo.png")
    att = Attachment(name="img_1.png", ref="image:img_1", kind="image")
    path = await channel.fetch_file(_msg(att), att, tmp_path / "uploads")
    assert path.read_bytes() == b"\x89PNG data"
    assert path.name == "photo.png"
    [call] = fake.recorded("resource")
    assert call.path == "/open-apis/im/v1/messages/om_f/resources/img_1"


async def test_fetch_too_large(fake, make_channel, tmp_path):
    channel = await make_channel(start=False)
    fake.add_resource("om_f", "file_1", b"x" * 2048, "big.bin")
    channel.capabilities = type(channel.capabilities)(max_file_in=1024)
    att = Attachment(name="big.bin", ref="file:file_1")
    with pytest.raises(FileTooLarge):
        await channel.fetch_file(_msg(att), att, tmp_path)


async def test_service_limit_enforced_while_downloading(fake, make_channel, tmp_path):
    """The event carries no size: the stream stops at the service's limit, no file is left."""
    channel = await make_channel(start=False)
    fake.add_resource("om_f", "file_2", b"x" * 300_000, "big.bin")
    att = Attachment(name="big.bin", ref="file:file_2")
    uploads = tmp_path / "uploads"
    with pytest.raises(FileTooLarge, match=r"0\.25 MB"):
        await channel.fetch_file(_msg(att), att, uploads, limit=2**18)
    assert list(uploads.iterdir()) == []
    small = await channel.fetch_file(_msg(att), att, uploads, limit=2**20)
    assert small.stat().st_size == 300_000


async def test_send_image_and_file(fake, make_channel, tmp_path):
    channel = await make_channel(start=False)
    handle = await channel.open_reply(
        _msg(Attachment(name="a", ref="file:a")), ReplyDoc(status="working")
    )
    (tmp_path / "chart.png").write_bytes(b"png-bytes")
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.4")
    await channel.send_file(handle, tmp_path / "chart.png")
    await channel.send_file(handle, tmp_path / "report.pdf")
    image_reply = fake.replies_to("om_f", "image")
    file_reply = fake.replies_to("om_f", "file")
    assert len(image_reply) == len(file_reply) == 1
    image_key = json.loads(fake.messages[image_reply[0]]["content"])["image_key"]
    file_key = json.loads(fake.messages[file_reply[0]]["content"])["file_key"]
    assert fake.uploads[image_key][1] == b"png-bytes"
    assert fake.uploads[file_key] == ("report.pdf", b"%PDF-1.4")
    [upload] = fake.recorded("file_upload")
    assert upload.body["file_type"] == "pdf"


# ---------------------------------------------------------------------- webhook mode

TOKEN, KEY = "vtoken", "encryptkey123"


def _encrypt(plain: dict, key: str) -> str:
    raw = json.dumps(plain).encode()
    pad = 16 - len(raw) % 16
    iv = os.urandom(16)
    cipher = AES.new(hashlib.sha256(key.encode()).digest(), AES.MODE_CBC, iv)
    return base64.b64encode(iv + cipher.encrypt(raw + bytes([pad]) * pad)).decode()


def _signed(body: bytes, key: str) -> dict[str, str]:
    ts, nonce = "1700000000", "n0nce"
    sig = hashlib.sha256((ts + nonce + key).encode() + body).hexdigest()
    return {
        "X-Lark-Request-Timestamp": ts,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": sig,
        "Content-Type": "application/json",
    }


@pytest.fixture
async def webhook(fake, ctx, make_channel):
    channel = await make_channel(mode="webhook", verification_token=TOKEN, encrypt_key=KEY)
    handler = ctx.routes[("POST", "/feishu/events")]
    app = web.Application()
    app.router.add_post("/feishu/events", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    async with aiohttp.ClientSession() as session:
        yield channel, session, f"http://127.0.0.1:{port}/feishu/events"
    await runner.cleanup()


async def test_webhook_url_challenge(webhook):
    _, session, url = webhook
    body = {
        "encrypt": _encrypt({"challenge": "c123", "token": TOKEN, "type": "url_verification"}, KEY)
    }
    async with session.post(url, json=body) as resp:
        assert resp.status == 200
        assert (await resp.json())["challenge"] == "c123"


async def test_webhook_encrypted_signed_event_published(webhook, ctx, fake):
    _, session, url = webhook
    event = payloads.message_event("via webhook")
    event["header"]["token"] = TOKEN
    raw = json.dumps({"encrypt": _encrypt(event, KEY)}).encode()
    async with session.post(url, data=raw, headers=_signed(raw, KEY)) as resp:
        assert resp.status == 200
    [msg] = await ctx.wait_published()
    assert msg.text == "via webhook"
    assert not fake.recorded("ws_endpoint")


async def test_webhook_rejects_bad_signature_and_token(webhook, ctx):
    _, session, url = webhook
    event = payloads.message_event("forged")
    event["header"]["token"] = TOKEN
    raw = json.dumps({"encrypt": _encrypt(event, KEY)}).encode()
    headers = _signed(raw, "wrong-key")
    async with session.post(url, data=raw, headers=headers) as resp:
        assert resp.status == 401
    event["header"]["token"] = "wrong-token"
    raw = json.dumps({"encrypt": _encrypt(event, KEY)}).encode()
    async with session.post(url, data=raw, headers=_signed(raw, KEY)) as resp:
        assert resp.status == 401
    assert ctx.published == []


async def test_webhook_card_action(webhook, ctx):
    _, session, url = webhook
    event = payloads.card_action({"cmd": "/new", "chat_type": "dm", "topic": ""})
    event["header"]["token"] = TOKEN
    raw = json.dumps({"encrypt": _encrypt(event, KEY)}).encode()
    async with session.post(url, data=raw, headers=_signed(raw, KEY)) as resp:
        assert resp.status == 200
        assert "toast" in await resp.json()
    [msg] = await ctx.wait_published()
    assert (msg.text, msg.is_button) == ("/new", True)
