"""The `docker` provider: the bwrap contract in a container of the image the operator names.

One container per conversation (`docker run -d ... sleep infinity`), reused while the
conversation is active and removed after `docker.idle_seconds` without a command. Each command
is a `docker exec` in it. The container: the thread's folders bound read-write and the enabled
skills read-only at their virtual paths, a read-only root, a fresh /tmp (tmpfs), `--network
none` unless `sandbox.network`, every capability dropped, no-new-privileges, the declared
environment only, `--pids-limit`, `--memory`, and ulimits for CPU time and file size. A command
past its timeout (or its output limit) has its container removed: everything it started goes
with it, and the next command gets a fresh container.

Built on the docker CLI (`docker.command`), so podman's docker-compatible CLI works too.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from agent.config import SandboxConfig
from agent.sandbox.bwrap import skill_binds
from agent.sandbox.contract import Job, report
from agent.sandbox.limits import MB, as_root, hand_over, sandbox_env
from agent.sandbox.proc import run_process
from agent.sandbox.vfs import WORKSPACE, SandboxError, VirtualFS

log = logging.getLogger(__name__)

Cli = Callable[[list[str]], Awaitable[tuple[int, str]]]


async def docker_cli(argv: list[str]) -> tuple[int, str]:
    """Run a docker CLI command to its end: (exit code, output)."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode(errors="replace").strip()


@dataclass
class _Container:
    name: str
    last_used: float
    busy: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    started: bool = False


def container_name(fs: VirtualFS) -> str:
    """`antler-sbx-<service>-<thread>`: the thread id, and a digest of its data directory so
    two services on one host never share a container."""
    root = fs.mounts[0].host.resolve().parent  # <data_dir>/threads/<id>/user-data
    thread = root.parent.name
    digest = hashlib.sha256(str(root.parent.parent).encode()).hexdigest()[:8]
    return f"antler-sbx-{digest}-{thread}"


def user_of() -> str:
    return f"{os.getuid()}:{os.getgid()}"


def run_argv(cfg: SandboxConfig, fs: VirtualFS, name: str, user: str) -> list[str]:
    """`docker run` for a conversation's container."""
    args = [cfg.docker.command, "run", "--detach", "--rm", "--name", name]
    args += ["--label", "antler.sandbox=1", "--init", "--user", user]
    args += ["--network", "bridge" if cfg.network else "none"]
    args += ["--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,mode=1777"]
    args += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
    args += ["--pids-limit", str(cfg.max_processes)]
    args += ["--memory", f"{cfg.memory_mb}m", "--memory-swap", f"{cfg.memory_mb}m"]
    args += ["--ulimit", f"cpu={cfg.cpu_seconds}:{cfg.cpu_seconds}"]
    fsize = cfg.max_file_mb * MB
    args += ["--ulimit", f"fsize={fsize}:{fsize}", "--ulimit", "core=0:0"]
    for mount in fs.mounts:
        if mount.writable:
            args += ["--volume", f"{mount.host.resolve()}:{mount.virtual}:rw"]
    for host, virtual in skill_binds(fs):
        args += ["--volume", f"{host.resolve()}:{virtual}:ro"]
    args += ["--workdir", WORKSPACE, "--entrypoint", "sleep", cfg.docker.image, "infinity"]
    return args


def exec_argv(cfg: SandboxConfig, name: str, job: Job) -> list[str]:
    """`docker exec` of one command; the environment is the declared one, nothing else."""
    args = [cfg.docker.command, "exec", "--workdir", WORKSPACE]
    if job.stdin is not None:
        args.append("--interactive")
    for key, value in sandbox_env(cfg).items():
        args += ["--env", f"{key}={value}"]
    return [*args, name, *job.argv]


class DockerProvider:
    name = "docker"

    def __init__(
        self,
        cfg: SandboxConfig,
        *,
        cli: Cli = docker_cli,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cfg = cfg
        self.cli = cli
        self.clock = clock
        self.containers: dict[str, _Container] = {}
        self._reaper: asyncio.TimerHandle | None = None

    async def run(self, fs: VirtualFS, job: Job, *, timeout: float, limit: int) -> str:
        box = self.containers.setdefault(container_name(fs), _Container(container_name(fs), 0))
        box.busy += 1
        box.last_used = self.clock()
        try:
            await self._ensure(box, fs)
            max_bytes = self.cfg.max_output_mb * MB
            outcome = await run_process(
                exec_argv(self.cfg, box.name, job),
                env=_cli_env(),
                stdin=job.stdin,
                timeout=timeout,
                keep_bytes=limit * 4,
                max_bytes=max_bytes,
                on_kill=lambda: self._remove(box),
            )
            return report(outcome, timeout=timeout, limit=limit, max_bytes=max_bytes)
        finally:
            box.busy -= 1
            box.last_used = self.clock()
            self._schedule_reap()

    async def _ensure(self, box: _Container, fs: VirtualFS) -> None:
        async with box.lock:
            if box.started:
                return
            user = user_of()
            if as_root():
                await asyncio.to_thread(hand_over, fs, self.cfg.uid)
                user = f"{self.cfg.uid}:{self.cfg.uid}"
            await self.cli([self.cfg.docker.command, "rm", "--force", box.name])  # a stale one
            code, out = await self.cli(run_argv(self.cfg, fs, box.name, user))
            if code != 0:
                raise SandboxError(f"the docker sandbox did not start: {out[-500:]}")
            box.started = True

    async def _remove(self, box: _Container) -> None:
        box.started = False
        await self.cli([self.cfg.docker.command, "rm", "--force", box.name])

    def _schedule_reap(self) -> None:
        if self._reaper is not None:
            return
        loop = asyncio.get_running_loop()
        self._reaper = loop.call_later(self.cfg.docker.idle_seconds, self._reap_soon)

    def _reap_soon(self) -> None:
        self._reaper = None
        task = asyncio.get_running_loop().create_task(self.reap())
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def reap(self) -> list[str]:
        """Remove the containers idle for `idle_seconds`; the names removed."""
        now, idle = self.clock(), self.cfg.docker.idle_seconds
        gone = [
            box
            for box in self.containers.values()
            if not box.busy and box.started and now - box.last_used >= idle
        ]
        for box in gone:
            async with box.lock:
                await self._remove(box)
            self.containers.pop(box.name, None)
        if any(box.started for box in self.containers.values()):
            self._schedule_reap()
        return [box.name for box in gone]

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None
        for box in list(self.containers.values()):
            if box.started:
                with contextlib.suppress(Exception):
                    await self._remove(box)
        self.containers.clear()


_CLI_ENV = {
    "PATH",
    "HOME",
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CONFIG",
    "DOCKER_TLS_VERIFY",
    "DOCKER_CERT_PATH",
    "XDG_RUNTIME_DIR",
}


def _cli_env() -> dict[str, str]:
    """What the docker CLI needs from the service's environment to find its daemon."""
    return {k: v for k, v in os.environ.items() if k in _CLI_ENV}
