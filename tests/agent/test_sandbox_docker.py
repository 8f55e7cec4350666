"""The docker provider: the command lines it builds and its containers' lifecycle.

The lifecycle tests record the docker CLI calls instead of running them (this machine has the
docker client but no daemon); `test_a_real_container` runs against a real daemon and skips
where none answers. Nothing here claims more: a container was never run on this machine.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest

from agent.config import SandboxConfig
from agent.paths import thread_dirs
from agent.sandbox.docker import DockerProvider, _Container, container_name, exec_argv, run_argv
from agent.sandbox.provider import Job
from agent.sandbox.vfs import SandboxError, VirtualFS


def _fs(tmp_path: Path, thread: str = "t1") -> VirtualFS:
    skills = tmp_path / "skills"
    for skill in ("on", "off"):
        (skills / "public" / skill).mkdir(parents=True, exist_ok=True)
    return VirtualFS(thread_dirs(tmp_path / "data", thread), skills, lambda n: n == "on")


def _cfg(**settings: object) -> SandboxConfig:
    settings.setdefault("docker", {"image": "python:3.12-slim"})
    return SandboxConfig(provider="docker", **settings)


def _pairs(argv: list[str]) -> set[tuple[str, str]]:
    return set(itertools.pairwise(argv))


def test_the_container_keeps_the_contract(tmp_path: Path) -> None:
    fs = _fs(tmp_path)
    argv = run_argv(_cfg(), fs, "box", "65534:65534")
    pairs = _pairs(argv)
    for flag in (
        ("--network", "none"),
        ("--user", "65534:65534"),
        ("--cap-drop", "ALL"),
        ("--security-opt", "no-new-privileges"),
        ("--pids-limit", "128"),
        ("--memory", "2048m"),
        ("--ulimit", "cpu=60:60"),
        ("--ulimit", "core=0:0"),
        ("--tmpfs", "/tmp:rw,nosuid,nodev,mode=1777"),
        ("--workdir", "/mnt/user-data/workspace"),
    ):
        assert flag in pairs, flag
    assert "--read-only" in argv
    ws = fs.mounts[0].host.resolve()
    assert ("--volume", f"{ws}:/mnt/user-data/workspace:rw") in pairs
    skill = tmp_path.resolve() / "skills" / "public" / "on"
    assert ("--volume", f"{skill}:/mnt/skills/public/on:ro") in pairs
    assert not any("/off:" in a for a in argv)  # a disabled skill is not mounted
    assert argv[-2:] == ["python:3.12-slim", "infinity"]
    assert ("--network", "bridge") in _pairs(run_argv(_cfg(network=True), fs, "box", "1:1"))


def test_exec_carries_the_declared_environment_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTLER_PASSED", "yes")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host")
    cfg = _cfg(pass_env=["ANTLER_PASSED"], env={"A": "1"})
    argv = exec_argv(cfg, "box", Job.python("print(1)", "python3"))
    envs = {argv[i + 1] for i, a in enumerate(argv) if a == "--env"}
    assert {"ANTLER_PASSED=yes", "A=1", "HOME=/mnt/user-data/workspace"} <= envs
    assert not any("sk-host" in a for a in argv)
    assert argv[-3:] == ["box", "python3", "-"]
    assert "--interactive" in argv  # the script goes in on stdin


def test_container_names_per_thread_and_service(tmp_path: Path) -> None:
    one, two = container_name(_fs(tmp_path, "t1")), container_name(_fs(tmp_path, "t2"))
    assert one.startswith("antler-sbx-")
    assert one.endswith("-t1")
    assert two.endswith("-t2")
    assert one[:-3] == two[:-3]
    assert container_name(_fs(tmp_path / "other", "t1")) != one


class Recorder:
    def __init__(self, fail_run: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.fail_run = fail_run

    async def __call__(self, argv: list[str]) -> tuple[int, str]:
        self.calls.append(argv)
        if argv[1] == "run" and self.fail_run:
            return 125, "Unable to find image 'nope:latest' locally"
        return 0, ""

    def verbs(self) -> list[tuple[str, str]]:
        return [(c[1], c[-1] if c[1] == "rm" else c[c.index("--name") + 1]) for c in self.calls]


async def test_one_container_per_conversation_reused_then_removed_when_idle(
    tmp_path: Path,
) -> None:
    cli, now = Recorder(), [0.0]
    provider = DockerProvider(
        _cfg(docker={"image": "img", "idle_seconds": 60}), cli=cli, clock=lambda: now[0]
    )
    a, b = _fs(tmp_path, "t1"), _fs(tmp_path, "t2")
    box_a, box_b = container_name(a), container_name(b)
    for fs in (a, a, b):
        box = provider.containers.setdefault(container_name(fs), _new(provider, fs))
        await provider._ensure(box, fs)
    assert cli.verbs() == [("rm", box_a), ("run", box_a), ("rm", box_b), ("run", box_b)]
    provider.containers[box_a].last_used = 0.0
    provider.containers[box_b].last_used = 30.0
    now[0] = 70.0
    assert await provider.reap() == [box_a]  # b was used 40 s ago
    provider.containers[box_b].busy = 1
    now[0] = 500.0
    assert await provider.reap() == []  # a running command keeps its container
    provider.containers[box_b].busy = 0
    await provider.close()
    assert cli.verbs()[-2:] == [("rm", box_a), ("rm", box_b)]
    assert provider.containers == {}


def _new(provider: DockerProvider, fs: VirtualFS) -> _Container:
    return _Container(container_name(fs), provider.clock())


async def test_a_container_that_does_not_start_is_a_clear_error(tmp_path: Path) -> None:
    provider = DockerProvider(_cfg(docker={"image": "nope"}), cli=Recorder(fail_run=True))
    with pytest.raises(SandboxError, match="the docker sandbox did not start: Unable to find"):
        await provider.run(_fs(tmp_path), Job.shell("true"), timeout=5, limit=1000)


def _daemon() -> bool:
    if not shutil.which("docker"):
        return False
    probe = subprocess.run(["docker", "info"], capture_output=True, timeout=20, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _daemon(), reason="no docker daemon answers here")
async def test_a_real_container(tmp_path: Path) -> None:
    provider = DockerProvider(_cfg(docker={"image": "python:3.12-slim"}))
    fs = _fs(tmp_path)
    try:
        out = await provider.run(
            fs, Job.shell("echo hi > f; cat /etc/hostname; id -u"), timeout=60, limit=2000
        )
        assert (fs.mounts[0].host / "f").read_text() == "hi\n", out
        job = Job.python("import os\nprint(sorted(os.listdir('/sys/class/net')))", "python3")
        out = await provider.run(fs, job, timeout=60, limit=2000)
        assert out.startswith("['lo']"), out  # no network but loopback
    finally:
        await provider.close()
