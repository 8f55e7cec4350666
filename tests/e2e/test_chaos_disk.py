"""Chaos: the disk under the SQLite store fills up mid-traffic (the service's data_dir on a
small tmpfs of the test's own, filled to the last byte by a file, which is then removed).
Nothing is dropped while the disk is full: the Telegram poller and the replies wait it out,
and once there is room again every message is answered once, in order, nothing else shown.

Mounting a tmpfs needs root (CI runs as root); elsewhere the test is skipped, except in CI
(`ANTLER_TEST_PG_REQUIRED`), where it fails."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import pg_server
from tests.e2e.chaos import Traffic, during, report
from tests.e2e.service_process import ServiceProcess, wait_until
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram

DISK = "48m"
FULL_SECONDS = 5
CHATS = list(range(701, 709))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK}", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        reason = f"a tmpfs could not be mounted (root needed): {done.stderr.decode().strip()}"
        if pg_server.required():
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """A file taking every free byte of `disk`."""
    filler = disk / "filler"
    with filler.open("wb") as out, contextlib.suppress(OSError):
        while True:
            out.write(b"\0" * 65536)
            out.flush()
    os.sync()
    return filler


class Service(ServiceProcess):
    def ready(self) -> bool:
        return "channel telegram  running" in self.logs[-1].read_text()


def test_the_disk_under_sqlite_fills_up_mid_traffic(
    tmp_path: Path, fake_openai: FakeOpenAI, telegram: FakeTelegram, small_disk: Path
) -> None:
    svc = Service(
        tmp_path,
        fake_openai.base_url,
        {"telegram": telegram.channel_config()},
        storage={"data_dir": str(small_disk / "data"), "backend": "sqlite"},
        agent={"title": {"enabled": False}, "memory": {"enabled": False}},
    )
    svc.start()
    try:
        wait_until(svc.ready, 60, "the service to start")
        traffic = Traffic(telegram, CHATS)

        def disk_full() -> None:
            filler = fill(small_disk)
            time.sleep(FULL_SECONDS)
            filler.unlink()

        ended = during(traffic, disk_full)
        recovered = traffic.settle(ended)
        assert "Traceback" not in svc.output()
    finally:
        svc.stop()
    report("disk full under SQLite", traffic, recovered, full_seconds=FULL_SECONDS)
