"""Escapes from the sandbox, tried as an attacker would: each is refused or contained.

They run against bwrap; every one of them fails against the local provider (run them with
ANTLER_TEST_SANDBOX=local to see it), which is the point of having a sandbox.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest

from agent.paths import thread_dirs
from agent.sandbox import files
from agent.sandbox.vfs import SandboxError
from tests.agent.sandbox_support import Box, gone, make_box, provider_under_test


@pytest.fixture
def box(tmp_path: Path) -> Box:
    return make_box(tmp_path)


async def test_host_system_files_are_not_there(box: Box) -> None:
    out = await box.sh("cat /etc/shadow; cat /etc/passwd; ls /root /home /var /work; echo end")
    assert "root:" not in out
    assert "end" in out  # it ran; it found nothing


async def test_the_services_config_and_secrets_cannot_be_read(box: Box) -> None:
    config, env = box.tmp / "config.yaml", box.tmp / ".env"
    config.write_text("bot_token: CONFIG-SECRET-7731\n")
    env.write_text("OPENAI_API_KEY=ENV-SECRET-4410\n")
    out = await box.sh(f"cat {config} {env}; cat {box.tmp}/*; ls -a {box.tmp}")
    out += await box.py(f"print(open({str(config)!r}).read())")
    assert "CONFIG-SECRET" not in out
    assert "ENV-SECRET" not in out


async def test_other_conversations_are_out_of_reach(box: Box) -> None:
    other = thread_dirs(box.tmp / "data", "t2")
    (other.workspace / "notes.txt").write_text("OTHER-THREAD-5521")
    threads = box.dirs.root.parent.parent
    out = await box.sh(f"cat {other.workspace}/notes.txt; ls {threads}; ls /mnt/user-data/..")
    out += await box.sh("cat /mnt/user-data/../../threads/t2/user-data/workspace/notes.txt")
    assert "OTHER-THREAD" not in out
    listing = await box.sh(f"ls {threads} /mnt/user-data/.. 2>/dev/null")
    assert "t2" not in listing.splitlines()


async def test_no_host_environment_not_even_in_proc(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTLER_PROBE", "HOST-ENV-9034")  # a plain name: no secret filter helps
    out = await box.sh(
        "env; cat /proc/1/environ; cat /proc/$PPID/environ; "
        "for f in /proc/[0-9]*/environ; do cat $f; done; echo"
    )
    assert "HOST-ENV-9034" not in out


async def test_declared_variables_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTLER_PASSED", "passed-1")
    monkeypatch.setenv("ANTLER_KEPT_OUT", "kept-out-2")
    box = make_box(tmp_path, pass_env=["ANTLER_PASSED"], env={"ANTLER_SET": "set-3"})
    out = await box.sh("env")
    assert "ANTLER_PASSED=passed-1" in out
    assert "ANTLER_SET=set-3" in out
    assert "kept-out-2" not in out


async def _listening() -> tuple[asyncio.Server, list[str]]:
    seen: list[str] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append("connected")
        writer.close()

    return await asyncio.start_server(on_connect, "127.0.0.1", 0), seen


CONNECT = """
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    print("CONNECTED")
except OSError as exc:
    print("refused:", exc)
"""


async def test_no_network(box: Box) -> None:
    server, seen = await _listening()
    port = server.sockets[0].getsockname()[1]
    async with server:
        out = await box.py(CONNECT.format(port=port))
        out += await box.sh(f"(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo CONNECTED")
    assert "CONNECTED" not in out
    assert seen == []


async def test_network_when_the_config_allows_it(tmp_path: Path) -> None:
    box = make_box(tmp_path, network=True)
    server, _seen = await _listening()
    async with server:
        out = await box.py(CONNECT.format(port=server.sockets[0].getsockname()[1]))
    assert "CONNECTED" in out, out


FORKS = """
import os
started = 0
try:
    for _ in range(200):
        if os.fork() == 0:
            os.execv("/bin/sh", ["/bin/sh", "-c", "sleep 30; : {marker}"])
        started += 1
    print("all started")
except OSError as exc:
    print("refused after", started, exc)
"""


async def test_processes_are_limited_and_none_outlives_the_command(tmp_path: Path) -> None:
    box = make_box(tmp_path, max_processes=24, uid=60002)  # its own user: see the bomb
    marker = f"marker{uuid.uuid4().hex}"
    out = await box.py(FORKS.format(marker=marker), timeout=60)
    assert "refused after" in out, out
    assert await gone(marker)  # the background processes went with the command


@pytest.mark.skipif(provider_under_test() == "local", reason="a real fork bomb on the host")
async def test_a_fork_bomb_is_contained(tmp_path: Path) -> None:
    # its own user (as root): the limit counts a user's tasks, other tests' commands not held up
    box = make_box(tmp_path, max_processes=32, uid=60001)
    marker = f"bomb{uuid.uuid4().hex}"
    out = await box.sh(f"b() {{ b | b & }}; b # {marker}", timeout=3)
    assert "exit code" in out or "timed out" in out
    assert await gone(marker)
    assert "ok" in await box.sh("echo ok")  # the next command runs as usual


async def test_the_timeout_kills_the_whole_tree(box: Box) -> None:
    marker = f"tree{uuid.uuid4().hex}"
    out = await box.sh(
        f"(sleep 300; : {marker}) & setsid sh -c 'sleep 301; : {marker}-own-session' & wait",
        timeout=1,
    )
    assert "timed out" in out
    assert await gone(marker)  # the one that left the process group too


async def test_file_size_cpu_and_memory_limits(tmp_path: Path) -> None:
    box = make_box(tmp_path, max_file_mb=1, cpu_seconds=1, memory_mb=256)
    out = await box.sh("head -c 5000000 /dev/zero > big; echo wrote")
    assert (box.dirs.workspace / "big").stat().st_size <= 1024 * 1024, out
    out = await box.sh("while :; do :; done", timeout=30)
    assert "timed out" not in out, out
    assert "CPU time limit" in out, out
    out = await box.py("x = bytearray(600 * 1024 * 1024)\nprint('ALLOCATED')")
    assert "ALLOCATED" not in out, out
    assert "MemoryError" in out, out


async def test_links_out_of_the_workspace_lead_nowhere(box: Box) -> None:
    other = thread_dirs(box.tmp / "data", "t2")
    (other.workspace / "notes.txt").write_text("OTHER-THREAD-5521")
    (box.tmp / "secret.txt").write_text("HOST-FILE-6617")
    out = await box.sh(
        f"ln -s {other.workspace}/notes.txt a; ln -s {box.tmp}/secret.txt b; "
        "ln -s /etc/shadow c; ln -s ../../../../../.. d; cat a b c; ls d; cat d/secret.txt"
    )
    assert "OTHER-THREAD" not in out
    assert "HOST-FILE" not in out
    assert "root:" not in out
    for name in ("a", "b"):  # and the file tools, on the service's side, refuse them too
        with pytest.raises(SandboxError):
            files.read_file(box.fs, name, None, None, 1000)


ZIP_SLIP = """
import io, tarfile, zipfile
evil = {target!r}
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as tar:
    data = b"PWNED"
    info = tarfile.TarInfo("../../../../../../../../../.." + evil)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
buf.seek(0)
try:
    tarfile.open(fileobj=buf).extractall(".")
    print("extracted")
except OSError as exc:
    print("refused:", exc)
"""


async def test_zip_slip_cannot_write_outside(box: Box) -> None:
    target = box.tmp / f"pwned-{uuid.uuid4().hex}"
    out = await box.py(ZIP_SLIP.format(target=str(target)))
    assert not target.exists(), out


async def test_system_folders_and_skills_are_read_only(box: Box) -> None:
    name = f"antler-probe-{uuid.uuid4().hex}"
    try:
        out = await box.sh(
            f"touch /usr/{name} /{name} /mnt/skills/public/on/{name}; ls /mnt/skills/public"
        )
        assert not Path("/usr", name).exists()
        assert not (box.tmp / "skills" / "public" / "on" / name).exists()
        assert "on" in out
        assert "off" not in out
    finally:
        Path("/usr", name).unlink(missing_ok=True)
        Path("/", name).unlink(missing_ok=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="the hand-over to the sandbox user is root's")
async def test_handing_the_folders_over_never_follows_links(box: Box) -> None:
    host_dir = box.tmp / "host-dir"
    host_dir.mkdir()
    (host_dir / "file").write_text("host")
    os.symlink(host_dir, box.dirs.workspace / "dir-link")
    os.symlink(host_dir / "file", box.dirs.uploads / "file-link")
    await box.sh("ln -s /etc made-inside; echo ok")
    for path in (host_dir, host_dir / "file"):
        assert path.stat().st_uid == 0
    assert (box.dirs.workspace / "dir-link").lstat().st_uid == box.cfg.uid
