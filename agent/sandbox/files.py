"""File operations on virtual paths: ls, read, write, str_replace, glob, grep.

Every function takes a `VirtualFS`, works on host paths it resolved, and returns text for the
model in virtual paths. Refusals raise `SandboxError` (the tool layer turns them into messages).
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from agent.sandbox.vfs import SandboxError, VirtualFS

LS_DEPTH = 2
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv"}


def clip(text: str, limit: int) -> str:
    """Keep the head and the tail of a long text, saying how much was cut."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters cut] ...\n{text[-tail:]}"


def ls(fs: VirtualFS, path: str, limit: int) -> str:
    target = fs.resolve(path)
    if not target.host.is_dir():
        raise SandboxError(f"{target.virtual}: not a directory")
    lines = [target.virtual + "/"]
    _tree(fs, target.host, 1, lines)
    if len(lines) == 1:
        lines.append("  (empty)")
    return clip("\n".join(lines), limit)


def _tree(fs: VirtualFS, directory: Path, depth: int, lines: list[str]) -> None:
    for entry in sorted(directory.iterdir(), key=lambda p: (not p.is_dir(), p.name)):
        if entry.name in SKIP_DIRS:
            continue
        indent = "  " * depth
        if entry.is_symlink():
            lines.append(f"{indent}{entry.name} (link)")
        elif entry.is_dir():
            lines.append(f"{indent}{entry.name}/")
            if depth < LS_DEPTH:
                _tree(fs, entry, depth + 1, lines)
        else:
            lines.append(f"{indent}{entry.name} ({_size(entry.stat().st_size)})")


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:.1f} GB"


def read_file(
    fs: VirtualFS, path: str, start_line: int | None, end_line: int | None, limit: int
) -> str:
    target = fs.resolve(path)
    if not target.host.is_file():
        raise SandboxError(f"{target.virtual}: no such file")
    text = target.host.read_text(encoding="utf-8", errors="replace")
    if start_line is None and end_line is None:
        return clip(text, limit) if text else "(empty file)"
    lines = text.splitlines()
    start = max(1, start_line or 1)
    end = min(len(lines), end_line or len(lines))
    if start > end:
        return f"(no lines {start}-{end_line or start}; the file has {len(lines)} lines)"
    return clip("\n".join(lines[start - 1 : end]), limit)


def write_file(fs: VirtualFS, path: str, content: str, append: bool, limit: int) -> str:
    if len(content) > limit:
        raise SandboxError(
            f"content too long ({len(content)} > {limit} characters); "
            "write it in parts with append=true"
        )
    target = fs.resolve(path, write=True)
    if target.host.is_dir():
        raise SandboxError(f"{target.virtual}: is a directory")
    target.host.parent.mkdir(parents=True, exist_ok=True)
    with target.host.open("a" if append else "w", encoding="utf-8") as fh:
        fh.write(content)
    verb = "Appended" if append else "Wrote"
    return f"{verb} {len(content)} characters to {target.virtual}"


def str_replace(fs: VirtualFS, path: str, old: str, new: str, replace_all: bool) -> str:
    target = fs.resolve(path, write=True)
    if not target.host.is_file():
        raise SandboxError(f"{target.virtual}: no such file")
    if not old:
        raise SandboxError("old_str must not be empty")
    text = target.host.read_text(encoding="utf-8")
    count = text.count(old)
    if count == 0:
        raise SandboxError(f"old_str not found in {target.virtual}")
    if count > 1 and not replace_all:
        raise SandboxError(
            f"old_str occurs {count} times in {target.virtual}; "
            "give more context or set replace_all=true"
        )
    target.host.write_text(text.replace(old, new), encoding="utf-8")
    return f"Replaced {count if replace_all else 1} occurrence(s) in {target.virtual}"


def glob(fs: VirtualFS, pattern: str, path: str, max_results: int) -> str:
    base = fs.resolve(path)
    if ".." in Path(pattern).parts or pattern.startswith("/"):
        raise SandboxError("the pattern must be relative to path, without '..'")
    found: list[str] = []
    for match in sorted(base.host.glob(pattern)):
        if not match.is_file() or not _visible(fs, match, base.host):
            continue
        found.append(fs.to_virtual(match))
        if len(found) >= max_results:
            found.append(f"(stopped at {max_results} results)")
            break
    return "\n".join(found) if found else f"no files match {pattern!r} under {base.virtual}"


def grep(
    fs: VirtualFS,
    pattern: str,
    path: str,
    glob_filter: str | None,
    literal: bool,
    case_sensitive: bool,
    max_results: int,
) -> str:
    base = fs.resolve(path)
    try:
        regex = re.compile(
            re.escape(pattern) if literal else pattern, 0 if case_sensitive else re.IGNORECASE
        )
    except re.error as exc:
        raise SandboxError(f"bad regular expression: {exc}") from exc
    files = [base.host] if base.host.is_file() else sorted(base.host.rglob("*"))
    hits: list[str] = []
    for file in files:
        if not file.is_file() or _skipped(file, base.host) or not _visible(fs, file, base.host):
            continue
        if glob_filter and not fnmatch.fnmatch(file.name, glob_filter):
            continue
        hits.extend(_grep_file(fs, file, regex, max_results - len(hits)))
        if len(hits) >= max_results:
            hits.append(f"(stopped at {max_results} matches)")
            break
    return "\n".join(hits) if hits else f"no matches for {pattern!r} under {base.virtual}"


def _grep_file(fs: VirtualFS, file: Path, regex: re.Pattern[str], room: int) -> list[str]:
    try:
        text = file.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    virtual = fs.to_virtual(file)
    hits = []
    for number, line in enumerate(text.splitlines(), start=1):
        if regex.search(line):
            hits.append(f"{virtual}:{number}: {line[:300]}")
            if len(hits) >= room:
                break
    return hits


def _visible(fs: VirtualFS, path: Path, root: Path) -> bool:
    """Inside `root` after following links, and readable through the sandbox's own checks."""
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            return False
        fs.resolve(fs.to_virtual(path))
    except (OSError, SandboxError):
        return False
    return True


def _skipped(path: Path, root: Path) -> bool:
    return any(part in SKIP_DIRS for part in path.relative_to(root).parts)
