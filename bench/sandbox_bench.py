"""Sandbox overhead: what starting one `bash` or `python` command costs per provider.

Wall time of `provider.run` from the call to the answer, for `true` (the start-up alone) and
for `python3 -c pass` (the python tool's start-up), on the local provider (a plain subprocess)
and on bwrap (prlimit + bubblewrap: namespaces, the mounts, and as root the hand-over of the
thread's folders and the switch to the sandbox user). A workspace with 200 files shows what the
hand-over costs as a conversation's folder grows. Docker is not measured here (no daemon).
"""

from __future__ import annotations

import time

from agent.config import SandboxConfig
from agent.paths import thread_dirs
from agent.sandbox.provider import Job, Provider, bwrap_works, make_provider
from agent.sandbox.vfs import VirtualFS
from bench.support import summary, temp_dir

RUNS = 40


async def _time(provider: Provider, fs: VirtualFS, job: Job) -> list[float]:
    await provider.run(fs, job, timeout=60, limit=2000)  # warm caches
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        out = await provider.run(fs, job, timeout=60, limit=2000)
        times.append(time.perf_counter() - start)
        if not out.endswith("[exit code 0]"):
            raise RuntimeError(f"{provider.name}: {out}")
    return times


async def run() -> dict[str, object]:
    figures: dict[str, object] = {"runs": RUNS}
    works, why = bwrap_works()
    figures["bwrap"] = why
    names = ["local", "bwrap"] if works else ["local"]
    root = temp_dir()
    for name in names:
        provider = make_provider(SandboxConfig(provider=name, bash_enabled=True))
        fs = VirtualFS(thread_dirs(root / name, "t1"))
        figures |= summary(f"{name}_true", await _time(provider, fs, Job.shell("true")))
        python = Job.python("pass", "python3")
        figures |= summary(f"{name}_python", await _time(provider, fs, python))
        for i in range(200):
            (fs.mounts[0].host / f"file{i}.txt").write_text("x")
        figures |= summary(f"{name}_true_200_files", await _time(provider, fs, Job.shell("true")))
    if works:
        figures["bwrap_overhead_true_p50_ms"] = round(
            float(figures["bwrap_true_p50_ms"]) - float(figures["local_true_p50_ms"]),  # type: ignore[arg-type]
            3,
        )
    return figures
