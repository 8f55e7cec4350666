"""Run the whole service in a test: real config, bus, dispatcher, agent (against the fake OpenAI
server) and channels (against their fake platform servers)."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

from bot.app import App
from bot.config import Settings, settings_from_dict
from channels.backoff import BackoffPolicy
from channels.base import Channel


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
        **extra: Any,
    ) -> None:
        self.data_dir = data_dir
        self.raw = service_config(data_dir, fake_openai, channels, **extra)
        self.schedule_clock = schedule_clock
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
        self.app = App(self.settings(), only=self.only, channel_kwargs=self.channel_kwargs,
                       backoff=self.backoff, schedule_clock=self.schedule_clock)
        await self.app.start()

    async def stop(self) -> None:
        if self.app is not None:
            await self.app.stop()
            self.app = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()

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


class LoopWatch:
    """Measures how late the running loop wakes up: a blocking call on it shows as lag.

    `async with LoopWatch() as watch: ...` then check `watch.max_lag`.
    """

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.max_lag = 0.0
        self.samples = 0
        self._task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(self.interval)
            self.max_lag = max(self.max_lag, loop.time() - start - self.interval)
            self.samples += 1

    async def __aenter__(self) -> LoopWatch:
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
