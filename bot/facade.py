"""What the admin API and the web console read and ask of the running service: one typed
facade, built by the composition root (bot/app.py), so no route or page reaches into the App."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agent.config import AgentConfig
    from agent.runner import AgentRunner
    from agent.skills.registry import SkillRegistry
    from bot.access.links import Links
    from bot.access.people import People
    from bot.approvals import Approvals
    from bot.cluster.run_events import RunEvents
    from bot.config.live import LiveConfig
    from bot.context import ChannelState
    from bot.metrics import Metrics
    from bot.schedules.service import Schedules
    from bot.stores.conversations import ConversationStore
    from bot.stores.gateway import GatewayRecords
    from bot.stores.journal import Journal
    from bot.usage.gate import UsageGate
    from channels.base import ReplyDoc


class RunCancels(Protocol):
    """API runs cancelled across workers (bot/cluster/control.py's `ClusterRuns`)."""

    async def cancel_elsewhere(self, run_id: str) -> bool:
        """Ask the worker running `run_id` to cancel it; False when no live worker runs it."""
        ...

    def answer_with(self, cancel_local: Callable[[str], bool]) -> None:
        """Other workers' cancel requests are answered by `cancel_local(run_id)`."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceFacade:
    runner: AgentRunner
    conversations: ConversationStore
    schedules: Schedules
    skills: Callable[[], SkillRegistry]  # the current registry (rebuilt when settings change)
    agent_config: Callable[[], AgentConfig]
    """The agent's current settings (they change at run time)."""
    data_dir: Path
    records: GatewayRecords  # the API's thread and run records, on the configured backend
    metrics: Metrics
    channel_states: Callable[[], Mapping[str, ChannelState]]
    restart_channel: Callable[[str], Awaitable[bool]]
    channel_enabled: Callable[[str], bool]
    live_config: Callable[[], LiveConfig | None]
    """The watched config file and its editor (None when not started from a file)."""
    has_admin_token: Callable[[], bool]
    health: Callable[[], dict[str, Any]]
    is_replying: Callable[[str], bool]
    """True while a chat reply runs in the conversation `key` (the dispatcher's lanes)."""
    intake_open: Callable[[], bool]
    journal: Journal  # the delivery journal (the console's Deliveries page reads it)
    queued: Callable[[str], int]
    """How many messages wait behind the reply in the conversation `key` (this worker)."""
    stop_run: Callable[[str], Awaitable[bool]]
    """Stop the reply running in the conversation `key` on this worker (False: none ran)."""
    live_reply: Callable[[str], ReplyDoc | None] = lambda key: None
    """The document of the reply being written in the conversation `key` on this worker."""
    reload_mcp: Callable[[], Awaitable[None]] | None = None
    run_cancels: RunCancels | None = None
    """Cancel API runs executing on other workers (None: one process, no Redis bus)."""
    run_events: RunEvents | None = None
    """API runs' live events shared with other workers (None: one process, no Redis bus)."""
    people: People | None = None  # people, roles, the audit trail (bot/access/)
    links: Links | None = None  # linking accounts to people
    approvals: Approvals | None = None  # tool calls waiting for a person's yes
    usage: UsageGate | None = None  # tokens and cost of every model call (bot/usage/)
    bound_agent: Callable[[str], str | None] = lambda channel: None
    """The agent profile a channel's bot is bound to (`channels.<platform>.bots[].agent`)."""


class HttpFront(Protocol):
    """The HTTP face (gateway/): built by the entry point's factory, started and stopped here."""

    host: str
    port: int

    @property
    def url(self) -> str: ...

    async def start(self) -> None: ...
    async def stop(self) -> None: ...
