"""File-name helpers every channel uses when it saves a user's attachment."""

from __future__ import annotations

import re
from pathlib import Path

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
