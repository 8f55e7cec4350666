"""The composition root: builds the service from Settings; starts in order, stops in reverse."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from agent.hands import Hands
from agent.runner import AgentRunner
from agent.tools import ToolProvider
from agent.tools.schedules import schedule_tools
from bot import texts
from bot.access import AccessGate
from bot.bus import MessageBus
from bot.cluster.control import ClusterRuns
from bot.cluster.scale_out import ScaleOut
from bot.command_context import CommandService
from bot.command_registry import CommandRegistry, skill_commands
from bot.commands import COMMANDS
from bot.config.apply import live_config
from bot.config.live import LiveConfig
from bot.config.schema import BusBackend, Settings
from bot.context import ServiceContext
from bot.dispatcher import Dispatcher
from bot.facade import ServiceFacade
from bot.journal import Entry, Journal
from bot.metrics import Metrics
from bot.resume import resume_entries
from bot.schedules import build_schedules
from bot.schedules.scheduler import EVENT_PREFIX as SCHEDULED_RUN
from bot.schedules.scheduler import Clock
from bot.stores import build_stores
from bot.supervisor import ChannelSupervisor
from bot.turns import TurnRunner
from bot.webhooks import DynamicRoutes
from channels import channel_class, config_model
from channels.backoff import BackoffPolicy
from channels.base import (
    BusyPolicy,
    Channel,
    ChannelConfig,
    ChannelError,
    ChatRef,
    InboundMessage,
)
from channels.pacing import Pacer

log = logging.getLogger("bot.app")

BOT_NAME = "Antler"


class HttpFront(Protocol):
    """The HTTP face (gateway/): built by the entry point's factory, started and stopped here."""

    host: str
    port: int

    @property
    def url(self) -> str: ...

    async def start(self) -> None: ...
    async def stop(self) -> None: ...


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
        ch = settings.channels
        self.stores = build_stores(settings)  # the storage backend is chosen there, only there
        self.conversations = self.stores.conversations
        self.metrics = Metrics()
        self._build_bus(settings)
        self.routes = DynamicRoutes()
        self.pacer = Pacer()
        self.gate = AccessGate({}, self.pacer, self._tell_refused)
        self.hands = Hands(settings.agent)
        self.commands = CommandRegistry(COMMANDS, skill_commands(lambda: self.hands), BOT_NAME)
        self._build_agent(settings, schedule_clock)
        self.contexts: dict[str, ServiceContext] = {}
        self.channels: dict[str, Channel] = {}
        self._channel_specs: dict[str, tuple[ChannelConfig, dict[str, Any]]] = {}
        enabled = ch.enabled()
        for name in only if only is not None else list(enabled):
            cfg = enabled.get(name) or ch.platform(name) or config_model(name)(enabled=True)
            self._add_channel(name, cfg, (channel_kwargs or {}).get(name, {}))
        connections = self.scale.connections if self.scale else None
        self.supervisor = ChannelSupervisor(
            self.channels, self.contexts, self._build_channel, backoff, connections
        )
        self._build_dispatch(settings)
        self._scheduler: asyncio.Task[None] | None = None
        self.gateway: HttpFront | None = None
        self.started_at = 0.0
        self._consumer: asyncio.Task[None] | None = None
        self.live: LiveConfig | None = None  # config.yaml watched and applied (serve)
        token = settings.gateway.auth_token
        self.admin_token = token.get_secret_value() if token else None

    def _build_bus(self, settings: Settings) -> None:
        """The bus and the journal: in process, or the Redis scale-out (bot/cluster/)."""
        ch = settings.channels
        self.scale: ScaleOut | None = None
        if settings.bus.backend is BusBackend.redis:
            self.scale = ScaleOut(self.stores.journal, settings, self._tell_busy, self.metrics)
        self.cluster = self.scale.bus if self.scale else None
        self.pacing = self.scale.pacing if self.scale else None  # budgets shared by workers
        self.run_events = self.scale.run_events if self.scale else None
        self.control: ClusterRuns | None = None
        self.journal: Journal = self.scale.journal if self.scale else self.stores.journal
        self.bus: MessageBus = (
            self.scale.bus
            if self.scale
            else MessageBus(self.journal, ch.inbound_queue_size, self._tell_busy, self.metrics)
        )
        # messages of another process that died: on Redis back into the streams, where the
        # owner of each conversation's partition takes them up
        self._orphans = self.scale.bus.republish if self.scale else self._resume
        self.stores.on_orphans = self._orphans

    def _build_agent(self, settings: Settings, schedule_clock: Clock | None) -> None:
        """The schedules and the agent runner with its tools."""
        self.schedules = build_schedules(
            self.stores.schedules,
            settings.schedules,
            publish=self.bus.publish,
            notify=self._notify,
            outcome=self.journal.entry,
            clock=schedule_clock,
        )
        tools: list[ToolProvider] = [self.hands.tools]
        if settings.schedules.enabled:
            tools.append(schedule_tools(self.schedules))
        self.runner = AgentRunner(
            models=settings.models,
            default_model=settings.default_model,
            config=settings.agent,
            data_dir=self.data_dir,
            tool_providers=tools,
            middleware_providers=[self.hands.middlewares],
            checkpoints=self.stores.checkpoints,
            memory_store=self.stores.memory,
        )
        self.runner.on_title = self._set_title

    def _build_dispatch(self, settings: Settings) -> None:
        """The turn runner, the commands' service and the dispatcher."""
        ch = settings.channels
        self.turns = TurnRunner(
            runner=self.runner,
            conversations=self.conversations,
            journal=self.journal,
            max_upload_bytes=int(ch.max_upload_mb * 1024 * 1024),
            commands=self.commands,
            metrics=self.metrics,
            thread_for=self.schedules.thread_for,
        )
        command_service = CommandService(
            conversations=self.conversations,
            agent=self.runner,
            help=self.commands,
            schedules=self.schedules if settings.schedules.enabled else None,
            status_notes=lambda: self.hands.status_notes(),
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
        self.metrics.read_gauges(lambda: self.bus.depth, lambda: self.dispatcher.waiting)
        if self.scale is not None:
            self.control = self.scale.serve(self.dispatcher, self._resume)

    def _add_channel(self, name: str, cfg: ChannelConfig, kwargs: dict[str, Any]) -> None:
        ctx = ServiceContext(
            name,
            bus=self.bus,
            routes=self.routes,
            data_dir=self.data_dir,
            bot_name=BOT_NAME,
            gate=self.gate,
            menu=self.commands.menu,
        )
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

    # ------------------------------------------------ what a live configuration change may do

    def use_agent_settings(self, new: Settings, tools_changed: bool) -> None:
        """Models, the default model and the agent's sections, from the next run on; the hands
        (tools, sandbox, skills, MCP) are rebuilt when their keys changed."""
        if tools_changed:
            old, hands = self.hands, Hands(new.agent)
            self.runner.replace_providers(
                {old.tools: hands.tools}, {old.middlewares: hands.middlewares}
            )
            self.hands = hands
        self.runner.reconfigure(
            models=new.models, default_model=new.default_model, config=new.agent
        )

    def use_upload_limit(self, max_bytes: int) -> None:
        self.turns.max_upload_bytes = max_bytes

    def use_access(self, name: str, cfg: ChannelConfig) -> None:
        self.gate.configs[name] = cfg  # the gate reads it per message

    def use_schedules(self, new: Settings) -> None:
        self.schedules.reconfigure(new.schedules)

    def has_replies(self, channel: str) -> bool:
        """A reply of `channel` is running or queued."""
        return self.dispatcher.has_work(channel + ":")

    def _busy_policy(self, name: str) -> BusyPolicy:
        return self.settings.channels.busy_policy_for(name)  # the current settings: live

    def current_admin_token(self) -> str | None:
        return self.admin_token  # changed live by bot/config/apply.py

    def _build_channel(self, name: str) -> Channel:
        cfg, kwargs = self._channel_specs[name]
        channel = channel_class(name)(cfg, self.contexts[name], **kwargs)
        if self.pacing is not None:
            self.pacing.attach(name, channel.pacer)
        return channel

    # ---------------------------------------------------------------- lifecycle

    async def start(self, *, gateway: bool = True) -> None:
        self.started_at = time.time()
        await self.stores.open()  # StorageUnavailable (a ConfigError) when it cannot be reached
        if self.cluster is not None:
            try:
                await self.cluster.open()  # RedisUnavailable (a ConfigError) likewise
            except Exception:
                await self.stores.close()
                raise
        await self.journal.prune()
        await self.runner.start()
        self._consumer = asyncio.create_task(self._consume(), name="dispatcher")
        if gateway and self.settings.gateway.enabled and self._front is not None:
            self.gateway = self._front(self)
            await self.gateway.start()
        for name in list(self.channels):
            await self.supervisor.start(name)  # a failed start keeps retrying in the background
        await self._resume_unsettled()
        if self.scale is not None:
            self.scale.start()
        if self.settings.schedules.enabled:
            self._scheduler = asyncio.create_task(self.schedules.scheduler.run(), name="schedules")
        if gateway:  # `antler serve`; `antler chat` runs on the file as it was
            self.live = live_config(self)

    async def restart_channel(self, name: str) -> bool:
        """Stop the channel and start a fresh instance; False if that start failed (it is then
        retried with backoff, like a failed start at launch)."""
        return await self.supervisor.restart(name)

    async def _resume_unsettled(self) -> None:
        """Take up messages the last process accepted but did not settle (see the journal)."""
        await self._orphans(await self.journal.unsettled())

    async def _resume(self, entries: list[Entry]) -> None:
        await resume_entries(
            entries, self.channels, self.bus.requeue, self.dispatcher.resume, self.turns.settle
        )

    async def _set_title(self, thread_id: str, title: str) -> None:
        conv = await self.conversations.by_thread(thread_id)
        if conv is not None:
            await self.conversations.update(conv.key, title=title[:60])

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
        if self._scheduler is not None:
            self._scheduler.cancel()
            await asyncio.gather(self._scheduler, return_exceptions=True)
        self.bus.close()
        await self.dispatcher.shutdown(self.settings.channels.shutdown_grace_seconds)
        if self.scale is not None:
            await self.scale.stop_listening()
        if self._consumer is not None:
            self._consumer.cancel()
            await asyncio.gather(self._consumer, return_exceptions=True)
        await self.supervisor.stop_all()  # (hands the platform connections over)
        if self.cluster is not None:  # what did not settle goes to the partitions' next owners
            await self.cluster.shutdown()
        if self.gateway is not None:
            await self.gateway.stop()
        await self.runner.stop()
        await self.stores.close()

    async def _notify(self, chat: ChatRef, text: str) -> None:
        """A notice from the scheduler (a run late or skipped) into the schedule's chat."""
        channel = self.channels.get(chat.channel)
        if channel is None:
            raise ChannelError(f"channel {chat.channel} is not running")
        await channel.send_text(chat, text)

    async def _tell_busy(self, msg: InboundMessage) -> None:
        if msg.event_id.startswith(SCHEDULED_RUN):
            return  # nobody sent it: the scheduler publishes the run again on its next tick
        await self._tell(msg, texts.BUSY, "busy")

    async def _tell_refused(self, msg: InboundMessage) -> None:
        await self._tell(msg, texts.NOT_ALLOWED, "refusal")

    async def _tell(self, msg: InboundMessage, text: str, what: str) -> None:
        channel = self.channels.get(msg.chat.channel)
        if channel is not None:
            try:
                await channel.send_text(msg.chat, text, reply_to=msg.message_id)
            except Exception as exc:
                log.warning("%s notice on %s failed: %s", what, msg.chat.channel, exc)

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
            intake_open=lambda: not self.bus.closed,
            journal=self.journal,
            queued=self.dispatcher.queued,
            stop_run=self.dispatcher.stop_run,
            run_cancels=self.control,
            run_events=self.run_events,
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
            **({"bus": self.cluster.status()} if self.cluster else {}),
        }
