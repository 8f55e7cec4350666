"""Files in (an attachment's CDN URL, streamed within the limit) and out (a multipart send)."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import discord

from channels._threads import call_blocking
from channels.base import Attachment, ChannelError, ChatRef, FileTooLarge
from channels.discord.api import Sender
from channels.files import free_path, save_chunks

CHUNK = 64 * 1024


async def download(
    session: aiohttp.ClientSession, att: Attachment, dest_dir: Path, *, limit: int
) -> Path:
    """Stream `att` into `dest_dir`; FileTooLarge above `limit` (checked before and during).
    Attachment URLs are signed by Discord: no token is sent with them."""
    if att.size is not None and att.size > limit:
        raise FileTooLarge(att.name, att.size, limit)
    dest = await call_blocking(free_path, dest_dir, att.name)
    try:
        async with session.get(att.ref) as resp:
            if resp.status != 200:
                raise ChannelError(f"download of {att.name} failed: HTTP {resp.status}")
            await save_chunks(resp.content.iter_chunked(CHUNK), dest, att.name, limit)
    except aiohttp.ClientError as exc:
        dest.unlink(missing_ok=True)
        raise ChannelError(f"download of {att.name} failed: {exc!r}", retryable=True) from exc
    return dest


async def upload(
    client: discord.Client, sender: Sender, chat: ChatRef, target: int, path: Path, limit: int
) -> None:
    """Send `path` as an attachment of a new message in `target`."""
    if not await call_blocking(path.is_file):
        raise ChannelError(f"no such file: {path.name}")
    size = (await call_blocking(path.stat)).st_size
    if size > limit:
        raise FileTooLarge(path.name, size, limit)
    where = client.get_partial_messageable(target)

    async def send() -> discord.Message:
        return await where.send(file=discord.File(path, filename=path.name))

    await sender.paced(chat, send, "send file")
