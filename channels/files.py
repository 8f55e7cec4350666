"""File helpers every channel uses: names for a user's attachment it saves, writing it within
the size limit, and the size check of a file it sends."""

from __future__ import annotations

import re
from collections.abc import AsyncIterable
from pathlib import Path

from channels._threads import call_blocking
from channels.base import FileTooLarge

_UNSAFE = re.compile(r"[^\w.\- ]+")


def safe_name(name: str | None, fallback: str = "file") -> str:
    """A plain file name: no directories or leading dots; word characters, `.`, `-`, space."""
    cleaned = _UNSAFE.sub("_", Path(name or "").name).strip(" .")
    return cleaned or fallback


def free_path(dest_dir: Path, name: str, fallback: str = "file") -> Path:
    """`dest_dir/<safe name>`, numbered (`a-1.pdf`) if taken; creates `dest_dir`."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    path = dest_dir / safe_name(name, fallback)
    stem, suffix, n = path.stem, path.suffix, 1
    while path.exists() or path.is_symlink():
        path = dest_dir / f"{stem}-{n}{suffix}"
        n += 1
    return path


async def save_chunks(chunks: AsyncIterable[bytes], dest: Path, name: str, limit: int) -> None:
    """Write a download's `chunks` to `dest`; past `limit` bytes, FileTooLarge and no file."""
    written = 0
    with dest.open("wb") as out:
        async for chunk in chunks:
            written += len(chunk)
            if written > limit:
                out.close()
                dest.unlink(missing_ok=True)
                raise FileTooLarge(name, written, limit)
            out.write(chunk)


async def outgoing_size(path: Path, limit: int) -> int:
    """The size of a file to send (read off the loop); FileTooLarge above the platform's
    `limit`, so the service tells the user in its own words."""
    size = (await call_blocking(path.stat)).st_size
    if size > limit:
        raise FileTooLarge(path.name, size, limit)
    return size
