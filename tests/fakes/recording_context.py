"""The one `ChannelContext` for channel tests: records what a channel publishes, the routes it
adds and the state it reports, and can serve those routes on 127.0.0.1."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Unpack

from aiohttp import web

from bot import i18n, texts
from bot.command_registry import CommandRegistry
from channels.backoff import RetryState
from channels.base import Handler, InboundMessage, MenuCommand, PublishResult, Report
from channels.choices import ChoiceStore, MemoryChoices


@dataclass
class RecordingContext:
    """`result`: what `publish` answers (a non-accepted result records nothing); a redelivered
    event id answers `duplicate`, like the service's journal. `reports` holds one dict per
    `report` call: {"connected", "error", "retry"}."""

    data_dir: Path
    bot_name: str = "Antler"
    choice_expired: str = texts.CHOICE_EXPIRED
    result: PublishResult = PublishResult.accepted
    menu: tuple[MenuCommand, ...] = field(default_factory=lambda: CommandRegistry().menu())
    published: list[InboundMessage] = field(default_factory=list)
    routes: dict[tuple[str, str], Handler] = field(default_factory=dict)
    reports: list[dict[str, Any]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    choices: ChoiceStore = field(default_factory=MemoryChoices)
    publishes: int = 0
    """Every `publish` call, duplicates and refusals included."""
    url: str = ""
    _runner: web.AppRunner | None = None

    async def publish(self, msg: InboundMessage) -> PublishResult:
        self.publishes += 1
        if self.result is not PublishResult.accepted:
            return self.result
        if msg.event_id in self.seen:
            return PublishResult.duplicate
        self.seen.add(msg.event_id)
        self.published.append(msg)
        return PublishResult.accepted

    def commands(self, language: str = "") -> tuple[MenuCommand, ...]:
        if not language:
            return self.menu
        with i18n.use(i18n.supported(language) or i18n.SOURCE):
            return CommandRegistry().menu()

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i18n.primary(loc) for loc in i18n.available()))

    def add_route(self, method: str, path: str, handler: Handler) -> None:
        self.routes[(method, path)] = handler

    def report(self, **state: Unpack[Report]) -> None:
        self.reports.append({key: state.get(key) for key in ("connected", "error", "retry")})

    @property
    def retries(self) -> list[RetryState]:
        return [r["retry"] for r in self.reports if r["retry"] is not None]

    async def wait_published(self, n: int = 1, timeout: float = 5.0) -> list[InboundMessage]:
        async with asyncio.timeout(timeout):
            while len(self.published) < n:
                await asyncio.sleep(0.01)
        return self.published

    async def serve(self) -> None:
        """Serve the added routes on a free port of 127.0.0.1 (`url`)."""
        app = web.Application()
        for (method, path), handler in self.routes.items():
            app.router.add_route(method, path, handler)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
