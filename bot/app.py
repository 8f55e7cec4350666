"""The composition root: builds the service from Settings; starts in order, stops in reverse."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from agent.hands import Hands
from agent.runner import AgentRunner
from agent.tools import ToolProvider
from agent.tools.agent_setup import agent_setup_middlewares, agent_setup_tools
from agent.tools.schedules import schedule_tools
from bot.access import AccessGate
from bot.access.links import build_access
from bot.agent_editor import AgentEditor
from bot.approvals import Approvals
from bot.bus import MessageBus
from bot.channel_restarts import ChannelRestarts
from bot.command_context import CommandService
from bot.command_registry import CommandRegistry, skill_commands
from bot.commands import COMMANDS
from bot.config.apply import live_config
from bot.config.live import LiveConfig
from bot.config.schema import Settings
from bot.context import ServiceContext
from bot.dispatcher import Dispatcher
from bot.facade import HttpFront, ServiceFacade
from bot.language import Languages
from bot.metrics import Metrics
from bot.resume import resume_entries
from bot.schedules import build_schedules
from bot.schedules.scheduler import Clock
from bot.signs import Signs
from bot.stores.build import build_stores
from bot.stores.journal import Entry, Journal
from bot.supervisor import ChannelSupervisor
from bot.told import Told
from bot.topology import build_topology
from bot.turns import Governed, TurnRunner
from bot.usage.gate import build_usage
from bot.webhooks import DynamicRoutes
from channels import channel_class, config_model
from channels.backoff import BackoffPolicy
from channels.base import BusyPolicy, Channel, ChannelConfig
from channels.bots import platform_of
from channels.pacing import Pacer

log = logging.getLogger("bot.app")

BOT_NAME = "Antler"


FrontFactory = Callable[["App"], HttpFront]


class App:
    def __init__(
        self,
        settings: Settings,
        *,
        only: list[str] | None = None,
        channel_kwargs: dict[str, dict[str, Any]] | None = None,
        backoff: BackoffPolicy | None = None,
        schedule_clock: Clock | None = None,
        front: FrontFactory | None = None,
    ) -> None:
        self.settings = settings
        self._front = front  # None: no HTTP server (`antler chat`, tests of the core)
        self.data_dir = settings.storage.data_dir
        self.stores = build_stores(settings)  # the storage backend is chosen there, only there
        self.conversations = self.stores.conversations
        self.metrics = Metrics()
        # one process, or several workers on Redis: chosen there, only there
        self.channels: dict[str, Channel] = {}
        self.told = Told(self.channels)  # one-line notices: busy, refused, the scheduler's
        self.topology = build_topology(settings, self.stores.journal, self.told.busy, self.metrics)
        self.bus: MessageBus = self.topology.bus
        self.signs = Signs(self.channels, self.metrics)  # the first sign, beside the queue
        self.bus.on_accepted = self.signs.send
        self.journal: Journal = self.topology.journal
        self.stores.on_orphans = self.topology.orphans  # messages of a process that died
        if self.topology.connections is not None:  # and those a cut-off holder handed over
            self.topology.connections.take_up = self.stores.take_over
        self.routes = DynamicRoutes()
        self.pacer = Pacer()
        self.gate = AccessGate({}, self.pacer, self.told.refused)
        self._bound_agent = lambda name: self.settings.channels.agent_of(name)  # read live
        self._build_agent(settings, schedule_clock)
        self._build_channels(only, channel_kwargs or {}, backoff)
        self._build_dispatch(settings)
        self.runner.on_title = self._set_title
        self.metrics.read_gauges(lambda: self.bus.depth, lambda: self.dispatcher.waiting)
        self.topology.wire(self.dispatcher, self._resume)
        self._scheduler: asyncio.Task[None] | None = None
        self._expiry: asyncio.Task[None] | None = None  # approvals past their deadline
        self.gateway: HttpFront | None = None
        self.started_at = 0.0
        self._consumer: asyncio.Task[None] | None = None
        self.live: LiveConfig | None = None  # config.yaml watched and applied (serve)
        token = settings.gateway.auth_token
        self.admin_token = token.get_secret_value() if token else None

    def _build_agent(self, settings: Settings, schedule_clock: Clock | None) -> None:
        """The hands (tools, sandbox, skills, MCP), commands, schedules, the agent and access."""
        self.hands = Hands(settings.agent)
        self.commands = CommandRegistry(COMMANDS, skill_commands(lambda: self.hands), BOT_NAME)
        self.schedules = build_schedules(
            self.stores.schedules,
            settings.schedules,
            publish=self.bus.publish,
            notify=self.told.notify,
            outcome=self.journal.entry,
            clock=schedule_clock,
        )
        editor = AgentEditor(lambda: self.live, lambda: self.audit)  # setup_agent, update_agent
        tools: list[ToolProvider] = [self.hands.tools, agent_setup_tools(editor)]
        if settings.schedules.enabled:
            tools.append(schedule_tools(self.schedules))
        self.runner = AgentRunner(
            models=settings.models,
            default_model=settings.default_model,
            config=settings.agent,
            data_dir=self.data_dir,
            tool_providers=tools,
            middleware_providers=[self.hands.middlewares, agent_setup_middlewares],
            checkpoints=self.stores.checkpoints,
            memory_store=self.stores.memory,
        )
        self.runner.use_profiles(settings.agents)
        now = lambda: self.settings  # noqa: E731 (replaced when config.yaml changes)
        access = build_access(now, self.stores.access, self.runner, self.metrics)
        self.people, self.links = access  # roles, /link, the audit (tool calls go into it)
        self.languages = Languages(self.people, lambda: self.settings.channels)
        self.told.languages = self.languages
        self.audit = self.people.audit
        self.usage = build_usage(now, self.stores.usage, self.runner, self.people, self.metrics)
        self.usage.pool(self.topology.spend_holds)  # calls in flight, held across workers

    def _build_channels(
        self,
        only: list[str] | None,
        channel_kwargs: dict[str, dict[str, Any]],
        backoff: BackoffPolicy | None,
    ) -> None:
        ch = self.settings.channels
        self.contexts: dict[str, ServiceContext] = {}
        self._channel_specs: dict[str, tuple[ChannelConfig, dict[str, Any]]] = {}
        enabled = ch.enabled()
        for name in only if only is not None else list(enabled):
            found = enabled.get(name) or ch.platform(name)
            cfg = found or config_model(platform_of(name))(enabled=True)
            self._add_channel(name, cfg, channel_kwargs.get(name, {}))
        self.supervisor = ChannelSupervisor(
            self.channels, self.contexts, self._build_channel, backoff, self.topology.connections
        )
        self.approvals = Approvals(
            self.stores.choices, self.people, self.runner, self.metrics, self.bus.publish
        )

    def _build_dispatch(self, settings: Settings) -> None:
        """The turn runner, the commands' service, the dispatcher and channel restarts."""
        ch = settings.channels
        self.turns = TurnRunner(
            runner=self.runner,
            conversations=self.conversations,
            journal=self.journal,
            max_upload_bytes=int(ch.max_upload_mb * 1024 * 1024),
            commands=self.commands,
            metrics=self.metrics,
            thread_for=self.schedules.thread_for,
            governed=Governed(self.people, self.usage, self.approvals),
        )
        self.turns.hear_with(settings.speech)  # voice notes transcribed (bot/speech.py)
        self.turns.settle.on_settled.append(self.schedules.scheduler.settled)
        self.turns.bound_agent = self._bound_agent
        command_service = CommandService(
            conversations=self.conversations,
            agent=self.runner,
            help=self.commands,
            schedules=self.schedules if settings.schedules.enabled else None,
            status_notes=lambda: self.hands.status_notes(),
            access=self.people,
            links=self.links,
            usage=self.usage,
            bound_agent=self._bound_agent,
            languages=self.languages,
        )
        self.dispatcher = Dispatcher(
            channels=self.channels,
            turns=self.turns,
            conversations=self.conversations,
            max_concurrent_runs=ch.max_concurrent_runs,
            busy_policy=self._busy_policy,
            commands=self.commands,
            command_service=command_service,
        )
        self.restarts = ChannelRestarts(
            self.supervisor, self.dispatcher, lambda: self.settings.channels.shutdown_grace_seconds
        )

    def _add_channel(self, name: str, cfg: ChannelConfig, kwargs: dict[str, Any]) -> None:
        ctx = ServiceContext(
            name,
            bus=self.bus,
            routes=self.routes,
            data_dir=self.data_dir,
            bot_name=BOT_NAME,
            gate=self.gate,
            menu=self.commands.menu,
            choices=self.stores.choices,
        )
        ctx.language = self.languages.of_channel
        self.contexts[name] = ctx
        self.gate.configs[name] = cfg
        self._channel_specs[name] = (cfg, kwargs)
        self.channels[name] = self._build_channel(name)

    def configure_channel(self, name: str, cfg: ChannelConfig) -> None:
        """Use `cfg` for `name` from its next (re)start; a new channel gets its context."""
        if name not in self.contexts:
            self._add_channel(name, cfg, {})
            return
        self._channel_specs[name] = (cfg, self._channel_specs[name][1])
        self.gate.configs[name] = cfg

    def use_agent_settings(self, new: Settings, tools_changed: bool) -> None:
        """A live configuration change (bot/config/apply.py): models and the agent's sections
        from the next run on; the hands (tools, sandbox, skills, MCP) rebuilt when changed."""
        if tools_changed:
            old, hands = self.hands, Hands(new.agent)
            self.runner.replace_providers(
                {old.tools: hands.tools}, {old.middlewares: hands.middlewares}
            )
            self.hands = hands
        self.runner.reconfigure(
            models=new.models, default_model=new.default_model, config=new.agent
        )
        self.runner.use_profiles(new.agents)

    def use_upload_limit(self, max_bytes: int) -> None:
        self.turns.max_upload_bytes = max_bytes

    def use_access(self, name: str, cfg: ChannelConfig) -> None:
        self.gate.configs[name] = cfg  # the gate reads it per message

    def use_schedules(self, new: Settings) -> None:
        self.schedules.reconfigure(new.schedules)

    def _busy_policy(self, name: str) -> BusyPolicy:
        return self.settings.channels.busy_policy_for(name)  # the current settings: live

    def current_admin_token(self) -> str | None:
        return self.admin_token  # changed live by bot/config/apply.py

    def _build_channel(self, name: str) -> Channel:
        cfg, kwargs = self._channel_specs[name]
        channel = channel_class(platform_of(name))(cfg, self.contexts[name], **kwargs)
        self.topology.attach_pacer(name, channel.pacer)
        return channel

    # ---------------------------------------------------------------- lifecycle

    async def start(self, *, gateway: bool = True) -> None:
        self.started_at = time.time()
        await self.stores.open()  # StorageUnavailable (a ConfigError) when it cannot be reached
        try:
            await self.topology.open()  # RedisUnavailable (a ConfigError) likewise
        except Exception:
            await self.stores.close()
            raise
        await self.journal.prune()
        await self.runner.start()
        self._consumer = asyncio.create_task(self._consume(), name="dispatcher")
        if gateway and self.settings.gateway.enabled and self._front is not None:
            self.gateway = self._front(self)
            await self.gateway.start()
        # the last process's unsettled messages, read before any channel receives: a message
        # accepted while the channels start is this process's own, on its way already
        orphans = await self.journal.unsettled()
        for name in list(self.channels):
            await self.supervisor.start(name)  # a failed start keeps retrying in the background
        await self.topology.orphans(orphans)
        self.topology.listen()
        if self.settings.schedules.enabled:
            self._scheduler = asyncio.create_task(self.schedules.scheduler.run(), name="schedules")
        self._expiry = asyncio.create_task(self.approvals.watch(), name="expiry")
        if gateway:  # `antler serve`; `antler chat` runs on the file as it was
            self.live = live_config(self)

    async def restart_channel(self, name: str) -> bool:
        """Start a fresh instance of the channel; its replies finish on the old one (see
        bot/channel_restarts.py). False if that start failed (it is then retried with
        backoff, like a failed start at launch)."""
        return await self.restarts.restart(name)

    async def _resume(self, entries: list[Entry]) -> None:
        await resume_entries(
            entries, self.channels, self.bus.requeue, self.dispatcher.resume, self.turns.settle
        )

    async def _set_title(self, thread_id: str, title: str) -> None:
        """A chat's conversation takes the title; a Gateway thread keeps it unless renamed."""
        conv = await self.conversations.by_thread(thread_id)
        if conv is not None:
            await self.conversations.update(conv.key, title=title[:60])
            return
        row = await self.stores.gateway.thread(thread_id)
        if row is not None and not row.metadata.get("title"):
            metadata = {**row.metadata, "title": title[:60]}
            await self.stores.gateway.put_thread(thread_id, metadata, row.created_at)

    async def _consume(self) -> None:
        while True:
            msg = await self.bus.get()
            try:
                await self.dispatcher.dispatch(msg)
            except Exception:
                log.exception("dispatch of %s failed", msg.event_id)

    async def stop(self) -> None:
        """Stop intake, let running replies finish within the grace period, then shut down."""
        if self.live is not None:
            await self.live.stop()
        for loop in (self._scheduler, self._expiry):
            if loop is not None:
                loop.cancel()
                await asyncio.gather(loop, return_exceptions=True)
        self.bus.close()
        await self.dispatcher.shutdown(self.settings.channels.shutdown_grace_seconds)
        await self.restarts.close()  # instances replaced at run time and still draining
        await self.topology.close()
        if self._consumer is not None:
            self._consumer.cancel()
            await asyncio.gather(self._consumer, return_exceptions=True)
        await self.signs.close()
        await self.supervisor.stop_all()  # (hands the platform connections over)
        await self.topology.shutdown()  # with workers: unsettled messages to the next owners
        if self.gateway is not None:
            await self.gateway.stop()
        await self.runner.stop()
        await self.usage.meter.close()  # the last calls' rows
        await self.hands.sandbox.close()  # the docker provider removes its containers
        await self.stores.close()

    # ---------------------------------------------------------------- state

    def facade(self) -> ServiceFacade:
        """What the admin API and the console may read and ask of the service."""
        return ServiceFacade(
            runner=self.runner,
            conversations=self.conversations,
            schedules=self.schedules,
            skills=lambda: self.hands.skills,
            agent_config=lambda: self.settings.agent,
            data_dir=self.data_dir,
            records=self.stores.gateway,
            metrics=self.metrics,
            channel_states=lambda: {name: ctx.state for name, ctx in self.contexts.items()},
            restart_channel=self.restart_channel,
            health=self.health,
            channel_enabled=lambda name: name in self.channels,
            live_config=lambda: self.live,
            has_admin_token=lambda: bool(self.current_admin_token()),
            is_replying=self.dispatcher.is_running,
            live_reply=self.dispatcher.live_reply,
            intake_open=lambda: not self.bus.closed,
            journal=self.journal,
            queued=self.dispatcher.queued,
            stop_run=self.dispatcher.stop_run,
            run_cancels=self.topology.run_cancels,
            run_events=self.topology.run_events,
            people=self.people,
            links=self.links,
            usage=self.usage,
            approvals=self.approvals,
            bound_agent=self._bound_agent,
        )

    def health(self) -> dict[str, Any]:
        database = self.stores.status()
        return {
            "status": "ok" if database.get("reachable") else "degraded",
            "database": database,
            "uptime_seconds": round(time.time() - self.started_at, 1),
            "channels": {name: ctx.state.as_dict() for name, ctx in self.contexts.items()},
            "queue_depth": self.bus.depth,
            "active_runs": self.dispatcher.active_runs,
            **self.topology.status(),
        }
