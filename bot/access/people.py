"""People and their grants: which person an account is, which role the person has, and what
that role, capped by the chat's ceiling, lets them use here (`grant_for`).

An *account* is a platform user as the memory knows it (`telegram:42`, `slack:U9`); linked
accounts (bot/access/links.py) are one *person*, whose id is the account the others were linked
to. A person's role: the one the admin API gave them, else `access.people` (the person's id or
any of its accounts), else their channel's default (`access.channels`), else
`access.default_role`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.approval import ApprovalPolicy
from agent.grant import Grant, ToolUse
from agent.memory import MemoryService
from agent.memory.store import MemoryStore
from bot import texts
from bot.access.approvals import approval_policy
from bot.access.audit import Audit
from bot.access.roles import AccessConfig, effective_grant, roles_allowing
from bot.access.store import AccessStore
from bot.logs import RedactSecrets, secrets_of
from bot.metrics import Metrics
from channels.base import ChatRef, InboundMessage
from channels.bots import platform_of

if TYPE_CHECKING:
    from bot.config.schema import Settings


def account_of(msg: InboundMessage) -> str:
    """`platform:user`: the same account whichever of the platform's bots it writes to."""
    return f"{platform_of(msg.chat.channel)}:{msg.sender.id}"


def chat_key(chat: ChatRef) -> str:
    return f"{platform_of(chat.channel)}:{chat.chat_id}"


class LinkingOff(Exception):
    """Accounts cannot be linked: the memory, which keeps the links, is off."""


@dataclass(frozen=True, slots=True)
class Who:
    """Who sent a message, as access sees it."""

    account: str
    person: str
    role: str
    grant: Grant


class People:
    def __init__(
        self,
        config: Callable[[], AccessConfig],
        store: AccessStore,
        links: Callable[[], MemoryStore | None],
        audit: Audit,
    ) -> None:
        self.config = config  # read per message: roles change live
        self.store = store
        self.links = links  # the memory store keeps the person links; None: memory is off
        self.audit = audit

    async def person_of(self, account: str) -> str:
        store = self.links()
        return await store.person(account) if store is not None else account

    async def accounts_of(self, person: str) -> list[str]:
        """Every account of `person`, itself first."""
        store = self.links()
        linked = await store.accounts(person) if store is not None else []
        return [person, *(a for a in linked if a != person)]

    async def linked(self, query: str, limit: int) -> list[tuple[str, str]]:
        store = self.links()
        return await store.linked(query, limit) if store is not None else []

    def link_store(self) -> MemoryStore:
        """Where links are written; LinkingOff when memory (which keeps them) is off."""
        store = self.links()
        if store is None:
            raise LinkingOff("linking accounts needs agent.memory.enabled")
        return store

    async def role_of(self, person: str, channel: str | None = None) -> str:
        given = await self.store.role(person)
        cfg = self.config()
        if given is not None and given in cfg.roles:
            return given
        for account in await self.accounts_of(person):
            if account in cfg.people:
                return cfg.people[account]
        channel = channel or person.split(":", 1)[0]  # a bot's own default, else its platform's
        return cfg.channels.get(channel) or cfg.channels.get(platform_of(channel), cfg.default_role)

    def ceiling(self, chat: ChatRef) -> str | None:
        return self.config().chats.get(chat_key(chat))

    async def who(self, msg: InboundMessage) -> Who:
        account = account_of(msg)
        person = await self.person_of(account)
        role = await self.role_of(person, msg.chat.channel)
        grant = effective_grant(self.config().roles, role, self.ceiling(msg.chat))
        return Who(account, person, role, grant)

    async def who_in(self, account: str, chat: ChatRef) -> Who:
        """`who` for an account that is not the message's sender (the asker of an approval)."""
        person = await self.person_of(account)
        role = await self.role_of(person, chat.channel)
        grant = effective_grant(self.config().roles, role, self.ceiling(chat))
        return Who(account, person, role, grant)

    def approvals(self, who: Who, chat: ChatRef) -> ApprovalPolicy | None:
        """The approval policy of `who`'s turns in `chat` (bot/access/approvals.py)."""
        cfg = self.config()
        role = cfg.roles.get(who.role)
        settings = role.approvals if role is not None else {}
        return approval_policy(cfg.approvals, settings, chat_key(chat), chat.chat_type != "dm")

    def api_approvals(self) -> ApprovalPolicy | None:
        """The approval policy of Gateway API runs (their principal is an admin)."""
        cfg = self.config()
        role = cfg.roles.get("admin")
        settings = role.approvals if role is not None else {}
        return approval_policy(cfg.approvals, settings, "api", False)

    def may_approve(self, role: str) -> bool:
        found = self.config().roles.get(role)
        return found is not None and found.may_approve

    async def grant_for(self, msg: InboundMessage) -> Grant:
        return (await self.who(msg)).grant

    # denials: one line for the user, one entry in the audit ----------------------------------

    def command_denial(self, msg: InboundMessage, who: Who, key: str) -> str | None:
        """None when the grant allows the command `key`; else the line to answer."""
        if who.grant.allows_command(key):
            return None
        self.audit.denied("command", who.person, msg.chat.key, key, who.grant.role)
        allowed = roles_allowing(self.config().roles, key)
        return texts.command_denied(key, who.grant.role, allowed)

    def skill_denial(self, msg: InboundMessage, who: Who, skill: str) -> str | None:
        if who.grant.allows_skill(skill):
            return None
        self.audit.denied("skill", who.person, msg.chat.key, f"/{skill}", who.grant.role)
        return texts.skill_denied(skill, who.grant.role)

    def tool_used(self, use: ToolUse) -> None:
        """The agent's observer: every tool call, run or refused, into the audit."""
        self.audit.tool_used(use, self.person_of)


def build_people(
    settings: Callable[[], Settings],
    store: AccessStore,
    memory: Callable[[], MemoryService],
    metrics: Metrics,
) -> People:
    """People with their audit trail, reading the current settings each time (live). The
    links are the memory's; with memory off every account is its own person."""

    def links() -> MemoryStore | None:
        service = memory()
        return service.store if service.enabled else None

    def redact(text: str) -> str:  # every configured secret masked in argument digests
        return RedactSecrets(secrets_of(settings())).redact(text)

    retention = lambda: settings().access.audit.retention_days  # noqa: E731
    audit = Audit(store, metrics, retention, known_secrets=redact)
    return People(lambda: settings().access, store, links, audit)
