"""Files both ways: getFile + download (<= 20 MB); sendPhoto (<= 10 MB), sendDocument (<= 50 MB)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from channels._threads import call_blocking
from channels.base import Attachment, ChannelError, ChatRef, FileTooLarge
from channels.files import free_path
from channels.telegram.api import Sender, guarded, where

log = logging.getLogger("channels.telegram")

MB = 1024 * 1024
DOWNLOAD_LIMIT = 20 * MB
PHOTO_LIMIT = 10 * MB
DOCUMENT_LIMIT = 50 * MB
PHOTO_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".webp"}




async def fetch(sender: Sender, att: Attachment, dest_dir: Path) -> Path:
    """Download an attachment; FileTooLarge above Telegram's 20 MB bot download limit."""
    if att.size is not None and att.size > DOWNLOAD_LIMIT:
        raise FileTooLarge(att.name, att.size, DOWNLOAD_LIMIT)

    async def get_file() -> Any:
        return await guarded(sender.gate, lambda: sender.bot.get_file(att.ref))

    file = await sender.patiently(get_file)
    if file is None:
        raise ChannelError(f"telegram returned no file for {att.name}")
    if file.file_size and file.file_size > DOWNLOAD_LIMIT:
        raise FileTooLarge(att.name, file.file_size, DOWNLOAD_LIMIT)
    path = free_path(dest_dir, att.name)
    try:
        await file.download_to_drive(path)
    except Exception as exc:
        path.unlink(missing_ok=True)
        raise ChannelError(f"download of {att.name} failed: {exc}", retryable=True) from exc
    size = file_size(path)
    if size > DOWNLOAD_LIMIT:
        path.unlink()
        raise FileTooLarge(att.name, size, DOWNLOAD_LIMIT)
    return path


def file_size(path: Path) -> int:
    return path.stat().st_size


def too_large_text(path: Path) -> str:
    return (
        f"I made {path.name} but can't send it here: it is larger than the "
        f"{DOCUMENT_LIMIT // MB} MB limit Telegram sets for files from bots."
    )


async def send(sender: Sender, chat: ChatRef, path: Path, reply_to: int | None) -> bool:
    """Send `path` as a photo or document. False: too large (the caller says so)."""
    size = file_size(path)
    if size > DOCUMENT_LIMIT:
        return False
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
    return True
