"""Run one sandboxed command: a new session, a wall-clock timeout that kills its process group,
and output read as it comes, keeping the head and the tail, killed past a byte limit.

Every provider runs its command line through `run_process`; what differs is the command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

CHUNK = 65536


@dataclass(frozen=True, slots=True)
class Outcome:
    output: str
    returncode: int | None
    timed_out: bool = False
    too_much_output: bool = False


class _Capture:
    """The first and the last `keep` bytes of a stream, and how many were seen."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - self.keep)]

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        if not self.tail:
            return head
        cut = self.total - len(self.head) - len(self.tail)
        gap = f"\n... [{cut} bytes cut] ...\n" if cut else ""
        return head + gap + self.tail.decode("utf-8", errors="replace")


async def run_process(
    argv: list[str],
    *,
    env: dict[str, str],
    timeout: float,
    keep_bytes: int,
    max_bytes: int,
    cwd: str | None = None,
    stdin: bytes | None = None,
    on_kill: Callable[[], Awaitable[None]] | None = None,
) -> Outcome:
    """Run `argv`; stdout and stderr together. A timeout or more than `max_bytes` of output kills
    the process group (and calls `on_kill`, for a tree the group does not hold)."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    capture = _Capture(keep_bytes)
    try:
        timed_out, flooded = await _drive(proc, stdin, capture, timeout, max_bytes)
    except asyncio.CancelledError:
        await _kill(proc, on_kill)
        raise
    if timed_out or flooded:
        await _kill(proc, on_kill)
    return Outcome(capture.text(), proc.returncode, timed_out, flooded)


async def _drive(
    proc: asyncio.subprocess.Process,
    stdin: bytes | None,
    capture: _Capture,
    timeout: float,
    max_bytes: int,
) -> tuple[bool, bool]:
    feeder = asyncio.create_task(_feed(proc, stdin)) if stdin is not None else None
    reader = asyncio.create_task(_read(proc, capture, max_bytes))
    try:
        done, _ = await asyncio.wait({reader}, timeout=timeout)
        if not done:
            return True, False
        flooded = reader.result()
        if not flooded:
            await proc.wait()
        return False, flooded
    finally:
        for task in (reader, feeder):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
        proc.stdin.close()


async def _read(proc: asyncio.subprocess.Process, capture: _Capture, max_bytes: int) -> bool:
    """Read to the end; True when the output passed `max_bytes` (the reading stops there)."""
    assert proc.stdout is not None
    while chunk := await proc.stdout.read(CHUNK):
        capture.add(chunk)
        if capture.total > max_bytes:
            return True
    return False


async def _kill(
    proc: asyncio.subprocess.Process, on_kill: Callable[[], Awaitable[None]] | None
) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if on_kill is not None:
        with contextlib.suppress(Exception):
            await on_kill()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), 10)
    with contextlib.suppress(Exception):  # to the end of the pipe, so its transport closes
        await asyncio.wait_for(_drain(proc), 5)


async def _drain(proc: asyncio.subprocess.Process) -> None:
    assert proc.stdout is not None
    while await proc.stdout.read(CHUNK):
        pass
