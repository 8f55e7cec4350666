"""A Gateway run in flight when `antler serve` is SIGKILLed, on both backends: after the restart
the run reads `error` (never stuck `running`), `/join` returns that error, and the thread takes
a new run."""

from __future__ import annotations

import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from langgraph_sdk import get_sync_client

from bot.stores.gateway import ORPHANED
from tests.e2e.service_process import ServiceProcess, wait_until
from tests.e2e.test_cli import free_port, get_json
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply

TOKEN = "crash-token"
HUMAN: dict[str, Any] = {"messages": [{"role": "user", "content": "hello there"}]}


@pytest.fixture
def service(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: dict[str, Any]
) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(
        tmp_path,
        fake_openai.base_url,
        {},
        storage={"data_dir": str(tmp_path / "data"), **storage},
        gateway={"host": "127.0.0.1", "port": free_port(), "auth_token": TOKEN},
    )
    yield svc
    svc.stop()


def start(svc: ServiceProcess) -> str:
    svc.start()
    base = f"http://127.0.0.1:{svc_port(svc)}"

    def healthy() -> bool:
        try:
            return bool(get_json(base + "/health"))
        except (OSError, urllib.error.URLError):
            return False

    wait_until(healthy, 60, "the gateway to answer")
    return base


def svc_port(svc: ServiceProcess) -> int:
    return int(yaml.safe_load(svc.config.read_text())["gateway"]["port"])


def test_a_run_in_flight_at_a_kill_reads_error_after_the_restart(
    service: ServiceProcess, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(text="slow slow slow slow", stall_after=1), Reply(text="again"))
    base = start(service)
    sdk = get_sync_client(
        url=base + "/api", api_key=None, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    tid = sdk.threads.create(metadata={"kind": "crash"})["thread_id"]
    run = sdk.runs.create(tid, "lead_agent", input=HUMAN)
    wait_until(lambda: fake_openai.requests, 20, "the run to ask the model")
    assert sdk.runs.get(tid, run["run_id"])["status"] == "running"
    service.kill()
    fake_openai.release()
    base = start(service)
    sdk = get_sync_client(
        url=base + "/api", api_key=None, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    after: dict[str, Any] = dict(sdk.runs.get(tid, run["run_id"]))
    assert after["status"] == "error"
    assert after["error"] == ORPHANED["message"]
    assert sdk.runs.list(tid) == [after]
    assert sdk.threads.get(tid)["status"] == "error"
    assert sdk.runs.join(tid, run["run_id"])["__error__"]["message"] == ORPHANED["message"]
    assert [p.event for p in sdk.runs.join_stream(tid, run["run_id"])] == ["error", "end"]
    assert [t["thread_id"] for t in sdk.threads.search(metadata={"kind": "crash"})] == [tid]
    result: Any = sdk.runs.wait(tid, "lead_agent", input=HUMAN)
    assert result["messages"][-1]["content"] == "again"
    assert sdk.threads.get(tid)["status"] == "idle"
