"""The sandbox: virtual paths, refusals (.., absolute paths, links), file operations, bash."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.paths import thread_dirs
from agent.sandbox import files
from agent.sandbox.shell import run_bash
from agent.sandbox.vfs import SandboxError, VirtualFS


@pytest.fixture
def fs(tmp_path: Path) -> VirtualFS:
    dirs = thread_dirs(tmp_path / "data", "t1")
    skills = tmp_path / "skills"
    (skills / "public" / "on").mkdir(parents=True)
    (skills / "public" / "on" / "SKILL.md").write_text("on skill")
    (skills / "public" / "off").mkdir(parents=True)
    (skills / "public" / "off" / "SKILL.md").write_text("off skill")
    return VirtualFS(dirs, skills, skill_allowed=lambda name: name == "on")


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/mnt/user-data/workspace/../../../../etc/passwd",
        "../outside.txt",
        "/mnt/user-data",
        "/mnt/user-data/workspaces/x",
        "/mnt/skills/public/off/SKILL.md",
        "",
    ],
)
def test_paths_outside_are_refused(fs: VirtualFS, path: str) -> None:
    with pytest.raises(SandboxError):
        fs.resolve(path)


def test_links_leading_out_are_refused(fs: VirtualFS, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    workspace = fs.mounts[0].host
    os.symlink(secret, workspace / "link.txt")
    os.symlink(tmp_path, workspace / "up")
    for path in ("link.txt", "/mnt/user-data/workspace/up/secret.txt"):
        with pytest.raises(SandboxError, match="outside"):
            files.read_file(fs, path, None, None, 1000)
    with pytest.raises(SandboxError):
        files.write_file(fs, "/mnt/user-data/workspace/link.txt", "x", False, 1000)
    assert secret.read_text() == "top secret"
    assert "secret" not in files.grep(
        fs, "secret", "/mnt/user-data/workspace", None, True, False, 10
    ).replace("no matches for 'secret'", "")


def test_skills_are_read_only_and_disabled_ones_hidden(fs: VirtualFS) -> None:
    assert files.read_file(fs, "/mnt/skills/public/on/SKILL.md", None, None, 100) == "on skill"
    with pytest.raises(SandboxError, match="read-only"):
        files.write_file(fs, "/mnt/skills/public/on/SKILL.md", "x", False, 100)
    assert "off" not in files.glob(fs, "**/*.md", "/mnt/skills", 10)


def test_file_operations(fs: VirtualFS) -> None:
    assert "Wrote" in files.write_file(fs, "notes/a.txt", "one\ntwo\n", False, 1000)
    files.write_file(fs, "/mnt/user-data/workspace/notes/a.txt", "three\nfour\n", True, 1000)
    assert files.read_file(fs, "notes/a.txt", 2, 3, 1000) == "two\nthree"
    files.str_replace(fs, "notes/a.txt", "three", "THREE", False)
    files.write_file(fs, "notes/b.txt", "x x", False, 1000)
    with pytest.raises(SandboxError, match="2 times"):
        files.str_replace(fs, "notes/b.txt", "x", "y", False)
    assert "Replaced 2" in files.str_replace(fs, "notes/b.txt", "x", "y", True)
    listing = files.ls(fs, "/mnt/user-data/workspace", 1000)
    assert "notes/" in listing
    assert "a.txt" in listing
    assert str(fs.mounts[0].host) not in listing
    assert files.glob(fs, "**/*.txt", "/mnt/user-data/workspace", 10).splitlines() == [
        "/mnt/user-data/workspace/notes/a.txt",
        "/mnt/user-data/workspace/notes/b.txt",
    ]
    assert files.grep(fs, "three", "/mnt/user-data/workspace", "*.txt", False, False, 10) == (
        "/mnt/user-data/workspace/notes/a.txt:3: THREE"
    )
    with pytest.raises(SandboxError, match="too long"):
        files.write_file(fs, "big.txt", "x" * 2000, False, 1000)


async def test_bash_runs_in_workspace_with_timeout_and_cap(
    fs: VirtualFS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_API_KEY", "sk-hidden")
    out = await run_bash(
        fs, "pwd; echo $SOME_API_KEY; ls /mnt/user-data/uploads", timeout=5, limit=2000
    )
    assert out.splitlines()[0] == "/mnt/user-data/workspace"
    assert "sk-hidden" not in out
    assert out.endswith("[exit code 0]")
    assert "timed out" in (await run_bash(fs, "sleep 5", timeout=0.2, limit=2000)).lower()
    long = await run_bash(fs, "yes 0123456789 | head -c 20000", timeout=5, limit=1000)
    assert len(long) < 1100
    assert "characters cut" in long
