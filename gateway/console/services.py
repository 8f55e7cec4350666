"""The narrow service objects the console's pages use, built once from the admin API's typed
facade (bot/facade.py, made by the composition root).

Each page gets only what it reads and changes: no page holds the App or the Dispatcher. What
changes at run time (skills, agent settings, the extensions file's path, the channels) is asked
on every request. The writes go through the same functions the admin API uses (restart, skills,
MCP file, memory store, schedule admin), so a change made here is the change the API would make.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.config import ModelConfig
from agent.profiles import AgentProfile
from bot.context import ChannelState
from bot.stores.conversations import Conversation, ConversationStore
from bot.stores.journal import Entry, Journal
from channels.base import ReplyDoc
from gateway.console.metrics_history import MetricsHistory

if TYPE_CHECKING:
    from agent.memory import MemoryService
    from agent.skills.registry import SkillRegistry
    from bot.access.links import Links
    from bot.access.people import People
    from bot.approvals import Approvals
    from bot.facade import ServiceFacade
    from bot.schedules.admin import ScheduleAdmin
    from bot.schedules.service import Schedules as ScheduleService
    from bot.stores.schedules import ScheduleStore
    from bot.usage.gate import UsageGate


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
    agent_of: Callable[[Conversation], AgentProfile]  # the profile its next run uses
    agents: Callable[[], list[AgentProfile]] = lambda: []  # every profile, lead_agent first
    live: Callable[[str], ReplyDoc | None] = lambda key: None  # the reply being written

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
    skills: Callable[[], SkillRegistry]  # the current registry (rebuilt when settings change)
    config_path: Callable[[], Path]  # the current extensions_config.json


@dataclass(frozen=True)
class Memory:
    service: MemoryService


@dataclass(frozen=True)
class Schedules:
    service: ScheduleService
    channel_names: Callable[[], set[str]]

    @property
    def enabled(self) -> bool:
        return self.service.config.enabled

    @property
    def store(self) -> ScheduleStore:
        return self.service.store

    def admin(self) -> ScheduleAdmin:
        from bot.schedules.admin import ScheduleAdmin

        return ScheduleAdmin(self.service, self.channel_names())


@dataclass(frozen=True)
class ConsoleServices:
    channels: Channels
    conversations: Conversations
    deliveries: Deliveries
    extensions: Extensions
    memory: Memory
    history: MetricsHistory
    schedules: Schedules
    people: People | None = None  # roles, linked accounts, the audit trail
    links: Links | None = None  # linking and unlinking accounts
    usage: UsageGate | None = None  # tokens and cost of every model call (bot/usage/)
    approvals: Approvals | None = None  # tool calls waiting for a person's yes

    @classmethod
    def for_service(cls, service: ServiceFacade) -> ConsoleServices:
        from gateway.api.mcp import extensions_file

        runner = service.runner
        models = lambda: list(runner.models)  # noqa: E731
        return cls(
            channels=Channels(states=service.channel_states, restart=service.restart_channel),
            conversations=Conversations(
                store=service.conversations,
                is_running=service.is_replying,
                queued=service.queued,
                stop=service.stop_run,
                checkpoint=runner.checkpoint,
                models=models,
                resolve_model=runner.resolve_model,
                agent_of=lambda c: runner.profile(c.agent or service.bound_agent(c.channel)),
                agents=lambda: list(runner.profiles.values()),
                live=service.live_reply,
            ),
            deliveries=Deliveries(service.journal),
            extensions=Extensions(
                models=models,
                default_model=lambda: runner.resolve_model(None).name,
                skills=service.skills,
                config_path=lambda: extensions_file(service),
            ),
            memory=Memory(runner.memory),
            history=MetricsHistory(service.metrics),
            schedules=Schedules(
                service=service.schedules, channel_names=lambda: set(service.channel_states())
            ),
            people=service.people,
            links=service.links,
            usage=service.usage,
            approvals=service.approvals,
        )
