"""Files in (message resources -> the conversation's uploads) and out (image / file uploads)."""

from __future__ import annotations

import json
from pathlib import Path

from channels._threads import call_blocking
from channels.base import Attachment, ChannelError, FileTooLarge, InboundMessage
from channels.feishu.api import FeishuApi
from channels.files import free_path

IMAGE_LIMIT = 10 * 1024 * 1024
FILE_LIMIT = 30 * 1024 * 1024
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tiff", ".ico"})
_FILE_TYPES = {".pdf": "pdf", ".doc": "doc", ".docx": "doc", ".xls": "xls", ".xlsx": "xls",
               ".csv": "xls", ".ppt": "ppt", ".pptx": "ppt", ".mp4": "mp4", ".opus": "opus"}




async def fetch(
    api: FeishuApi, msg: InboundMessage, att: Attachment, dest_dir: Path, limit: int
) -> Path:
    """Download an attachment with the message-resource API; raise FileTooLarge over `limit`."""
    kind, _, key = att.ref.partition(":")
    if not key or not msg.message_id:
        raise ChannelError(f"attachment {att.name!r} has no Feishu file key")
    if att.size is not None and att.size > limit:
        raise FileTooLarge(att.name, att.size, limit)
    data, name = await api.resource(msg.message_id, key, "image" if kind == "image" else "file")
    if len(data) > limit:
        raise FileTooLarge(name or att.name, len(data), limit)
    return await call_blocking(
        _write, dest_dir, name or att.name, f"feishu_{key[-12:]}.bin", data)


def _write(dest_dir: Path, name: str, fallback: str, data: bytes) -> Path:
    path = free_path(dest_dir, name, fallback)
    path.write_bytes(data)
    return path


async def upload(api: FeishuApi, path: Path) -> tuple[str, str]:
    """Upload a file the agent produced; returns (msg_type, message content JSON)."""
    size = (await call_blocking(path.stat)).st_size
    if path.suffix.lower() in IMAGE_SUFFIXES and size <= IMAGE_LIMIT:
        key = await api.upload_image(path)
        return "image", json.dumps({"image_key": key})
    if size > FILE_LIMIT:
        raise FileTooLarge(path.name, size, FILE_LIMIT)
    key = await api.upload_file(path, _FILE_TYPES.get(path.suffix.lower(), "stream"))
    return "file", json.dumps({"file_key": key})
