"""Shared pieces of the sandbox tests: a thread's folders with skills, a provider, a runner.

`ANTLER_TEST_SANDBOX=local` runs the escape tests against the local provider: they must fail
there (that is how they were checked); the default is bwrap. Without a working bwrap the tests
skip, and fail under CI (`ANTLER_TEST_PG_REQUIRED=1` or `CI=true`): `make test` installs
bubblewrap with apt-get when it runs as root.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent.config import SandboxConfig
from agent.paths import ThreadDirs, thread_dirs
from agent.sandbox.provider import Job, Provider, bwrap_works, make_provider
from agent.sandbox.vfs import VirtualFS

BWRAP_HINT = "the bwrap sandbox tests need bubblewrap (apt-get install -y bubblewrap)"


def required() -> bool:
    return os.environ.get("ANTLER_TEST_PG_REQUIRED") == "1" or os.environ.get("CI") == "true"


def provider_under_test() -> str:
    return os.environ.get("ANTLER_TEST_SANDBOX") or "bwrap"


def need_bwrap() -> None:
    works, why = bwrap_works()
    if works:
        return
    if required():
        pytest.fail(f"{BWRAP_HINT}: {why}")
    pytest.skip(f"{BWRAP_HINT}: {why}")


@dataclass
class Box:
    tmp: Path
    dirs: ThreadDirs
    fs: VirtualFS
    cfg: SandboxConfig
    provider: Provider

    async def sh(self, command: str, timeout: float = 30, limit: int = 20_000) -> str:
        return await self.provider.run(self.fs, Job.shell(command), timeout=timeout, limit=limit)

    async def py(self, code: str, timeout: float = 30, limit: int = 20_000) -> str:
        job = Job.python(code, self.cfg.python_command)
        return await self.provider.run(self.fs, job, timeout=timeout, limit=limit)


def make_box(tmp: Path, name: str | None = None, **settings: Any) -> Box:
    name = name or provider_under_test()
    if name == "bwrap":
        need_bwrap()
    dirs = thread_dirs(tmp / "data", "t1")
    skills = tmp / "skills"
    for skill in ("on", "off"):
        (skills / "public" / skill).mkdir(parents=True, exist_ok=True)
        (skills / "public" / skill / "SKILL.md").write_text(f"{skill} skill")
    fs = VirtualFS(dirs, skills, skill_allowed=lambda n: n == "on")
    cfg = SandboxConfig(provider=name, bash_enabled=True, **settings)
    return Box(tmp, dirs, fs, cfg, make_provider(cfg))


def processes_with(marker: str) -> list[int]:
    """Processes whose command line holds `marker`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return [pid for pid in found if pid != os.getpid()]


async def gone(marker: str, within: float = 15.0) -> bool:
    """Waits until no process holds `marker` (the kernel reaps a dead namespace soon after)."""
    deadline = time.monotonic() + within
    while processes_with(marker):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True
