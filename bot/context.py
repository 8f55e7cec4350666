"""What each channel gets from the service: publish, webhook routes, state reporting."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.bus import MessageBus
from bot.gateway.routes import DynamicRoutes
from channels.base import Handler, InboundMessage, PublishResult


@dataclass
class ChannelState:
    """What /health and the admin API show about a channel."""

    enabled: bool = True
    running: bool = False
    connected: bool = False
    connected_since: float | None = None
    last_event_at: float | None = None
    last_error: str | None = None
    inbound: int = 0
    duplicates: int = 0
    reconnects: int = 0
    counters: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "counters"} | self.counters


class ServiceContext:
    """The `ChannelContext` the service hands to one channel."""

    def __init__(self, name: str, *, bus: MessageBus, routes: DynamicRoutes, data_dir: Path,
                 bot_name: str) -> None:
        self.name = name
        self.bus = bus
        self.routes = routes
        self.data_dir = data_dir / "channels" / name
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.bot_name = bot_name
        self.state = ChannelState()

    async def publish(self, msg: InboundMessage) -> PublishResult:
        self.state.last_event_at = time.time()
        result = await self.bus.publish(msg)
        if result is PublishResult.accepted:
            self.state.inbound += 1
        elif result is PublishResult.duplicate:
            self.state.duplicates += 1
        return result

    def add_route(self, method: str, path: str, handler: Handler) -> None:
        self.routes.add(method, path, handler)

    def report(self, *, connected: bool | None = None, error: str | None = None) -> None:
        if connected is not None:
            if connected and not self.state.connected:
                if self.state.connected_since is not None:
                    self.state.reconnects += 1
                    self.bus.metrics.reconnects.inc(channel=self.name)
                self.state.connected_since = time.time()
            self.state.connected = connected
        if error is not None:
            self.state.last_error = error
