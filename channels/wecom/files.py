"""Files in (downloaded, then AES-decrypted) and out (WeCom's upload commands, then a push).

In: an image or file callback names a URL (it expires) and an `aeskey`. The download is the
ciphertext: AES-256-CBC, the key the base64 `aeskey` (43 characters, sent without its `=`), the
IV its first 16 bytes, PKCS#7 padding to 32 bytes. The SDK's `decrypt_file` handles the key and
the padding; the download itself is streamed here so the size limit holds while it runs (the
SDK's reads the whole body). The file's name comes from the download's Content-Disposition.

Out: wecom-aibot-python-sdk 1.0.2 has no upload helper. WeCom's documented long-connection
upload is three commands on the same socket (`aibot_upload_media_init` with the size, chunk
count and MD5; `aibot_upload_media_chunk` with each 512 KB chunk in base64;
`aibot_upload_media_finish`, answered with a `media_id`), sent through the SDK's generic
`reply`; the file then goes to the chat as an `image` or `file` message (`send_message`).
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import aiohttp
from aibot import api as sdk_api
from aibot import decrypt_file

from channels._threads import call_blocking
from channels.base import Attachment, ChannelError, ChatRef, FileTooLarge
from channels.files import free_path, outgoing_size
from channels.wecom.relayed import Link

CHUNK = 512 * 1024
IMAGE_LIMIT = 10 * 1024 * 1024
PADDING = 32
_IMAGES = {".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp"}


async def download(att: Attachment, dest_dir: Path, *, limit: int) -> Path:
    """Fetch `att`, decrypt it and save it in `dest_dir`; FileTooLarge above `limit`."""
    try:
        ref: dict[str, Any] = json.loads(att.ref)
    except ValueError as exc:
        raise ChannelError(f"unreadable attachment reference for {att.name}") from exc
    data, name = await _fetch(str(ref.get("url") or ""), att.name, limit + PADDING)
    key = str(ref.get("aeskey") or "")
    if key:
        try:
            data = await call_blocking(decrypt_file, data, key)
        except (ValueError, RuntimeError) as exc:
            raise ChannelError(f"{att.name} could not be decrypted: {exc}") from exc
    if len(data) > limit:
        raise FileTooLarge(att.name, len(data), limit)
    dest = await call_blocking(free_path, dest_dir, name or att.name)
    await call_blocking(dest.write_bytes, data)
    return dest


async def _fetch(url: str, name: str, limit: int) -> tuple[bytes, str]:
    """The body of `url` (at most `limit` bytes) and the name its headers give."""
    connector = aiohttp.TCPConnector(ssl=sdk_api._SSL_CONTEXT)
    timeout = aiohttp.ClientTimeout(total=120)
    try:
        async with (
            aiohttp.ClientSession(connector=connector, timeout=timeout) as session,
            session.get(url) as resp,
        ):
            if resp.status != 200:
                raise ChannelError(f"download of {name} failed: HTTP {resp.status}")
            if resp.content_length is not None and resp.content_length > limit:
                raise FileTooLarge(name, resp.content_length, limit - PADDING)
            chunks, size = [], 0
            async for chunk in resp.content.iter_chunked(64 * 1024):
                size += len(chunk)
                if size > limit:
                    raise FileTooLarge(name, size, limit - PADDING)
                chunks.append(chunk)
            disposition = resp.content_disposition
            return b"".join(chunks), (disposition.filename if disposition else None) or ""
    except aiohttp.ClientError as exc:
        raise ChannelError(f"download of {name} failed: {exc!r}", retryable=True) from exc


async def upload(conn: Link, chat: ChatRef, path: Path, limit: int) -> None:
    """Upload `path` and send it to `chat` (an image as an image, up to WeCom's 10 MB)."""
    if not await call_blocking(path.is_file):
        raise ChannelError(f"no such file: {path.name}")
    size = await outgoing_size(path, limit)
    data = await call_blocking(path.read_bytes)
    kind = "image" if path.suffix.lower() in _IMAGES and size <= IMAGE_LIMIT else "file"
    chunks = [data[i : i + CHUNK] for i in range(0, max(len(data), 1), CHUNK)]
    init = await conn.command(
        "aibot_upload_media_init",
        {
            "type": kind,
            "filename": path.name,
            "total_size": size,
            "total_chunks": len(chunks),
            "md5": hashlib.md5(data).hexdigest(),
        },
    )
    upload_id = _field(init, "upload_id")
    for index, chunk in enumerate(chunks):
        await conn.command(
            "aibot_upload_media_chunk",
            {"upload_id": upload_id, "chunk_index": index, "base64_data": _b64(chunk)},
        )
    done = await conn.command("aibot_upload_media_finish", {"upload_id": upload_id})
    media_id = _field(done, "media_id")
    await conn.push(chat.chat_id, {"msgtype": kind, kind: {"media_id": media_id}})


def _b64(chunk: bytes) -> str:
    return base64.b64encode(chunk).decode()


def _field(ack: Any, name: str) -> str:
    body = ack.get("body") if isinstance(ack, dict) else None
    value = body.get(name) if isinstance(body, dict) else None
    if not value:
        raise ChannelError(f"wecom upload: no {name} in the answer")
    return str(value)
