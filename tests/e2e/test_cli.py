"""The real `antler` command in a subprocess: piped chat, serve with /health, graceful stop."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]


def write_config(tmp_path: Path, fake: FakeOpenAI, port: int = 0) -> Path:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        f"storage: {{data_dir: {tmp_path / 'data'}}}\n"
        f"gateway: {{host: 127.0.0.1, port: {port}}}\n"
        "models:\n"
        f"  - {{name: fast, display_name: Fast, model: fake-fast, api_key: sk,"
        f" base_url: '{fake.base_url}'}}\n"
        f"  - {{name: smart, display_name: Smart, model: fake-smart, api_key: sk,"
        f" base_url: '{fake.base_url}'}}\n"
    )
    return cfg


def env() -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    return {**clean, "NO_PROXY": "127.0.0.1,localhost", "PYTHONPATH": str(ROOT)}


def test_piped_chat_prints_replies_in_order(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    cfg = write_config(tmp_path, fake_openai)
    result = subprocess.run(
        [sys.executable, "-m", "gateway", "chat", "--config", str(cfg)],
        input="hello\n/new\n/models\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=env(),
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("echo: hello") < out.index("New conversation started.") < out.index("Models")
    assert "- `fast` — Fast ✓" in out
    assert "- `smart` — Smart\n" in out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=2) as resp:
        data: dict[str, object] = json.loads(resp.read())
        return data


@contextmanager
def serving(cfg: Path, port: int, environ: dict[str, str], start_up: float = 30) -> Iterator[Any]:
    """`antler serve --config cfg` until the block ends: yields its first `/health` answer;
    at the end SIGTERM stops it cleanly (exit 0) and it printed no traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway", "serve", "--config", str(cfg)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
        cwd=ROOT,
    )
    try:
        health = None
        deadline = time.monotonic() + start_up
        while time.monotonic() < deadline and health is None and proc.poll() is None:
            try:
                health = get_json(f"http://127.0.0.1:{port}/health")
            except OSError:
                time.sleep(0.1)
        assert health is not None, _stderr(proc) if proc.poll() is not None else "no answer"
        yield health
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in _stderr(proc)


def test_serve_answers_health_and_stops_cleanly_on_sigterm(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    port = free_port()
    with serving(write_config(tmp_path, fake_openai, port), port, env()) as health:
        assert health["status"] == "ok"
        assert isinstance(health["channels"], dict)


def _stderr(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None  # started with stderr=PIPE
    return proc.stderr.read()
