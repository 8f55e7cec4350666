"""The soak's probe inside the service: `python -m bench soak --probe` puts this directory first
on the service's PYTHONPATH, so Python imports it at start-up.

A daemon thread writes one JSON line a minute to `$ANTLER_PROBE_DIR/probe.jsonl`: RSS, threads,
glibc's `mallinfo2` (bytes in use and free inside the heap, mmapped) or jemalloc's
`stats.allocated`/`stats.resident`, the bytes tracemalloc traces and the object count of the
types that grew most since the first minute. With `ANTLER_PROBE_TRACE=N` tracemalloc runs
from minute 1 with N frames and every 10 minutes the lines that grew most since minute 3 go to
`tracemalloc-<minute>.txt`. With `ANTLER_PROBE_TRIM=1` it calls `malloc_trim(0)` after each
sample and records RSS again (what the allocator held free but had not given back).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import re
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path

DIR = Path(os.environ.get("ANTLER_PROBE_DIR", "."))
EVERY = float(os.environ.get("ANTLER_PROBE_SECONDS", "60"))
FRAMES = int(os.environ.get("ANTLER_PROBE_TRACE", "0") or 0)
TRIM = os.environ.get("ANTLER_PROBE_TRIM") == "1"
LIBC = ctypes.CDLL(None)


class MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _status() -> dict[str, int]:
    text = Path("/proc/self/status").read_text()
    rss = int(re.findall(r"VmRSS:\s+(\d+)", text)[0])
    threads = int(re.findall(r"Threads:\s+(\d+)", text)[0])
    return {"rss_kb": rss, "threads": threads}


def _maps() -> dict[str, int]:
    """Resident kB by kind of mapping: files (code, data), the brk heap, Python's 1 MiB
    arenas (pymalloc), glibc's thread arenas (64 MiB reservations), thread stacks, other."""
    kinds: Counter[str] = Counter()
    kind = ""
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and not head[0].endswith(":"):
            lo, hi = (int(x, 16) for x in head[0].split("-"))
            size, path = hi - lo, head[5] if len(head) > 5 else ""
            if path.startswith("/"):
                kind = "maps_files"
            elif path == "[heap]":
                kind = "maps_brk"
            elif path.startswith("[stack"):
                kind = "maps_stack"
            elif size == 1 << 20:
                kind = "maps_pymalloc"
            elif size in (64 << 20, 8 << 20, 8 << 20 | 4096) or size % (64 << 20) == 0:
                kind = "maps_64m_or_stack"
            else:
                kind = "maps_anon"
        elif head[0] == "Rss:":
            kinds[kind] += int(head[1])
    return dict(kinds)


def _jemalloc() -> dict[str, int] | None:
    mallctl = getattr(LIBC, "mallctl", None)
    if mallctl is None:
        return None
    epoch = ctypes.c_uint64(1)
    size = ctypes.c_size_t(8)
    mallctl(b"epoch", None, None, ctypes.byref(epoch), size)
    out: dict[str, int] = {}
    for name in ("allocated", "active", "resident", "retained", "mapped"):
        value = ctypes.c_size_t(0)
        length = ctypes.c_size_t(ctypes.sizeof(value))
        mallctl(f"stats.{name}".encode(), ctypes.byref(value), ctypes.byref(length), None, 0)
        out[f"je_{name}"] = value.value
    return out


def _glibc() -> dict[str, int]:
    fn = LIBC.mallinfo2
    fn.restype = MallInfo2
    info = fn()
    return {
        "heap_arena": info.arena,
        "heap_in_use": info.uordblks,
        "heap_free": info.fordblks,
        "mmapped": info.hblkhd,
        "top_free": info.keepcost,
    }


def _types() -> Counter[str]:
    return Counter(type(o).__qualname__ for o in gc.get_objects())


def _diff(base: tracemalloc.Snapshot, minute: int) -> None:
    now = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    lines = [str(stat) for stat in now.compare_to(base, "lineno")[:40]]
    lines += ["", "by traceback:"]
    for stat in now.compare_to(base, "traceback")[:8]:
        lines += [str(stat), *stat.traceback.format()]
    (DIR / f"tracemalloc-{minute:04d}.txt").write_text("\n".join(lines) + "\n")


def _loop() -> None:
    base_types: Counter[str] | None = None
    base_snap: tracemalloc.Snapshot | None = None
    minute = 0
    while True:
        time.sleep(EVERY)
        minute += 1
        row: dict[str, object] = {"minute": minute, "at": time.time(), **_status()}
        row.update(_jemalloc() or _glibc())
        row.update(_maps())
        if tracemalloc.is_tracing():
            row["traced"] = tracemalloc.get_traced_memory()[0]
        types = _types()
        row["objects"] = sum(types.values())
        if base_types is None:
            base_types = types
        grown = types.copy()
        grown.subtract(base_types)
        row["grown_types"] = dict(grown.most_common(12))
        if TRIM:
            LIBC.malloc_trim(0)
            row["rss_kb_after_trim"] = _status()["rss_kb"]
        if FRAMES and minute == 1:  # after the start-up: what grows from now on
            tracemalloc.start(FRAMES)
        if FRAMES and minute == 3:
            base_snap = tracemalloc.take_snapshot()
        if base_snap is not None and minute % 10 == 0:
            _diff(base_snap, minute)
        with (DIR / "probe.jsonl").open("a") as out:
            out.write(json.dumps(row) + "\n")


if os.environ.get("ANTLER_PROBE_DIR"):
    threading.Thread(target=_loop, name="soak-probe", daemon=True).start()
