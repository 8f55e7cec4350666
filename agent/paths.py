"""Per-thread host directories: `<data_dir>/threads/<id>/user-data/{workspace,uploads,outputs}`.

The agent sees them as `/mnt/user-data/...` (VIRTUAL_ROOT); the sandbox maps one onto the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

VIRTUAL_ROOT = "/mnt/user-data"
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$")


@dataclass(frozen=True, slots=True)
class ThreadDirs:
    """Host paths of one thread's files."""

    root: Path
    workspace: Path
    uploads: Path
    outputs: Path


def check_thread_id(thread_id: str) -> str:
    """Thread ids become directory names: letters, digits and `._:-` only, no `..`."""
    if not _SAFE_ID.fullmatch(thread_id) or ".." in thread_id:
        raise ValueError(f"invalid thread id: {thread_id!r}")
    return thread_id


def thread_dirs(data_dir: Path, thread_id: str, *, create: bool = True) -> ThreadDirs:
    root = data_dir / "threads" / check_thread_id(thread_id) / "user-data"
    dirs = ThreadDirs(
        root=root,
        workspace=root / "workspace",
        uploads=root / "uploads",
        outputs=root / "outputs",
    )
    if create:
        for path in (dirs.workspace, dirs.uploads, dirs.outputs):
            path.mkdir(parents=True, exist_ok=True)
    return dirs
