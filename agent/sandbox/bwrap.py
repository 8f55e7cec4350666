"""The `bwrap` provider: each command in its own bubblewrap sandbox.

Inside, the command sees the thread's workspace, uploads and outputs (read-write) at their
virtual paths, the enabled skills read-only at /mnt/skills, read-only /usr, /bin, /lib and the
few /etc files a shell needs, a fresh /proc (its own processes only), /dev and /tmp, and nothing
else of the host; the rest of its root is read-only. New PID, IPC, UTS (and network, unless
`sandbox.network`) namespaces; bwrap itself starts with the declared environment only, so not
even /proc/1/environ holds a host variable. rlimits come from `prlimit` in front (see limits.py).
The timeout kills bwrap's process group; `--die-with-parent` and the PID namespace take every
process of the sandbox with it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from agent.config import SandboxConfig
from agent.paths import VIRTUAL_ROOT
from agent.sandbox.contract import Job, report
from agent.sandbox.limits import MB, as_root, hand_over, prlimit_argv, process_limit, sandbox_env
from agent.sandbox.proc import run_process
from agent.sandbox.vfs import SKILLS_ROOT, WORKSPACE, SandboxError, VirtualFS

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = (
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/mime.types",
)
ETC_NETWORK = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf")
SETPRIV = "/usr/bin/setpriv"


def probe_argv(bwrap: str) -> list[str]:
    """A tiny sandbox with the namespaces the provider uses: does this machine allow them?"""
    return [bwrap, *_namespaces(network=False), *_system(), "--", "/bin/true"]


def _namespaces(*, network: bool) -> list[str]:
    args = ["--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid"]
    args += ["--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    if not as_root():  # unprivileged bwrap needs a user namespace; root switches user instead
        args.append("--unshare-user")
    return args


def _system() -> list[str]:
    args: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def skill_binds(fs: VirtualFS) -> list[tuple[Path, str]]:
    """(host dir, virtual dir) of each enabled skill: disabled ones are not there at all."""
    root = next((m.host for m in fs.mounts if m.virtual == SKILLS_ROOT), None)
    if root is None or not root.is_dir():
        return []
    found = []
    for category in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        for skill in sorted(p for p in category.iterdir() if p.is_dir() and not p.is_symlink()):
            if fs.skill_allowed(skill.name):
                found.append((skill, f"{SKILLS_ROOT}/{category.name}/{skill.name}"))
    return found


def bwrap_argv(
    bwrap: str, cfg: SandboxConfig, fs: VirtualFS, job: Job, *, uid: int | None
) -> list[str]:
    """The bwrap command line for `job` (without the prlimit in front)."""
    args = [bwrap, *_namespaces(network=cfg.network), *_system()]
    skills = skill_binds(fs)
    folders = {"/etc", "/mnt", VIRTUAL_ROOT} | ({SKILLS_ROOT} if skills else set())
    folders |= {virtual.rsplit("/", 1)[0] for _, virtual in skills}
    for folder in sorted(folders):  # made before the binds below, readable by the sandbox user
        args += ["--perms", "0755", "--dir", folder]
    for etc in (*ETC, *(ETC_NETWORK if cfg.network else ())):
        args += ["--ro-bind-try", etc, etc]
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    for mount in fs.mounts:
        if mount.writable:
            args += ["--bind", str(mount.host.resolve()), mount.virtual]
    for host, virtual in skills:
        args += ["--ro-bind", str(host.resolve()), virtual]
    args += ["--remount-ro", "/", "--chdir", WORKSPACE]
    inner = list(job.argv)
    if uid is not None:  # root: the command runs as `uid`, with no capabilities left
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        inner = [
            SETPRIV,
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--bounding-set=-all",
            "--inh-caps=-all",
            "--no-new-privs",
            "--",
            *inner,
        ]
    return [*args, "--", *inner]


class BwrapProvider:
    name = "bwrap"

    def __init__(self, cfg: SandboxConfig, *, problem: str = "") -> None:
        self.cfg = cfg
        self.problem = problem
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self.prlimit = shutil.which("prlimit") or "prlimit"

    def argv(self, fs: VirtualFS, job: Job) -> list[str]:
        uid = self.cfg.uid if as_root() else None
        limits = prlimit_argv(self.prlimit, self.cfg, process_limit(self.cfg))
        return [*limits, *bwrap_argv(self.bwrap, self.cfg, fs, job, uid=uid)]

    async def run(self, fs: VirtualFS, job: Job, *, timeout: float, limit: int) -> str:
        if self.problem:
            raise SandboxError(f"the bwrap sandbox cannot run here: {self.problem}")
        if as_root():
            await asyncio.to_thread(hand_over, fs, self.cfg.uid)
        argv = await asyncio.to_thread(self.argv, fs, job)
        max_bytes = self.cfg.max_output_mb * MB
        outcome = await run_process(
            argv,
            env=sandbox_env(self.cfg),
            stdin=job.stdin,
            timeout=timeout,
            keep_bytes=limit * 4,
            max_bytes=max_bytes,
        )
        return report(outcome, timeout=timeout, limit=limit, max_bytes=max_bytes)

    async def close(self) -> None:
        return None
