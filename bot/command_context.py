"""What a command handler gets: the message, its conversation, and the few service parts it uses.

Commands never see the Dispatcher or the App: `Lanes` names the dispatcher operations they use,
`AgentFacade` the runner's, and `CommandService` the rest (built once by the composition root).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agent.grant import EVERYTHING, Grant
from channels.base import Button, ChatRef, InboundMessage

if TYPE_CHECKING:
    from agent.config import ModelConfig
    from agent.memory import MemoryService
    from agent.profiles import AgentProfile
    from bot.access.links import Links
    from bot.access.people import People
    from bot.language import Languages
    from bot.schedules.service import Schedules
    from bot.stores.conversations import Conversation, ConversationStore
    from bot.usage.gate import UsageGate


class Lanes(Protocol):
    """The dispatcher's conversation lanes, as /stop and /status see them."""

    async def stop_anywhere(self, chat: ChatRef) -> bool:
        """Stop the reply of conversation `chat`, on whichever worker writes it."""

    async def runs_in_chat_anywhere(self, chat: ChatRef, sender_id: str) -> list[InboundMessage]:
        """The sender's running replies anywhere in `chat` (its threads), on every worker."""

    def is_running(self, key: str) -> bool: ...

    def queued(self, key: str) -> int: ...


class AgentFacade(Protocol):
    """The agent runner's models, agent profiles and memory (agent.runner.AgentRunner is one)."""

    memory: MemoryService

    def model_names(self) -> list[str]: ...

    def resolve_model(self, name: str | None) -> ModelConfig: ...

    def agent_names(self) -> list[str]: ...

    def profile(self, name: str | None) -> AgentProfile: ...


class HelpText(Protocol):
    """The command registry's texts (bot/command_registry.py)."""

    def help_text(self) -> str: ...

    def greeting(self) -> str: ...


@dataclass(frozen=True, slots=True)
class CommandService:
    """The service parts every command may use, built once by the composition root."""

    conversations: ConversationStore
    agent: AgentFacade
    help: HelpText
    schedules: Schedules | None = None  # None when schedules are disabled
    status_notes: Callable[[], list[str]] = list  # extra lines for /status (skills, MCP)
    access: People | None = None  # people, roles and grants (None: everyone may do anything)
    links: Links | None = None  # /link and /unlink
    usage: UsageGate | None = None  # /usage (None: not counted)
    bound_agent: Callable[[str], str | None] = lambda channel: None  # a bot's agent, by channel
    languages: Languages | None = None  # /lang (None: the service default only)


@dataclass(frozen=True, slots=True)
class CommandContext:
    msg: InboundMessage
    conversation: Conversation
    lanes: Lanes
    service: CommandService
    grant: Grant = EVERYTHING  # what the sender may use in this chat
    person: str = ""  # the sender's person (linked accounts are one), "" without access


@dataclass(frozen=True, slots=True)
class CommandReply:
    text: str
    buttons: tuple[Button, ...] = ()
