"""`python -m bench soak --minutes N`: the service under modest mixed traffic for N minutes.

The service runs as its own process (`antler serve`) on PostgreSQL (a database of its own on
`ANTLER_TEST_PG_DSN`'s server) and Redis (a key prefix of its own on `ANTLER_TEST_REDIS_URL`),
with the four platforms' fakes and the fake model in the bench's process (bench/soak_traffic.py).
One step of traffic every `--interval` seconds (default 2), a schedule every 2 minutes, a
channel restart every 4 and a config reload every 5. Every minute it prints the service's RSS,
open files, asyncio tasks (`antler_asyncio_tasks` on /metrics), database connections (its
database's `pg_stat_activity`) and Redis memory (`used_memory`), each with its least-squares
slope per minute over the run, and the answers finished; the whole run is written to
bench/results/soak-<UTC time>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import time
import urllib.request
from pathlib import Path

import psycopg
import redis

from bench.soak_traffic import TOKEN, Fakes, Traffic
from tests.e2e.service_process import ServiceProcess, wait_until
from tests.e2e.workers import own_database
from tests.pg_server import DEFAULT_DSN
from tests.redis_server import DEFAULT_URL, drop_prefix, new_prefix

RESULTS = Path(__file__).parent / "results"
PROBE = Path(__file__).parent / "probe"
SERIES = ("rss_mb", "open_files", "asyncio_tasks", "db_connections", "redis_used_mb")


def slope(values: list[float]) -> float:
    """Least-squares slope of evenly spaced samples (per sample)."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    num = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values))
    den = sum((x - mean_x) ** 2 for x in range(n))
    return num / den


class Service(ServiceProcess):
    extra_env: dict[str, str] = {}

    def env(self) -> dict[str, str]:
        env = super().env()
        if "ANTLER_PROBE_DIR" in self.extra_env:
            env["PYTHONPATH"] = f"{PROBE}{os.pathsep}{env['PYTHONPATH']}"
        return {**env, **self.extra_env}

    def admin(self) -> str:
        port = re.findall(r"admin server on http://127\.0\.0\.1:(\d+)", self.logs[-1].read_text())
        return f"http://127.0.0.1:{port[-1]}"

    def ready(self) -> bool:
        return "admin server on" in self.logs[-1].read_text()

    def metric(self, name: str) -> float:
        request = urllib.request.Request(
            self.admin() + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        with urllib.request.urlopen(request, timeout=10) as resp:
            text = resp.read().decode()
        values = [float(m) for m in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)]
        return sum(values)


def sample(svc: Service, dsn: str, redis_url: str) -> dict[str, float]:
    assert svc.proc is not None
    pid = svc.proc.pid
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = int(re.findall(r"VmRSS:\s+(\d+)", status)[0])
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        ).fetchone()
    with redis.Redis.from_url(redis_url) as client:
        used = client.info("memory")["used_memory"]
    return {
        "rss_mb": round(rss_kb / 1024, 2),
        "open_files": len(os.listdir(f"/proc/{pid}/fd")),
        "asyncio_tasks": svc.metric("antler_asyncio_tasks"),
        "db_connections": float(row[0] if row else 0),
        "redis_used_mb": round(used / 2**20, 3),
        "answers_finished": svc.metric("antler_runs_finished_total"),
    }


def _print(minute: int, figures: dict[str, float], slopes: dict[str, float]) -> None:
    shown = "  ".join(f"{k} {figures[k]:g} ({slopes[k]:+.3f}/min)" for k in SERIES)
    print(f"[{minute:4d} min] {shown}  answers {figures['answers_finished']:g}", flush=True)


def _stop_on_term(*_: object) -> None:
    raise KeyboardInterrupt  # SIGTERM ends the run early like ^C: the samples so far are written


def drive(
    svc: Service,
    traffic: Traffic,
    args: argparse.Namespace,
    where: tuple[str, str],
    samples: list[dict[str, float]],
) -> None:
    started = time.monotonic()
    step, next_minute = 0, started + 60
    end = started + args.minutes * 60
    while time.monotonic() < end:
        traffic.step(step)
        step += 1
        elapsed = time.monotonic() - started
        if step % int(120 / args.interval) == 0:
            traffic.schedule()
        if step % int(240 / args.interval) == 0:
            traffic.restart_channel(flip=step % int(480 / args.interval) == 0)
        if step % int(300 / args.interval) == 0:
            traffic.reload_config()
        if time.monotonic() >= next_minute:
            try:
                samples.append({"minute": round(elapsed / 60, 2), **sample(svc, *where)})
            except OSError as exc:  # the metrics call timed out: this minute has no sample
                print(f"no sample this minute: {exc}", flush=True)
            slopes = {k: slope([s[k] for s in samples[1:]]) for k in SERIES}
            _print(len(samples), samples[-1], slopes)
            traffic.f.forget()
            next_minute += 60
        time.sleep(max(0.0, started + step * args.interval - time.monotonic()))


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench soak")
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between steps")
    parser.add_argument(
        "--probe", action="store_true", help="the probe in the service (bench/probe)"
    )
    parser.add_argument("--trace", type=int, default=0, help="tracemalloc frames (with --probe)")
    parser.add_argument("--trim", action="store_true", help="malloc_trim(0) after each probe")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        help="KEY=VALUE for the service, e.g. "
        "MALLOC_ARENA_MAX=2 or LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
    )
    args = parser.parse_args(argv)
    pg = os.environ.get("ANTLER_TEST_PG_DSN", DEFAULT_DSN)
    redis_url = os.environ.get("ANTLER_TEST_REDIS_URL", DEFAULT_URL)
    prefix = new_prefix()
    home = Path(os.environ.get("SOAK_DIR") or f"/tmp/antler-soak-{prefix}")
    home.mkdir(parents=True, exist_ok=True)
    samples: list[dict[str, float]] = []
    traffic: Traffic | None = None
    signal.signal(signal.SIGTERM, _stop_on_term)
    with own_database(pg) as dsn, Fakes() as fakes:
        svc = Service(
            home,
            fakes.openai.base_url,
            fakes.channels(),
            storage={
                "data_dir": str(home / "data"),
                "backend": "postgres",
                "postgres": {"dsn": dsn},
            },
            bus={"backend": "redis", "redis": {"url": redis_url, "key_prefix": prefix}},
            gateway={"host": "127.0.0.1", "port": 0, "auth_token": TOKEN},
            agent={"title": {"enabled": False}, "memory": {"enabled": False}},
        )
        svc.extra_env = _service_env(args, home)
        print(f"service env {svc.extra_env}, files in {home}", flush=True)
        svc.start()
        try:
            wait_until(svc.ready, 120, "the service to start")
            traffic = Traffic(fakes, svc.admin)
            drive(svc, traffic, args, (dsn, redis_url), samples)
        except KeyboardInterrupt:
            print("stopped early", flush=True)
        finally:
            svc.stop()
            drop_prefix(redis_url, prefix)
    _write(samples, args, traffic.counts if traffic else {}, home / "probe.jsonl")
    return 0


def _service_env(args: argparse.Namespace, home: Path) -> dict[str, str]:
    env = dict(item.split("=", 1) for item in args.env)
    if args.probe:
        env["ANTLER_PROBE_DIR"] = str(home)
        env["ANTLER_PROBE_TRACE"] = str(args.trace)
        env["ANTLER_PROBE_TRIM"] = "1" if args.trim else "0"
    return env


def _write(
    samples: list[dict[str, float]], args: argparse.Namespace, counts: dict[str, int], probe: Path
) -> None:
    body = samples[1:]  # the first minute is the warm-up (imports, pools, first turns)
    record = {
        "benchmark": "soak",
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "minutes": args.minutes,
        "step_interval_seconds": args.interval,
        "service_env": {k: v for k, v in (i.split("=", 1) for i in args.env)},
        "probe": args.probe,
        "slopes_per_minute_after_first": {k: round(slope([s[k] for s in body]), 4) for k in SERIES},
        "samples": samples,
        "traffic": counts,
        "load_1m": os.getloadavg()[0],
    }
    if probe.exists():  # --probe: what the service saw of itself, minute by minute
        record["probe"] = [json.loads(line) for line in probe.read_text().splitlines()]
    RESULTS.mkdir(exist_ok=True)
    name = f"soak-{time.strftime('%Y%m%dT%H%M', time.gmtime())}.json"
    (RESULTS / name).write_text(json.dumps(record, indent=2) + "\n")
    print(f"written to bench/results/{name}")
