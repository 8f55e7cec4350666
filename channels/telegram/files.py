"""Files both ways: getFile + download (<= 20 MB); sendPhoto (<= 10 MB), sendDocument (<= 50 MB)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx

from channels._threads import call_blocking
from channels.base import Attachment, ChannelError, ChatRef, FileTooLarge
from channels.files import free_path, outgoing_size
from channels.telegram.api import Sender, guarded, where

log = logging.getLogger("channels.telegram")

MB = 1024 * 1024
DOWNLOAD_LIMIT = 20 * MB
CHUNK = 64 * 1024
PHOTO_LIMIT = 10 * MB
DOCUMENT_LIMIT = 50 * MB
PHOTO_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".webp"}


async def fetch(sender: Sender, att: Attachment, dest_dir: Path, limit: int | None = None) -> Path:
    """Stream an attachment to `dest_dir`, at most `limit` bytes (and Telegram's 20 MB)."""
    cap = DOWNLOAD_LIMIT if limit is None else min(limit, DOWNLOAD_LIMIT)
    if att.size is not None and att.size > cap:
        raise FileTooLarge(att.name, att.size, cap)

    async def get_file() -> Any:
        return await guarded(sender.gate, lambda: sender.bot.get_file(att.ref))

    file = await sender.patiently(get_file)
    if file is not None and file.file_size and file.file_size > cap:
        raise FileTooLarge(att.name, file.file_size, cap)
    if file is None or not file.file_path:
        raise ChannelError(f"telegram returned no file for {att.name}")
    path = free_path(dest_dir, att.name)
    try:
        await _stream(str(file.file_path), path, cap, att.name)
    except BaseException:
        path.unlink(missing_ok=True)  # never leave a partial file for the agent
        raise
    return path


async def _stream(url: str, path: Path, cap: int, name: str) -> None:
    """GET the file URL chunk by chunk; the URL holds the bot token, so no error names it."""
    written = 0
    try:
        async with httpx.AsyncClient(timeout=60) as client, client.stream("GET", url) as resp:
            if resp.status_code != 200:
                raise ChannelError(
                    f"download of {name} failed: HTTP {resp.status_code}",
                    retryable=resp.status_code >= 500,
                )
            with path.open("wb") as out:
                async for chunk in resp.aiter_bytes(CHUNK):
                    written += len(chunk)
                    if written > cap:
                        raise FileTooLarge(name, written, cap)
                    out.write(chunk)
    except httpx.HTTPError as exc:
        raise ChannelError(
            f"the connection to Telegram broke while downloading {name}", retryable=True
        ) from exc


async def send(sender: Sender, chat: ChatRef, path: Path, reply_to: int | None) -> None:
    """Send `path` as a photo or document; FileTooLarge over Telegram's 50 MB for bots (the
    service tells the user, in its own words)."""
    size = await outgoing_size(path, DOCUMENT_LIMIT)
    as_photo = path.suffix.lower() in PHOTO_SUFFIXES and size <= PHOTO_LIMIT
    extra: dict[str, Any] = {
        "reply_to_message_id": reply_to,
        "allow_sending_without_reply": True,
        **where(chat),
    }

    async def upload() -> Any:
        data = await call_blocking(path.read_bytes)
        if as_photo:
            call = sender.bot.send_photo(photo=data, filename=path.name, **extra)
        else:
            call = sender.bot.send_document(document=data, filename=path.name, **extra)
        return await call

    await sender.patiently(lambda: sender.visible(chat, upload))
    log.debug("sent %s (%d bytes) to %s", path.name, size, chat.key)
