"""What the throwaway servers of the tests share (tests/pg_server.py, tests/redis_server.py): a
temporary directory and a free port, and finding a server: the configured one if it answers,
else one started for the run."""

from __future__ import annotations

import abc
import os
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Self, TypeVar


class Throwaway(abc.ABC):
    """A server started for the test run, in a temporary directory, on a free port."""

    kind = "server"  # names the temporary directory
    start_errors: tuple[type[BaseException], ...] = (OSError,)  # what a failed start raises

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=f"antler-{self.kind}-"))
        self.port = free_port()

    @property
    @abc.abstractmethod
    def address(self) -> str:
        """What a client connects to (a DSN, a URL)."""

    @abc.abstractmethod
    def start(self) -> Self: ...

    @abc.abstractmethod
    def stop(self) -> None: ...


T = TypeVar("T", bound=Throwaway)


def find_server(
    env: str, default: str, answers: Callable[[str], bool], throwaway: type[T]
) -> tuple[str | None, T | None]:
    """(an address that answers, the throwaway server behind it if one was started): `$env`
    (else `default`) when it answers, else a `throwaway` started now."""
    address = os.environ.get(env, default)
    if answers(address):
        return address, None
    try:
        server = throwaway().start()
    except throwaway.start_errors:
        return None, None
    if answers(server.address):
        return server.address, server
    server.stop()
    return None, None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
