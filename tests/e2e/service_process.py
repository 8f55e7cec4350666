"""`antler serve` as a subprocess on a data dir that outlives it: start, SIGKILL, start again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    return {**env, "NO_PROXY": "127.0.0.1,localhost", "PYTHONPATH": str(ROOT)}


def wait_until(predicate: Callable[[], object], timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        time.sleep(0.02)


class ServiceProcess:
    """One service configuration; `start()` may be called again after `kill()`."""

    def __init__(
        self, tmp_path: Path, openai_base: str, channels: dict[str, object], **extra: object
    ) -> None:
        self.dir = tmp_path
        self.config = tmp_path / "config.yaml"
        model = {
            "display_name": "Fast",
            "model": "fake-fast",
            "api_key": "sk",
            "base_url": openai_base,
            "max_retries": 0,
        }
        config: dict[str, object] = {
            "storage": {"data_dir": str(tmp_path / "data")},
            "gateway": {"host": "127.0.0.1", "port": 0},
            "models": [{"name": "fast", **model}],
            "channels": {"shutdown_grace_seconds": 2, **channels},
            "agent": {"title": {"enabled": False}},
            **extra,
        }
        self.config.write_text(yaml.safe_dump(config))
        self.proc: subprocess.Popen[str] | None = None
        self.logs: list[Path] = []

    def start(self) -> ServiceProcess:
        log = self.dir / f"serve-{len(self.logs)}.log"
        self.logs.append(log)
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gateway", "serve", "--config", str(self.config)],
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                env=self.env(),
                cwd=ROOT,
            )
        return self

    def env(self) -> dict[str, str]:
        """The service's environment (a subclass adds to it)."""
        return clean_env()

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, like a crash or an OOM kill."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def output(self) -> str:
        return "\n".join(p.read_text() for p in self.logs if p.exists())
