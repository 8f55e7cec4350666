"""Per-thread host directories: `<data_dir>/threads/<id>/user-data/{workspace,uploads,outputs}`.

The agent sees them as `/mnt/user-data/...` (VIRTUAL_ROOT); the sandbox maps one onto the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

VIRTUAL_ROOT = "/mnt/user-data"
# The one thread-id rule (DeerFlow's): the admin API validates against it and the runner
# refuses anything else, so an id the API accepts always works. No `.` or `/`: a thread id is a
# directory name that can never climb out of `<data_dir>/threads`.
THREAD_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
_SAFE_ID = re.compile(THREAD_ID_PATTERN)


@dataclass(frozen=True, slots=True)
class ThreadDirs:
    """Host paths of one thread's files."""

    root: Path
    workspace: Path
    uploads: Path
    outputs: Path


def check_thread_id(thread_id: str) -> str:
    """Thread ids become directory names: 1-64 letters, digits, `_` and `-`."""
    if not _SAFE_ID.fullmatch(thread_id):
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
