"""What every sandbox provider keeps: a job to run inside, the provider's interface, and the
tool's answer made from how the command ended (agent/sandbox/provider.py chooses the provider)."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Protocol

from agent.sandbox.files import clip
from agent.sandbox.proc import Outcome
from agent.sandbox.vfs import VirtualFS


@dataclass(frozen=True, slots=True)
class Job:
    """What to run inside: an argv, and the bytes for its stdin (a python script)."""

    argv: tuple[str, ...]
    stdin: bytes | None = None

    @staticmethod
    def shell(command: str) -> Job:
        return Job(("/bin/bash", "-c", command))

    @staticmethod
    def python(code: str, python: str) -> Job:
        return Job((python, "-"), code.encode("utf-8"))


class Provider(Protocol):
    name: str

    async def run(self, fs: VirtualFS, job: Job, *, timeout: float, limit: int) -> str: ...

    async def close(self) -> None: ...


def report(
    outcome: Outcome, *, timeout: float, limit: int, max_bytes: int, tree: bool = True
) -> str:
    """The tool's answer: the output (head and tail) and how the command ended. `tree`: the
    provider kills everything the command started (local kills its process group only)."""
    text = outcome.output.rstrip()
    if outcome.timed_out:
        killed = "the command and all it started were" if tree else "its process group was"
        status = f"timed out after {timeout:g} s; {killed} killed"
    elif outcome.too_much_output:
        status = f"output passed {max_bytes // (1024 * 1024)} MB; the command was killed"
    else:
        status = _exit_status(outcome.returncode)
    return clip(f"{text}\n[{status}]" if text else f"[{status}]", limit)


def _exit_status(code: int | None) -> str:
    if code is None:
        return "exit code unknown"
    if code < 0 or code > 128:
        number = -code if code < 0 else code - 128
        try:
            name = signal.Signals(number).name
        except ValueError:
            return f"exit code {code}"
        hint = {"SIGXCPU": " (CPU time limit)", "SIGXFSZ": " (file size limit)"}.get(name, "")
        return f"exit code {code}: killed by {name}{hint}"
    return f"exit code {code}"
