"""The one way the service replaces a file it owns (config.yaml, its secrets file, the MCP and
skills config): a reader sees the old file or the new one, never half, even after a crash."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace `path` with `text` (temp file, fsync, rename): a reader sees the old file or the
    new one, never half. Permissions: `mode`, else the file's own (0644 for a new file)."""
    if mode is None:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
