"""`/link` and `/unlink`: one person across platforms.

`/link` in a DM answers a one-time code (10 minutes, one use, only its hash is stored; it never
reaches a log); `/link CODE` sent from another account links that account to the person who
asked for the code: from then on both share memory and role. Five wrong codes lock `/link` for
the account for 15 minutes. `/unlink` makes an account its own person again (its own earlier
memory and role come back). Admins link and unlink through the API (gateway/api/people.py)
with the same `Links`.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot import texts
from bot.access.people import People, account_of, build_people
from bot.access.store import AccessStore, AuditEntry
from bot.metrics import Metrics
from channels.base import InboundMessage

if TYPE_CHECKING:
    from agent.runner import AgentRunner
    from bot.config.schema import Settings

CODE_SECONDS = 600
MAX_TRIES = 5
LOCK_SECONDS = 900
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 8


def code_hash(code: str) -> str:
    return hashlib.sha256(normal_code(code).encode()).hexdigest()


def normal_code(code: str) -> str:
    return "".join(c for c in code.upper() if c.isalnum())


class Links:
    def __init__(
        self, people: People, metrics: Metrics, clock: Callable[[], float] = time.time
    ) -> None:
        self.people = people
        self.store = people.store
        self.metrics = metrics
        self.clock = clock

    async def command(self, msg: InboundMessage, args: str) -> str:
        """The answer to `/link` or `/link CODE`."""
        words = args.split()
        if len(words) > 1:
            return texts.LINK_USAGE
        if self.people.links() is None:
            return texts.LINK_DISABLED
        account = account_of(msg)
        locked = await self._locked(account)
        if locked:
            return locked
        if not words:
            return await self._issue(msg, account)
        return await self._redeem(msg, account, words[0])

    async def _issue(self, msg: InboundMessage, account: str) -> str:
        if msg.chat.chat_type != "dm":
            return texts.LINK_ONLY_IN_DM
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        await self.store.put_code(code_hash(code), account, self.clock() + CODE_SECONDS)
        self.metrics.link_events.labels(outcome="code").inc()
        return texts.link_code(code, CODE_SECONDS // 60)

    async def _redeem(self, msg: InboundMessage, account: str, code: str) -> str:
        issuer = await self.store.take_code(code_hash(code), self.clock())
        if issuer is None or issuer == account:
            return await self._wrong(msg, account)
        await self.store.set_tries(account, 0, 0.0)
        person = await self.link(account, await self.people.person_of(issuer), actor=account)
        return texts.linked(person)

    async def _wrong(self, msg: InboundMessage, account: str) -> str:
        failures, _ = await self.store.tries(account)
        failures += 1
        self.metrics.link_events.labels(outcome="wrong_code").inc()
        await self._audit("link", account, account, msg.chat.key, "wrong_code")
        if failures >= MAX_TRIES:
            await self.store.set_tries(account, 0, self.clock() + LOCK_SECONDS)
            self.metrics.link_events.labels(outcome="locked").inc()
            return texts.link_locked(LOCK_SECONDS // 60)
        await self.store.set_tries(account, failures, 0.0)
        return texts.LINK_WRONG_CODE

    async def _locked(self, account: str) -> str | None:
        _, until = await self.store.tries(account)
        if until > self.clock():
            return texts.link_locked(max(1, round((until - self.clock()) / 60)))
        return None

    async def link(self, account: str, person: str, *, actor: str) -> str:
        """`account` (and any accounts linked to it) becomes `person`; returns the person."""
        memory = self.people.link_store()
        old = await self.people.person_of(account)
        if old != person:
            for other in await memory.accounts(old):  # a person joining another: all of it
                await memory.link(other, person)
            if account != person:
                await memory.link(account, person)
        self.metrics.link_events.labels(outcome="linked").inc()
        await self._audit("link", actor, person, "", "ok", account)
        return person

    async def unlink_command(self, msg: InboundMessage) -> str:
        if self.people.links() is None:
            return texts.LINK_DISABLED
        account = account_of(msg)
        result = await self.unlink(account, actor=account)
        return {
            "unlinked": texts.UNLINKED,
            "anchor": texts.UNLINK_IS_ANCHOR,
            "not_linked": texts.UNLINK_NOT_LINKED,
        }[result]

    async def unlink(self, account: str, *, actor: str) -> str:
        """`unlinked`, `anchor` (others are linked to it: unlink them instead) or `not_linked`."""
        memory = self.people.link_store()
        person = await self.people.person_of(account)
        if await memory.unlink(account):
            self.metrics.link_events.labels(outcome="unlinked").inc()
            await self._audit("unlink", actor, person, "", "ok", account)
            return "unlinked"
        return "anchor" if await memory.accounts(account) else "not_linked"

    async def _audit(
        self, kind: str, actor: str, person: str, chat: str, outcome: str, subject: str = ""
    ) -> None:
        entry = AuditEntry(
            kind=kind, actor=actor, person=person, chat=chat, subject=subject, outcome=outcome
        )
        await self.people.audit.record(entry)


def build_access(
    settings: Callable[[], Settings], store: AccessStore, runner: AgentRunner, metrics: Metrics
) -> tuple[People, Links]:
    """People (with the audit trail) and linking, wired to the agent: `runner.on_tool` reports
    every tool call into the audit; the agent's memory keeps the links."""
    people = build_people(settings, store, lambda: runner.memory, metrics)
    runner.on_tool = people.tool_used
    return people, Links(people, metrics)
