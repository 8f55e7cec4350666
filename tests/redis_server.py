"""A real Redis server for the tests.

`ANTLER_TEST_REDIS_URL` (default: the machine's server, redis://127.0.0.1:6379/0); when nothing
answers there, a throwaway `redis-server` is started from the installed binary (in a temporary
directory, on a free port, no persistence) and stopped at the end. Without either the Redis
tests are skipped with a message naming what to install, except in CI (`CI` or
`ANTLER_TEST_PG_REQUIRED` set), where they fail instead.

Each test gets a key prefix of its own (`bus.redis.key_prefix`), whose keys are deleted after.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid

import redis

from tests import throwaway
from tests.pg_server import required

__all__ = ["INSTALL_HINT", "Throwaway", "drop_prefix", "find_server", "new_prefix", "required"]

DEFAULT_URL = "redis://127.0.0.1:6379/0"
INSTALL_HINT = (
    "no Redis server answered at ANTLER_TEST_REDIS_URL and none could be started: "
    "install Redis (apt-get install redis-server) or set ANTLER_TEST_REDIS_URL"
)


def answers(url: str) -> bool:
    try:
        with redis.Redis.from_url(url, socket_connect_timeout=2) as client:
            return bool(client.ping())
    except (redis.RedisError, OSError):
        return False


class Throwaway(throwaway.Throwaway):
    """redis-server in a temporary directory, without persistence unless `persistent` (an
    append-only file written at every command: a restart keeps everything)."""

    kind = "redis"
    proc: subprocess.Popen[bytes] | None = None

    def __init__(self, *, persistent: bool = False) -> None:
        super().__init__()
        self.persistent = persistent

    @property
    def address(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> Throwaway:
        binary = shutil.which("redis-server")
        if binary is None:
            raise OSError("redis-server not found")
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes" if self.persistent else "no",
                "--appendfsync",
                "always",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not answers(self.address) and time.monotonic() < deadline:
            time.sleep(0.05)
        return self

    def halt(self) -> None:
        """Kill the server (`start()` brings it back on the same port: with what the
        append-only file kept when persistent, empty otherwise)."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None

    def stop(self) -> None:
        self.halt()
        shutil.rmtree(self.dir, ignore_errors=True)


def find_server() -> tuple[str | None, Throwaway | None]:
    """(a URL that answers, the throwaway server behind it if one was started)."""
    return throwaway.find_server("ANTLER_TEST_REDIS_URL", DEFAULT_URL, answers, Throwaway)


def new_prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


def drop_prefix(url: str, prefix: str) -> None:
    with redis.Redis.from_url(url) as client:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
