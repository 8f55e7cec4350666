"""The `local` provider: `bash` and `python` in the thread's workspace, on the host.

This is NOT an isolation boundary: the command runs on the host as the service's user and can
reach anything that user can. Virtual paths in the command are rewritten to host paths and host
paths in the output back to virtual ones; secret-looking environment variables are removed; the
timeout kills the process group and the output is capped as it is read.
"""

from __future__ import annotations

import os
import re

from agent.config import SandboxConfig
from agent.sandbox.contract import Job, report
from agent.sandbox.limits import MB
from agent.sandbox.proc import run_process
from agent.sandbox.vfs import VirtualFS

_SECRET = re.compile(r"KEY|SECRET|TOKEN|PASS|CREDENTIAL|DSN|DATABASE_URL|COOKIE|AUTH", re.I)


def scrubbed_env(workspace: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _SECRET.search(k)}
    env["HOME"] = workspace
    env["PWD"] = workspace
    return env


class LocalProvider:
    name = "local"

    def __init__(self, cfg: SandboxConfig) -> None:
        self.cfg = cfg

    async def run(self, fs: VirtualFS, job: Job, *, timeout: float, limit: int) -> str:
        workspace = str(fs.mounts[0].host.resolve())
        stdin = fs.unmask(job.stdin.decode()).encode() if job.stdin is not None else None
        max_bytes = self.cfg.max_output_mb * MB
        outcome = await run_process(
            [fs.unmask(arg) for arg in job.argv],
            env=scrubbed_env(workspace),
            cwd=workspace,
            stdin=stdin,
            timeout=timeout,
            keep_bytes=limit * 4,
            max_bytes=max_bytes,
        )
        text = report(outcome, timeout=timeout, limit=limit, max_bytes=max_bytes, tree=False)
        return fs.mask(text)

    async def close(self) -> None:
        return None


async def run_bash(fs: VirtualFS, command: str, *, timeout: float, limit: int) -> str:
    """`bash` on the local provider with the default settings."""
    return await LocalProvider(SandboxConfig()).run(
        fs, Job.shell(command), timeout=timeout, limit=limit
    )
