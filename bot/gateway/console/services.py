"""The narrow service objects the console's pages use, built once from the App.

Each page gets only what it reads and changes: no page holds the App or the Dispatcher. The
writes go through the same functions the admin API uses (restart, skills, MCP file, memory
store, schedule admin), so a change made here is the change the API would make.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.config import ModelConfig
from bot.context import ChannelState
from bot.conversations import Conversation, ConversationStore
from bot.gateway.console.metrics_history import MetricsHistory
from bot.journal import Entry, Journal

if TYPE_CHECKING:
    from agent.memory import MemoryService
    from agent.skills.registry import SkillRegistry
    from bot.app import App
    from bot.schedules.admin import ScheduleAdmin
    from bot.schedules.store import ScheduleStore


@dataclass(frozen=True)
class Channels:
    states: Callable[[], Mapping[str, ChannelState]]
    restart: Callable[[str], Awaitable[bool]]


@dataclass(frozen=True)
class Conversations:
    store: ConversationStore
    is_running: Callable[[str], bool]
    queued: Callable[[str], int]
    stop: Callable[[str], Awaitable[bool]]
    checkpoint: Callable[[str], Awaitable[Any]]
    models: Callable[[], list[ModelConfig]]
    resolve_model: Callable[[str | None], ModelConfig]

    async def by_thread(self, thread_id: str) -> Conversation | None:
        return await self.store.by_thread(thread_id)

    async def set_model(self, key: str, name: str) -> Conversation:
        if name not in {m.name for m in self.models()}:
            raise ValueError(f"unknown model {name!r}")
        return await self.store.update(key, model=name)


@dataclass(frozen=True)
class Deliveries:
    journal: Journal

    async def recent(self, limit: int, state: str | None = None) -> list[Entry]:
        return await self.journal.recent(limit, state)

    async def counts(self) -> dict[str, int]:
        states = ("accepted", "running", "delivering", "delivered", "failed")
        return {state: await self.journal.count(state) for state in states}


@dataclass(frozen=True)
class Extensions:
    """Models (read only), skills and the MCP servers of extensions_config.json."""

    models: Callable[[], list[ModelConfig]]
    default_model: Callable[[], str]
    skills: SkillRegistry
    config_path: Path


@dataclass(frozen=True)
class Memory:
    service: MemoryService


@dataclass(frozen=True)
class Schedules:
    enabled: bool
    store: ScheduleStore
    admin: Callable[[], ScheduleAdmin]


@dataclass(frozen=True)
class ConsoleServices:
    channels: Channels
    conversations: Conversations
    deliveries: Deliveries
    extensions: Extensions
    memory: Memory
    history: MetricsHistory
    schedules: Schedules

    @classmethod
    def for_app(cls, app: App, config_path: Path) -> ConsoleServices:
        from bot.schedules.admin import ScheduleAdmin

        runner, dispatcher = app.runner, app.dispatcher
        models = lambda: list(runner.models)  # noqa: E731
        return cls(
            channels=Channels(states=lambda: {n: c.state for n, c in app.contexts.items()},
                              restart=app.restart_channel),
            conversations=Conversations(
                store=app.conversations, is_running=dispatcher.is_running,
                queued=dispatcher.queued, stop=dispatcher.stop_run,
                checkpoint=runner.checkpoint, models=models,
                resolve_model=runner.resolve_model),
            deliveries=Deliveries(app.journal),
            extensions=Extensions(models=models,
                                  default_model=lambda: runner.resolve_model(None).name,
                                  skills=app.hands.skills, config_path=config_path),
            memory=Memory(runner.memory),
            history=MetricsHistory(app.metrics),
            schedules=Schedules(enabled=app.settings.schedules.enabled,
                                store=app.schedules.store,
                                admin=lambda: ScheduleAdmin(app.schedules, set(app.channels))),
        )
