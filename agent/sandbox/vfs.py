"""Virtual paths → host paths for one thread, refusing anything that would leave its directories.

The agent sees `/mnt/user-data/{workspace,uploads,outputs}` (read/write) and `/mnt/skills`
(read-only, enabled skills only). A path is refused when it has a `..` part, is not under one of
those roots, or resolves (after following symlinks) outside the root it names.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent.paths import VIRTUAL_ROOT, ThreadDirs

SKILLS_ROOT = "/mnt/skills"
WORKSPACE = f"{VIRTUAL_ROOT}/workspace"
UPLOADS = f"{VIRTUAL_ROOT}/uploads"
OUTPUTS = f"{VIRTUAL_ROOT}/outputs"


class SandboxError(Exception):
    """A path or operation the sandbox refuses; the message is shown to the model."""


@dataclass(frozen=True, slots=True)
class Mount:
    virtual: str
    host: Path
    writable: bool


@dataclass(frozen=True, slots=True)
class Resolved:
    virtual: str
    host: Path
    mount: Mount


class VirtualFS:
    def __init__(
        self,
        dirs: ThreadDirs,
        skills_root: Path | None = None,
        skill_allowed: Callable[[str], bool] = lambda _name: True,
    ) -> None:
        self.mounts = [
            Mount(WORKSPACE, dirs.workspace, True),
            Mount(UPLOADS, dirs.uploads, True),
            Mount(OUTPUTS, dirs.outputs, True),
        ]
        if skills_root is not None:
            self.mounts.append(Mount(SKILLS_ROOT, skills_root, False))
        self.skill_allowed = skill_allowed

    def resolve(self, path: str, *, write: bool = False) -> Resolved:
        """The host path for a virtual one (relative paths are relative to the workspace)."""
        virtual = _normalise(path)
        for mount in self.mounts:
            if virtual == mount.virtual or virtual.startswith(mount.virtual + "/"):
                return self._inside(mount, virtual, write)
        roots = ", ".join(m.virtual for m in self.mounts)
        raise SandboxError(f"{path}: outside the sandbox (use paths under {roots})")

    def _inside(self, mount: Mount, virtual: str, write: bool) -> Resolved:
        if write and not mount.writable:
            raise SandboxError(f"{virtual}: read-only")
        rest = virtual[len(mount.virtual) :].lstrip("/")
        if mount.virtual == SKILLS_ROOT and not self._skill_ok(rest):
            raise SandboxError(f"{virtual}: this skill is disabled")
        root = mount.host.resolve()
        host = (root / rest).resolve() if rest else root
        if host != root and not host.is_relative_to(root):
            raise SandboxError(f"{virtual}: resolves outside the sandbox (a link?)")
        return Resolved(virtual, host, mount)

    def _skill_ok(self, rest: str) -> bool:
        parts = rest.split("/")
        return len(parts) < 2 or self.skill_allowed(parts[1])

    def to_virtual(self, host: Path) -> str:
        """The virtual path of a host path inside a mount (for listings)."""
        for mount in self.mounts:
            root = mount.host.resolve()
            if host == root or host.is_relative_to(root):
                rel = host.relative_to(root).as_posix()
                return mount.virtual if rel == "." else f"{mount.virtual}/{rel}"
        raise SandboxError("path outside the sandbox")

    def mask(self, text: str) -> str:
        """Replace host paths in tool output with their virtual names."""
        for mount in sorted(self.mounts, key=lambda m: -len(str(m.host))):
            for host in {str(mount.host.resolve()), str(mount.host)}:
                text = text.replace(host, mount.virtual)
        return text

    def unmask(self, text: str) -> str:
        """Replace virtual roots in a shell command with host paths."""
        for mount in sorted(self.mounts, key=lambda m: -len(m.virtual)):
            text = text.replace(mount.virtual, str(mount.host.resolve()))
        return text


def _normalise(path: str) -> str:
    raw = (path or "").strip()
    if not raw:
        raise SandboxError("empty path")
    if "\x00" in raw:
        raise SandboxError("bad path")
    pure = PurePosixPath(raw if raw.startswith("/") else f"{WORKSPACE}/{raw}")
    if ".." in pure.parts:
        raise SandboxError(f"{path}: '..' is not allowed in paths")
    return os.path.normpath(str(pure)).replace("//", "/")
