"""Files in (download with the bot token) and out (the external upload pair)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.web.async_client import AsyncWebClient

from channels._threads import call_blocking
from channels.base import Attachment, ChannelError, FileTooLarge
from channels.files import free_path, save_chunks
from channels.slack.api import call


def token_allowed(url: str, api_base: str) -> bool:
    """Send the bot token only to Slack (or to the configured API host)."""
    host = urlsplit(url).hostname or ""
    api_host = urlsplit(api_base).hostname or ""
    return host == api_host or host == "slack.com" or host.endswith(".slack.com")


async def download(
    session: aiohttp.ClientSession,
    att: Attachment,
    dest_dir: Path,
    *,
    token: str,
    api_base: str,
    limit: int,
) -> Path:
    """Stream `att` into `dest_dir`; FileTooLarge above `limit` (checked before and during)."""
    if att.size is not None and att.size > limit:
        raise FileTooLarge(att.name, att.size, limit)
    if not token_allowed(att.ref, api_base):
        raise ChannelError(f"refusing to fetch {att.name} from an unknown host")
    dest = await call_blocking(free_path, dest_dir, att.name)
    headers = {"Authorization": f"Bearer {token}"}
    async with session.get(att.ref, headers=headers) as resp:
        if resp.status != 200 or resp.content_type.startswith("text/html"):
            raise ChannelError(f"download of {att.name} failed: HTTP {resp.status}")
        await save_chunks(resp.content.iter_chunked(64 * 1024), dest, att.name, limit)
    return dest


async def upload(
    client: AsyncWebClient, path: Path, *, channel: str, thread_ts: str | None
) -> None:
    """files.getUploadURLExternal + upload + files.completeUploadExternal (files_upload_v2)."""
    if not await call_blocking(path.is_file):
        raise ChannelError(f"no such file: {path.name}")
    await call(
        client.files_upload_v2(
            file=str(path),
            filename=path.name,
            title=path.name,
            channel=channel,
            thread_ts=thread_ts,
            request_file_info=False,
        ),
        what="files upload",
    )
