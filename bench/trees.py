"""Before and after from one run: a bench measured in another source tree and in this one.

`BENCH_BEFORE_TREE=/path/to/checkout` (main's, or a `git worktree` of the commit before a
change) makes a bench that supports it run itself in child processes, each on one tree's code
(its directory first on `sys.path`), alternating before, after, after, before, ...
(`BENCH_PAIRS` pairs, default 2), so load on the shared machine falls on both alike. Each child
runs the bench's ordinary `run()` and hands back its figures; the caller gets them per tree.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
BEFORE_TREE = "BENCH_BEFORE_TREE"
PAIRS = int(os.environ.get("BENCH_PAIRS", "2"))
MARK = "BENCH-FIGURES "

_CHILD = f"""
import importlib, json, os, sys
sys.path.insert(0, sys.argv[1])
from bench.support import raise_fd_limit
from bot.runtime import run, tune_gc
raise_fd_limit()
tune_gc()
module = importlib.import_module("bench." + sys.argv[2] + "_bench")
print({MARK!r} + json.dumps(run(module.run())), flush=True)
"""


def before_tree() -> Path | None:
    """The tree to compare with, when asked for (and not already inside a child)."""
    tree = os.environ.get(BEFORE_TREE)
    return Path(tree).resolve() if tree else None


def describe(tree: Path) -> str:
    """The tree's commit and its subject, marked `+changes` when its files differ from it."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True)
        return done.stdout.strip()

    commit = git("log", "-1", "--format=%h %s")[:72] or "?"
    return commit + (" +changes" if git("status", "--porcelain", "--untracked-files=no") else "")


async def figures_in(tree: Path, bench: str) -> dict[str, Any]:
    """`bench`'s figures measured on `tree`'s code in a child process of its own."""
    env = {k: v for k, v in os.environ.items() if k != BEFORE_TREE}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CHILD, str(tree), bench,
        cwd=tree, env=env, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await proc.communicate()
    for line in reversed(out.decode().splitlines()):
        if line.startswith(MARK):
            figures: dict[str, Any] = json.loads(line[len(MARK) :])
            return figures
    raise RuntimeError(f"{bench} on {tree} gave no figures (exit {proc.returncode})")


async def before_and_after(before: Path, bench: str) -> dict[str, list[dict[str, Any]]]:
    """Each tree's figures from `PAIRS` alternating children: before, after, after, before..."""
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for pair in range(PAIRS):
        order = ("before", "after") if pair % 2 == 0 else ("after", "before")
        for side in order:
            runs[side].append(await figures_in(before if side == "before" else HERE, bench))
    return runs
