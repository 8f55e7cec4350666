"""Resource limits and the user a sandboxed command runs as (bwrap and docker providers).

Limits are rlimits set by util-linux `prlimit` in front of the sandbox and inherited by
everything inside: CPU seconds, address space, file size, no core files, and processes.
RLIMIT_NPROC counts every task of the *real user*, and the kernel never applies it to root, so:
a service running as root hands the thread's folders to `sandbox.uid` and runs the command as
that user; a service running as another user counts the tasks that user already has and allows
`max_processes` more.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent.config import SandboxConfig
from agent.sandbox.vfs import WORKSPACE, VirtualFS

MB = 1024 * 1024
PATH = "/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin"


def as_root() -> bool:
    return os.geteuid() == 0


def sandbox_env(cfg: SandboxConfig) -> dict[str, str]:
    """The whole environment inside: a few fixed variables, the host variables named in
    `pass_env`, then `env`. Nothing else of the host's environment gets in."""
    env = {"PATH": PATH, "HOME": WORKSPACE, "LANG": "C.UTF-8", "TMPDIR": "/tmp", "TERM": "dumb"}
    env |= {name: os.environ[name] for name in cfg.pass_env if name in os.environ}
    env |= cfg.env
    return env


def process_limit(cfg: SandboxConfig) -> int:
    if as_root():
        return cfg.max_processes
    return tasks_of(os.getuid()) + cfg.max_processes


def tasks_of(uid: int) -> int:
    """Tasks (threads included: RLIMIT_NPROC counts them) whose real user is `uid`."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":", 1) for line in status.read_text().splitlines() if ":" in line
            )
        except OSError:
            continue
        if int(fields.get("Uid", "-1 ").split()[0]) == uid:
            count += int(fields.get("Threads", "1").strip() or 1)
    return count


def prlimit_argv(prlimit: str, cfg: SandboxConfig, nproc: int) -> list[str]:
    return [
        prlimit,
        f"--cpu={cfg.cpu_seconds}:{cfg.cpu_seconds + 1}",  # SIGXCPU first, then SIGKILL
        f"--as={cfg.memory_mb * MB}",
        f"--fsize={cfg.max_file_mb * MB}",
        f"--nproc={nproc}",
        "--core=0",
        "--",
    ]


def hand_over(fs: VirtualFS, uid: int) -> None:
    """Give the thread's writable folders to `uid` (root only: the sandbox user must write
    there; the service, being root, still reads and writes everything)."""
    for mount in fs.mounts:
        if mount.writable:
            _chown_tree(mount.host, uid)


def _chown_tree(root: Path, uid: int) -> None:
    """By directory descriptors, never following a link: a command running meanwhile cannot
    swap a folder for a link and have root change the owner of a host file."""
    if root.is_symlink() or not root.is_dir():
        return
    os.chown(root, uid, uid, follow_symlinks=False)
    for _top, dirs, names, dirfd in os.fwalk(root, follow_symlinks=False):
        for name in (*dirs, *names):
            try:
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
                if st.st_uid != uid or st.st_gid != uid:
                    os.chown(name, uid, uid, dir_fd=dirfd, follow_symlinks=False)
            except OSError:
                continue
