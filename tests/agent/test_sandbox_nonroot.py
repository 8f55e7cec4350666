"""The bwrap provider when the service is not root (as in the Docker image): an unprivileged
user namespace, and a process limit counted on top of the tasks the service's user already has.

Run from a root test process by starting Python as an unprivileged user (setpriv).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.sandbox_support import need_bwrap

ROOT = Path(__file__).resolve().parents[2]
UID = 65534

SCRIPT = """
import asyncio, sys
from pathlib import Path
from agent.config import SandboxConfig
from agent.paths import thread_dirs
from agent.sandbox.provider import Job, make_provider
from agent.sandbox.vfs import VirtualFS

async def main():
    fs = VirtualFS(thread_dirs(Path(sys.argv[1]), "t1"))
    provider = make_provider(SandboxConfig(provider="bwrap", max_processes=24))
    command = (
        "id -u; echo made > f; cat /proc/1/environ; echo; "
        "for i in $(seq 100); do sleep 9 >/dev/null 2>&1 & done; echo looped"
    )
    print(await provider.run(fs, Job.shell(command), timeout=60, limit=5000))

asyncio.run(main())
"""


def _python_for(uid: int) -> list[str] | None:
    """A Python with this project's packages that `uid` may run, or None."""
    candidates = [sys.executable, "/usr/bin/python3"]
    env = {"PYTHONPATH": f"{ROOT}:{sysconfig.get_paths()['purelib']}", "HOME": "/tmp"}
    for python in candidates:
        argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", python]
        probe = subprocess.run(
            [*argv, "-c", "import agent.sandbox.provider"],
            env=env,
            capture_output=True,
            check=False,
            cwd="/",
        )
        if probe.returncode == 0:
            return argv
    return None


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="antler-sbx-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_an_unprivileged_service_gets_the_same_sandbox(shared_dir: Path) -> None:
    need_bwrap()
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("starts the service's side as another user: needs root and setpriv")
    python = _python_for(UID)
    if python is None:
        pytest.skip(f"no Python with this project that uid {UID} may run")
    env = {"PYTHONPATH": f"{ROOT}:{sysconfig.get_paths()['purelib']}", "HOME": "/tmp"}
    env["ANTLER_PROBE"] = "HOST-ENV-3321"
    done = subprocess.run(
        [*python, "-c", SCRIPT, str(shared_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd="/",
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert out.startswith(f"{UID}\n"), out
    assert (shared_dir / "threads/t1/user-data/workspace/f").read_text() == "made\n"
    assert "HOST-ENV-3321" not in out
    assert "HOME=/mnt/user-data/workspace" in out
    assert "fork: " in out, out  # refused past the limit
