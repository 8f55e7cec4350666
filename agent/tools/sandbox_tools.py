"""The sandbox tools the model calls: ls, read_file, write_file, str_replace, glob, grep, and
`bash` and `python` (run by the sandbox provider, see agent/sandbox/provider.py).

Each builds the thread's `VirtualFS` from `runtime.context` (an `agent.context.RunContext`);
refusals raise `SandboxError`, which the ToolErrors middleware turns into an error tool message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool

from agent.config import SandboxConfig
from agent.context import RunContext
from agent.sandbox import files
from agent.sandbox.contract import Job, Provider
from agent.sandbox.vfs import SandboxError, VirtualFS
from agent.tools.closure_tool import closure_tool

FILE_TOOLS = ("ls", "read_file", "write_file", "str_replace", "glob", "grep")


class FSFactory:
    """Builds the `VirtualFS` of the thread a tool runs for."""

    def __init__(self, skills_root: Path | None, skill_allowed: Callable[[str], bool]) -> None:
        self.skills_root = skills_root
        self.skill_allowed = skill_allowed

    def __call__(self, runtime: ToolRuntime[RunContext]) -> VirtualFS:
        context = runtime.context
        if not isinstance(context, RunContext):
            raise SandboxError("no thread context: file tools are unavailable")
        return VirtualFS(context.dirs, self.skills_root, self.skill_allowed)


def sandbox_tools(cfg: SandboxConfig, fs_for: FSFactory, provider: Provider) -> list[BaseTool]:
    tools = _file_tools(cfg, fs_for)
    if cfg.bash_enabled:
        tools += _code_tools(cfg, fs_for, provider)
    return tools


def _file_tools(cfg: SandboxConfig, fs_for: FSFactory) -> list[BaseTool]:
    return [*_reading_tools(cfg, fs_for), *_writing_tools(cfg, fs_for), *_search_tools(fs_for)]


def _reading_tools(cfg: SandboxConfig, fs_for: FSFactory) -> list[BaseTool]:
    @closure_tool
    async def ls(path: str, runtime: ToolRuntime[RunContext]) -> str:
        """List a directory two levels deep. Paths are absolute virtual paths such as
        /mnt/user-data/workspace, /mnt/user-data/uploads, /mnt/user-data/outputs, /mnt/skills."""
        return await _off(files.ls, fs_for(runtime), path, cfg.output_max_chars)

    @closure_tool
    async def read_file(
        path: str,
        runtime: ToolRuntime[RunContext],
        start_line: int | None = None,
        end_line: int | None = None,
    ) -> str:
        """Read a text file. start_line and end_line (1-based, inclusive) read a range."""
        return await _off(
            files.read_file, fs_for(runtime), path, start_line, end_line, cfg.read_max_chars
        )

    return [ls, read_file]


def _writing_tools(cfg: SandboxConfig, fs_for: FSFactory) -> list[BaseTool]:
    @closure_tool
    async def write_file(
        path: str, content: str, runtime: ToolRuntime[RunContext], append: bool = False
    ) -> str:
        """Write a text file (creating folders); append=true adds to the end instead.
        Put deliverables for the user in /mnt/user-data/outputs, scratch work in the workspace."""
        return await _off(
            files.write_file, fs_for(runtime), path, content, append, cfg.write_max_chars
        )

    @closure_tool
    async def str_replace(
        path: str,
        old_str: str,
        new_str: str,
        runtime: ToolRuntime[RunContext],
        replace_all: bool = False,
    ) -> str:
        """Replace old_str with new_str in a file. old_str must occur exactly once unless
        replace_all is true. Prefer this to rewriting a whole file."""
        return await _off(files.str_replace, fs_for(runtime), path, old_str, new_str, replace_all)

    return [write_file, str_replace]


def _search_tools(fs_for: FSFactory) -> list[BaseTool]:
    @closure_tool
    async def glob(
        pattern: str,
        runtime: ToolRuntime[RunContext],
        path: str = "/mnt/user-data",
        max_results: int = 200,
    ) -> str:
        """Find files by glob pattern (e.g. '**/*.csv') under path."""
        fs = fs_for(runtime)
        if path.rstrip("/") == "/mnt/user-data":
            return await _each_mount(fs, lambda p: files.glob(fs, pattern, p, max_results))
        return await _off(files.glob, fs, pattern, path, max_results)

    @closure_tool
    async def grep(
        pattern: str,
        runtime: ToolRuntime[RunContext],
        path: str = "/mnt/user-data/workspace",
        glob: str | None = None,
        literal: bool = False,
        case_sensitive: bool = False,
        max_results: int = 100,
    ) -> str:
        """Search file contents for a regular expression (or a literal string) under path;
        glob filters file names (e.g. '*.py')."""
        return await _off(
            files.grep, fs_for(runtime), pattern, path, glob, literal, case_sensitive, max_results
        )

    return [glob, grep]


def _code_tools(cfg: SandboxConfig, fs_for: FSFactory, provider: Provider) -> list[BaseTool]:
    @closure_tool
    async def bash(command: str, runtime: ToolRuntime[RunContext]) -> str:
        """Run a bash command in /mnt/user-data/workspace (the working directory). Output is
        capped and the command is killed after a timeout. Use /mnt/user-data/... paths."""
        return await provider.run(
            fs_for(runtime),
            Job.shell(command),
            timeout=cfg.bash_timeout_seconds,
            limit=cfg.output_max_chars,
        )

    @closure_tool
    async def python(code: str, runtime: ToolRuntime[RunContext]) -> str:
        """Run a Python 3 script (the code, not a file name) in /mnt/user-data/workspace; print
        what you need to see. Files it writes under /mnt/user-data are kept; put deliverables
        in /mnt/user-data/outputs. Output is capped and the script is killed after a timeout."""
        return await provider.run(
            fs_for(runtime),
            Job.python(code, cfg.python_command),
            timeout=cfg.bash_timeout_seconds,
            limit=cfg.output_max_chars,
        )

    return [bash, python]


async def _off(fn: Callable[..., str], *args: Any) -> str:
    return await asyncio.to_thread(fn, *args)


async def _each_mount(fs: VirtualFS, run: Callable[[str], str]) -> str:
    results = [await asyncio.to_thread(run, m.virtual) for m in fs.mounts[:3]]
    found = [r for r in results if not r.startswith("no files match")]
    return "\n".join(found) if found else results[0]
