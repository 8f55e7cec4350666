"""`bash` for the local sandbox: runs in the thread's workspace with a timeout and an output cap.

This is NOT an isolation boundary: the command runs on the host as the service's user and can
reach anything that user can. Virtual paths in the command are rewritten to host paths and host
paths in the output back to virtual ones; secret-looking environment variables are removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal

from agent.sandbox.files import clip
from agent.sandbox.vfs import VirtualFS

_SECRET = re.compile(r"KEY|SECRET|TOKEN|PASS|CREDENTIAL|DSN|DATABASE_URL|COOKIE|AUTH", re.I)


def scrubbed_env(workspace: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _SECRET.search(k)}
    env["HOME"] = workspace
    env["PWD"] = workspace
    return env


async def run_bash(fs: VirtualFS, command: str, *, timeout: float, limit: int) -> str:
    workspace = str(fs.mounts[0].host.resolve())
    proc = await asyncio.create_subprocess_exec(
        "/bin/bash",
        "-c",
        fs.unmask(command),
        cwd=workspace,
        env=scrubbed_env(workspace),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        _kill_group(proc.pid)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5)
        if isinstance(exc, asyncio.CancelledError):
            raise
        return f"Timed out after {timeout:g} s; the command was killed."
    text = fs.mask(out.decode("utf-8", errors="replace"))
    status = f"exit code {proc.returncode}"
    return clip(f"{text.rstrip()}\n[{status}]" if text.strip() else f"[{status}]", limit)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
