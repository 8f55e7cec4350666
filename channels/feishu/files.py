"""Files in (message resources -> the conversation's uploads) and out (image / file uploads)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import lark_oapi as lark
import requests
from lark_oapi.core.token import TokenManager

from channels._threads import call_blocking
from channels.base import Attachment, ChannelError, FileTooLarge, InboundMessage
from channels.feishu.api import FeishuApi
from channels.files import free_path, outgoing_size

IMAGE_LIMIT = 10 * 1024 * 1024
FILE_LIMIT = 30 * 1024 * 1024
CHUNK = 64 * 1024
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tiff", ".ico"})
_FILE_TYPES = {
    ".pdf": "pdf",
    ".doc": "doc",
    ".docx": "doc",
    ".xls": "xls",
    ".xlsx": "xls",
    ".csv": "xls",
    ".ppt": "ppt",
    ".pptx": "ppt",
    ".mp4": "mp4",
    ".opus": "opus",
}


async def fetch(
    api: FeishuApi, msg: InboundMessage, att: Attachment, dest_dir: Path, limit: int
) -> Path:
    """Stream an attachment from the message-resource API; FileTooLarge over `limit`, checked
    before (declared size) and while downloading (the event usually carries no size)."""
    kind, _, key = att.ref.partition(":")
    if not key or not msg.message_id:
        raise ChannelError(f"attachment {att.name!r} has no Feishu file key")
    if att.size is not None and att.size > limit:
        raise FileTooLarge(att.name, att.size, limit)
    resource = Resource(msg.message_id, key, "image" if kind == "image" else "file")
    return await call_blocking(_stream, api.client, resource, dest_dir, att.name, limit)


@dataclass(frozen=True)
class Resource:
    message_id: str
    key: str
    kind: str

    def url(self, domain: str) -> str:
        base = domain.rstrip("/")
        return f"{base}/open-apis/im/v1/messages/{self.message_id}/resources/{self.key}"


def _stream(client: lark.Client, res: Resource, dest_dir: Path, name: str, limit: int) -> Path:
    """Blocking (on the worker thread): GET with the tenant token, written chunk by chunk."""
    config = client._config
    try:
        token = TokenManager.get_self_tenant_token(config)
        resp = requests.get(
            res.url(str(config.domain)),
            params={"type": res.kind},
            stream=True,
            headers={"Authorization": f"Bearer {token}"},
            timeout=config.timeout,
        )
    except Exception as exc:  # requests and token errors: connection refused, timeouts
        raise ChannelError(f"feishu resource failed: {exc}", retryable=True) from exc
    with resp:
        if resp.status_code != 200 or "json" in resp.headers.get("Content-Type", ""):
            raise ChannelError(f"feishu resource failed: HTTP {resp.status_code}")
        path = free_path(dest_dir, _disposition_name(resp) or name, f"feishu_{res.key[-12:]}.bin")
        written = 0
        try:
            with path.open("wb") as out:
                for chunk in resp.iter_content(CHUNK):
                    written += len(chunk)
                    if written > limit:
                        raise FileTooLarge(path.name, written, limit)
                    out.write(chunk)
        except BaseException:
            path.unlink(missing_ok=True)  # never leave a partial file for the agent
            raise
    return path


def _disposition_name(resp: requests.Response) -> str:
    match = re.search(r'filename="?([^";]+)"?', resp.headers.get("Content-Disposition", ""))
    return match.group(1) if match else ""


async def upload(api: FeishuApi, path: Path) -> tuple[str, str]:
    """Upload a file the agent produced; returns (msg_type, message content JSON)."""
    size = await outgoing_size(path, FILE_LIMIT)
    if path.suffix.lower() in IMAGE_SUFFIXES and size <= IMAGE_LIMIT:
        key = await api.upload_image(path)
        return "image", json.dumps({"image_key": key})
    key = await api.upload_file(path, _FILE_TYPES.get(path.suffix.lower(), "stream"))
    return "file", json.dumps({"file_key": key})
