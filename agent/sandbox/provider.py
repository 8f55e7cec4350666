"""Which sandbox runs `bash` and `python`, and the contract every provider keeps.

`local` runs on the host (not isolated); `bwrap` (bubblewrap) and `docker` give each command its
own view of the file system (the thread's folders, read-only system folders, a fresh /tmp), no
network unless `sandbox.network`, a declared environment, rlimits, and a wall-clock timeout that
kills everything the command started. `provider` unset: bwrap on Linux when it is installed and
can make a sandbox here, else local.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass

from agent.config import SandboxConfig
from agent.sandbox.contract import Job, Provider, report

LOCAL_WARNING = (
    "agent.sandbox: bash and python run on this host as the service's user (provider local, "
    "not an isolation boundary); install bubblewrap or set provider: docker"
)


@dataclass(frozen=True, slots=True)
class Choice:
    name: str
    reason: str
    problem: str = ""  # set when the configured provider cannot run here


def choose(cfg: SandboxConfig) -> Choice:
    if cfg.provider == "local":
        return Choice("local", "agent.sandbox.provider is local")
    if cfg.provider == "docker":
        found = shutil.which(cfg.docker.command)
        problem = "" if found else f"{cfg.docker.command}: not found on PATH"
        return Choice(
            "docker", f"agent.sandbox.provider is docker (image {cfg.docker.image})", problem
        )
    works, why = bwrap_works()
    if cfg.provider == "bwrap":
        return Choice("bwrap", "agent.sandbox.provider is bwrap", "" if works else why)
    if works:
        return Choice("bwrap", f"provider not set; {why}")
    return Choice("local", f"provider not set and {why}")


@functools.cache
def bwrap_works() -> tuple[bool, str]:
    """Whether bubblewrap (and prlimit) are installed and can make a sandbox on this machine."""
    if not sys.platform.startswith("linux"):
        return False, "bwrap needs Linux"
    found, prlimit = shutil.which("bwrap"), shutil.which("prlimit")
    if not found:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    if not prlimit:
        return False, "prlimit (util-linux) is not installed"
    from agent.sandbox.bwrap import probe_argv

    try:
        done = subprocess.run(probe_argv(found), capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap cannot start here: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()[:200]
        return False, f"bwrap is installed but cannot make a sandbox here: {said}"
    return True, f"bwrap found at {found} and works here"


def make_provider(cfg: SandboxConfig) -> Provider:
    choice = choose(cfg)
    if choice.name == "bwrap":
        from agent.sandbox.bwrap import BwrapProvider

        return BwrapProvider(cfg, problem=choice.problem)
    if choice.name == "docker":
        from agent.sandbox.docker import DockerProvider

        return DockerProvider(cfg)
    from agent.sandbox.shell import LocalProvider

    return LocalProvider(cfg)


def preflight(cfg: SandboxConfig) -> tuple[str, list[str], list[str]]:
    """For `antler check` and start-up: (the line saying which provider runs and why,
    problems that stop the start, warnings)."""
    choice = choose(cfg)
    line = f"{choice.name} ({choice.reason})"
    if not cfg.bash_enabled:
        line += "; bash and python are off (agent.sandbox.bash_enabled)"
    problems, warnings = [], []
    if choice.problem and cfg.bash_enabled:
        problems.append(f"agent.sandbox.provider: {choice.name} cannot run here: {choice.problem}")
    elif choice.problem:
        warnings.append(f"agent.sandbox.provider: {choice.name} cannot run here: {choice.problem}")
    if choice.name == "local" and cfg.bash_enabled:
        warnings.append(LOCAL_WARNING)
    return line, problems, warnings


__all__ = [
    "LOCAL_WARNING",
    "Choice",
    "Job",
    "Provider",
    "choose",
    "make_provider",
    "preflight",
    "report",
]
