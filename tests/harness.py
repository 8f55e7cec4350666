"""Run the whole service in a test: real config, bus, dispatcher, agent (against the fake OpenAI
server) and channels (against their fake platform servers)."""

from __future__ import annotations

import asyncio
import copy
import sys
import threading
from pathlib import Path
from typing import Any

from bot.app import App
from bot.config.schema import Settings, settings_from_dict
from channels.backoff import BackoffPolicy
from channels.base import Channel
from gateway.server import serve
from tests.fakes.clock import VirtualClock


def service_config(
    data_dir: Path, fake_openai: Any, channels: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """A config dict with two models on the fake OpenAI server and the gateway on a free port."""
    base = f"{fake_openai.base_url}"
    config: dict[str, Any] = {
        "storage": {"data_dir": str(data_dir)},
        "gateway": {"host": "127.0.0.1", "port": 0},
        "models": [
            {
                "name": "fast",
                "display_name": "Fast",
                "model": "fake-fast",
                "api_key": "sk-test",
                "base_url": base,
                "max_retries": 0,
            },
            {
                "name": "smart",
                "display_name": "Smart",
                "model": "fake-smart",
                "api_key": "sk-test",
                "base_url": base,
                "max_retries": 0,
            },
        ],
        "channels": {"shutdown_grace_seconds": 2, **(channels or {})},
        # titles cost one extra model request per thread: tests that want them pass agent=...
        "agent": {"title": {"enabled": False}},
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return config


class ServiceHarness:
    """`async with ServiceHarness(tmp_path, fake_openai, channels={...}) as svc:`"""

    def __init__(
        self,
        data_dir: Path,
        fake_openai: Any,
        channels: dict[str, Any] | None = None,
        *,
        only: list[str] | None = None,
        channel_kwargs: dict[str, dict[str, Any]] | None = None,
        backoff: BackoffPolicy | None = None,
        schedule_clock: Any = None,
        pacer_clock: VirtualClock | None = None,
        **extra: Any,
    ) -> None:
        self.data_dir = data_dir
        self.raw = service_config(data_dir, fake_openai, channels, **extra)
        self.schedule_clock = schedule_clock
        self.pacer_clock = pacer_clock
        self.only = only
        self.channel_kwargs = channel_kwargs
        self.backoff = backoff
        self.app: App | None = None

    def settings(self) -> Settings:
        return settings_from_dict(copy.deepcopy(self.raw))

    async def __aenter__(self) -> ServiceHarness:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        self.app = App(
            self.settings(),
            only=self.only,
            channel_kwargs=self.channel_kwargs,
            backoff=self.backoff,
            schedule_clock=self.schedule_clock,
            front=serve,
        )
        if self.pacer_clock is not None:  # platform intervals pass in virtual time
            for channel in self.app.channels.values():
                channel.pacer.clock = self.pacer_clock
                channel.pacer.sleep = self.pacer_clock.sleep
        await self.app.start()

    async def stop(self) -> None:
        if self.app is not None:
            await self.app.stop()
            self.app = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    @property
    def running(self) -> App:
        """The started App (fails the test when the service is not running)."""
        assert self.app is not None, "the service is not running"
        return self.app

    def channel(self, name: str) -> Channel:
        assert self.app is not None
        return self.app.channels[name]

    @property
    def gateway_url(self) -> str:
        assert self.app is not None
        assert self.app.gateway is not None
        return self.app.gateway.url

    async def idle(self, timeout: float = 10.0) -> None:
        """Wait until nothing is queued and no run or command is in flight."""
        assert self.app is not None
        app = self.app
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            if app.bus.depth == 0 and await app.dispatcher.wait_idle(0.02) and app.bus.depth == 0:
                return
            await asyncio.sleep(0.01)
        raise TimeoutError("service did not become idle")

    async def fire_schedules(self) -> None:
        """One tick of the scheduler (its clock is the test's), then until the runs are done."""
        assert self.app is not None
        await self.app.schedules.scheduler.tick()
        await self.idle()


_NETWORK_EVENTS = (
    "http.client.connect",
    "http.client.send",
    "socket.getaddrinfo",
    "socket.connect",
)
_watches: list[BlockingIoWatch] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _watches and event in _NETWORK_EVENTS:
        # a connect blocks unless its socket is non-blocking (asyncio's are)
        blocking = event != "socket.connect" or args[0].gettimeout() != 0.0
        for watch in _watches:
            watch.saw(event, threading.get_ident(), blocking)


class BlockingIoWatch:
    """Records network calls by thread, through the interpreter's audit events: blocking ones
    (`http.client`, as under requests and urllib3; name lookups; connects of blocking sockets)
    on the loop's thread, and every one on other threads. A test asserts that none blocked the
    loop, and that the SDK's calls were seen at all (on its worker threads).

    `async with BlockingIoWatch() as watch: ...` then `watch.on_loop`, `watch.elsewhere`.
    """

    _hooked = False

    def __init__(self) -> None:
        self.on_loop: list[str] = []
        self.elsewhere: list[str] = []
        self._loop_thread = 0

    def saw(self, event: str, thread: int, blocking: bool) -> None:
        if thread != self._loop_thread:
            self.elsewhere.append(event)
        elif blocking:
            self.on_loop.append(event)

    async def __aenter__(self) -> BlockingIoWatch:
        if not BlockingIoWatch._hooked:  # an audit hook stays for the process: add it once
            sys.addaudithook(_audit)
            BlockingIoWatch._hooked = True
        self._loop_thread = threading.get_ident()
        _watches.append(self)
        return self

    async def __aexit__(self, *exc: object) -> None:
        _watches.remove(self)


async def answered(svc: ServiceHarness, fake_openai: Any, requests: int) -> None:
    """Wait until the agent was asked `requests` times and every reply is settled."""
    await fake_openai.wait_requests(requests, timeout=30)
    await svc.idle(timeout=30)
