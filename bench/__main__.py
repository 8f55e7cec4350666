"""Run the benchmarks, print their figures and write them to bench/results/<name>.json.

`python -m bench` runs every `bench/*_bench.py`; `python -m bench spine telegram` runs those.
`python -m bench soak --minutes N` is the long run of bench/soak.py (not one of them).
Each module exposes `async def run() -> dict`.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
RESULTS = HERE / "results"


def _names(argv: list[str]) -> list[str]:
    found = sorted(p.stem.removesuffix("_bench") for p in HERE.glob("*_bench.py"))
    return [n for n in found if not argv or n in argv]


def _print(name: str, figures: dict[str, object]) -> None:
    print(f"\n== {name}")
    width = max((len(k) for k in figures), default=0)
    for key, value in figures.items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"  {key:<{width}}  {shown}")


def main(argv: list[str]) -> int:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        os.environ.pop(var, None)
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    sys.path.insert(0, str(HERE.parent))
    from bench.support import raise_fd_limit
    from bot.runtime import run, tune_gc

    raise_fd_limit()
    if argv[:1] == ["soak"]:  # a run of its own (bench/soak.py), not one of the benchmarks
        from bench import soak

        return soak.run(argv[1:])
    tune_gc()  # as `antler serve` runs
    RESULTS.mkdir(exist_ok=True)
    for name in _names(argv):
        module = importlib.import_module(f"bench.{name}_bench")
        started, load_before = time.time(), os.getloadavg()[0]
        figures = run(module.run())  # on the loop `antler serve` uses
        _print(name, figures)
        record = {
            "benchmark": name,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "seconds": round(time.time() - started, 1),
            "machine": _machine(load_before),
            "figures": figures,
        }
        (RESULTS / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
    return 0


def _machine(load_before: float) -> dict[str, object]:
    """Where the figures come from; the load averages show whether the machine was shared."""
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "load_1m_before": round(load_before, 2),
        "load_1m_after": round(os.getloadavg()[0], 2),
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
