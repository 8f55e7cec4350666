"""Approvals in the service: the card a paused run shows, and the press that answers it.

When a run pauses for approval (agent/middlewares/approval.py: an `ApprovalRequested` event, the
interrupt kept in the thread's checkpoint), `requested` records the request in the durable
choices store (channels/choices.py, SQLite or PostgreSQL: a press is honoured on any worker and
after a restart) and the audit; `card` renders it into the reply with the Approve / Deny buttons
(each channel's native buttons; the value `approval:<id>:<a|c|d>` comes back as a press).

`decide` answers a press: someone who may not answer gets one line and nothing changes; the
first decision is settled atomically in the store (two presses, a redelivery: one decision), a
press past the deadline counts as expired; the run is resumed only while its interrupt is still
pending in the checkpoint, so it resumes exactly once (a press after a crash mid-resume resumes
it with the decision already recorded).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from agent.approval import APPROVE, APPROVE_CONVERSATION, DECISIONS, DENY, EXPIRED
from agent.events import ApprovalRequested, Turn
from bot import texts
from bot.access.approvals import may_decide
from bot.access.audit import redact
from bot.access.people import People, Who, chat_key
from bot.access.store import AuditEntry
from bot.metrics import Metrics
from channels.base import Button, ChatRef, InboundMessage, ReplyDoc, UserRef
from channels.choices import ChoiceStore

log = logging.getLogger("bot.approvals")

PREFIX = "approval"
CODES = {"a": APPROVE, "c": APPROVE_CONVERSATION, "d": DENY, "x": EXPIRED}
API_BY = "approval_by"  # `raw` key of a decision sent by the service for an operator
EXPIRY_POLL = 30.0  # how often requests past their deadline are looked for
ID_LEN = 24


Publish = Callable[[InboundMessage], Awaitable[Any]]


class Pending(Protocol):
    async def pending_interrupts(self, thread_id: str) -> dict[str, Any]: ...


def press_of(text: str) -> tuple[str, str] | None:
    """`(id, decision)` of an approval press (`approval:<id>:<a|c|d>`); None for other text."""
    parts = text.strip().split(":")
    if len(parts) != 3 or parts[0] != PREFIX or parts[2] not in CODES:
        return None
    if not parts[1].isalnum() or len(parts[1]) > ID_LEN:
        return None
    return parts[1], CODES[parts[2]]


def short_id(interrupt_id: str) -> str:
    return "".join(c for c in interrupt_id if c.isalnum())[:ID_LEN]


def _key(short: str) -> str:
    return f"{PREFIX}:{short}"


def call_line(call: dict[str, Any]) -> str:
    """One call as the card shows it: arguments with secrets redacted and long values cut."""
    args = redact(dict(call.get("args") or {}))
    shown = ", ".join(f"{k}={_cut(v)}" for k, v in args.items())
    line = f"{call.get('name', '')}({shown})"
    skills = [str(s) for s in call.get("skills") or ()]
    return texts.approval_skill(skills, line) if skills else line


def _cut(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def card_text(doc: ReplyDoc, event: ApprovalRequested) -> str:
    """The card's text as it stays once answered (its buttons gone, the decision after it)."""
    return card(doc, event, has_buttons=True).text


def card(doc: ReplyDoc, event: ApprovalRequested, has_buttons: bool) -> ReplyDoc:
    """The reply with the approval card (its text after what the answer said so far)."""
    request = event.request
    code = f"{PREFIX}:{short_id(event.interrupt_id)}"
    approvers = texts.approvers_line(list(request.get("approvers") or []), _dm(request))
    expires = datetime.fromtimestamp(float(request.get("expires_at") or 0), UTC)
    text = texts.approval_card(
        [call_line(c) for c in request.get("calls") or []],
        str(request.get("requester_name") or request.get("requester") or ""),
        approvers,
        expires.strftime("%H:%M UTC"),
    )
    body = f"{doc.text}\n\n{text}".strip()
    asked = {str(c.get("id", "")) for c in request.get("calls") or []}
    doc = replace(doc, progress=tuple(s for s in doc.progress if s.id not in asked))
    if not has_buttons:
        return replace(doc, text=f"{body}\n{texts.approval_typed(code)}")
    buttons = [Button(label=texts.APPROVE, value=f"{code}:a")]
    if request.get("first_use"):
        buttons.append(Button(label=texts.APPROVE_CONVERSATION, value=f"{code}:c"))
    buttons.append(Button(label=texts.DENY, value=f"{code}:d"))
    return replace(doc, text=body, buttons=tuple(buttons))


def _press(
    short: str,
    code: str,
    where: dict[str, Any],
    request: dict[str, Any],
    event_id: str,
    raw: dict[str, Any],
) -> InboundMessage:
    """A press the service itself sends (an expiry, an operator's decision), from the asker
    in the request's chat."""
    asker = str(request.get("requester", "")).split(":", 1)[-1]
    return InboundMessage(
        event_id=event_id,
        chat=ChatRef(**where),
        sender=UserRef(id=asker, name=str(request.get("requester_name", ""))),
        text=f"{PREFIX}:{short}:{code}",
        is_button=True,
        received_at=time.time(),
        raw=raw,
    )


def _chat_fields(chat: ChatRef) -> dict[str, Any]:
    return {
        "channel": chat.channel,
        "chat_id": chat.chat_id,
        "chat_type": chat.chat_type,
        "workspace": chat.workspace,
        "topic_id": chat.topic_id,
    }


def _dm(request: dict[str, Any]) -> bool:
    return request.get("chat_type") == "dm"


@dataclass(frozen=True, slots=True)
class Resume:
    """A decided press: the run to resume, and the line the reply starts with."""

    thread_id: str
    turn: Turn
    said: str
    card: str = ""  # the event id of the message the card answered (its reply is the card)
    shown: str = ""  # the card's text, kept above the decision when the card is updated
    own: str = ""  # the card's own text (what its message shows when the reply was split)


class Approvals:
    def __init__(
        self,
        choices: ChoiceStore,
        people: People,
        runner: Pending,
        metrics: Metrics,
        publish: Publish | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.choices = choices
        self.people = people
        self.runner = runner
        self.metrics = metrics
        self.clock = clock
        self.publish = publish  # the bus: expiries and operators' decisions go through it

    async def requested(
        self, msg: InboundMessage, thread_id: str, event: ApprovalRequested, shown: str = ""
    ) -> None:
        """Keep the request where any worker finds it (before its card can be pressed), with
        the card's message (`msg`'s reply) and text, so a decision updates the card in place."""
        payload = {
            "event": msg.event_id,
            "shown": shown,
            "card": card_text(ReplyDoc(), event),
            "thread": thread_id,
            "interrupt": event.interrupt_id,
            "chat": chat_key(msg.chat),
            "where": _chat_fields(msg.chat),
            "request": event.request,
            "at": self.clock(),
        }
        await self.choices.put(_key(short_id(event.interrupt_id)), msg.chat.channel, payload)
        self.metrics.approvals.labels(outcome="requested").inc()
        await self._audit(event.request, "requested", str(event.request.get("requester", "")))

    async def decide(self, msg: InboundMessage, short: str, decision: str) -> Resume | str:
        """The press's outcome: the run to resume, or the one line to answer."""
        choice = await self.choices.get(_key(short))
        payload = choice.payload if choice is not None else {}
        if choice is None or payload.get("chat") != chat_key(msg.chat):
            return texts.APPROVAL_UNKNOWN
        request: dict[str, Any] = dict(payload.get("request") or {})
        due = self.clock() > float(request.get("expires_at") or 0)
        if decision == EXPIRED and not due:  # `:x` applies a deadline, never before it
            return texts.APPROVAL_UNKNOWN
        presser = await self.people.who(msg)
        api_by = str(msg.raw.get(API_BY) or "")  # set by the service only (send_decision)
        if decision != EXPIRED and not api_by and not await self._may(request, presser):
            self.metrics.approvals.labels(outcome="refused").inc()
            await self._audit(request, "refused", presser.person)
            roles = list(request.get("approvers") or [])
            return texts.approval_not_yours(texts.approvers_line(roles, _dm(request)))
        if due:
            decision = EXPIRED
        settled = await self.choices.choose(_key(short), DECISIONS.index(decision))
        if settled is None or settled.chosen is None:
            return texts.APPROVAL_UNKNOWN
        decision = DECISIONS[settled.chosen]  # the first press's, whoever pressed first
        thread, interrupt = str(payload["thread"]), str(payload["interrupt"])
        if interrupt not in await self.runner.pending_interrupts(thread):
            return texts.approval_already(decision)
        by = api_by or msg.sender.name or presser.account
        self.metrics.approvals.labels(outcome=decision).inc()
        self.metrics.approval_wait.observe(max(0.0, self.clock() - float(payload.get("at") or 0)))
        await self._audit(request, decision, api_by or presser.person)
        turn = await self._turn(msg.chat, request, interrupt, decision, by)
        said = texts.approval_decided(decision, by)
        card_event, shown = str(payload.get("event") or ""), str(payload.get("shown") or "")
        return Resume(thread, turn, said, card_event, shown, str(payload.get("card") or ""))

    async def waiting(self, limit: int = 500) -> list[dict[str, Any]]:
        """The requests no one has answered yet, oldest first (the API's list)."""
        found = []
        for choice in await self.choices.pending(f"{PREFIX}:", limit):
            request = dict(choice.payload.get("request") or {})
            found.append(
                {
                    "id": choice.key.removeprefix(f"{PREFIX}:"),
                    "channel": choice.channel,
                    "chat": choice.payload.get("chat", ""),
                    "thread_id": choice.payload.get("thread", ""),
                    "calls": [call_line(c) for c in request.get("calls") or []],
                    "requester": request.get("requester", ""),
                    "approvers": list(request.get("approvers") or []),
                    "first_use": bool(request.get("first_use")),
                    "requested_at": choice.payload.get("at"),
                    "expires_at": request.get("expires_at"),
                }
            )
        return found

    async def send_decision(self, short: str, decision: str, by: str) -> bool:
        """An operator's decision (the API, the console), sent through the bus as a press in
        the request's chat, so the run resumes there like after any press. False when the
        request is unknown or answered."""
        choice = await self.choices.get(_key(short))
        where = choice.payload.get("where") if choice is not None else None
        if choice is None or choice.chosen is not None or not where or self.publish is None:
            return False
        code = next(c for c, d in CODES.items() if d == decision)
        request = dict(choice.payload.get("request") or {})
        await self.publish(
            _press(short, code, where, request, f"approval-api:{short}:{code}", {API_BY: by})
        )
        return True

    async def decided(self, short: str, within: float = 10.0, every: float = 0.1) -> bool:
        """Whether request `short` is answered, waiting up to `within` seconds for a decision
        sent through the bus to be taken (the console draws its list after it)."""
        for _ in range(max(1, int(within / every))):
            choice = await self.choices.get(_key(short))
            if choice is None or choice.chosen is not None:
                return True
            await asyncio.sleep(every)
        return False

    async def expire_due(self) -> int:
        """Send the expiry of every request past its deadline through the bus, as a press
        (`approval:<id>:x`) from the asker in its chat: its run is resumed, denied as expired,
        in that conversation's turn. The event id is the request's, so however many workers
        look, it is answered once. Returns how many were sent."""
        sent = 0
        if self.publish is None:
            return 0
        for choice in await self.choices.pending(f"{PREFIX}:"):
            request = dict(choice.payload.get("request") or {})
            where = choice.payload.get("where")
            if self.clock() <= float(request.get("expires_at") or 0) or not where:
                continue
            short = choice.key.removeprefix(f"{PREFIX}:")
            await self.publish(_press(short, "x", where, request, f"approval-expired:{short}", {}))
            sent += 1
        return sent

    async def watch(self, every: float = EXPIRY_POLL) -> None:
        """`expire_due` every `every` seconds, until cancelled."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.expire_due()
            except Exception as exc:  # the database is away: the next round tries again
                log.warning("approval expiry check failed: %s", exc)

    async def _may(self, request: dict[str, Any], presser: Who) -> bool:
        asker = str(request.get("requester", ""))
        mine = presser.account == asker or presser.person == await self.people.person_of(asker)
        return may_decide(request, presser.role, self.people.may_approve(presser.role), mine)

    async def _turn(
        self, chat: ChatRef, request: dict[str, Any], interrupt: str, decision: str, by: str
    ) -> Turn:
        """The resuming turn runs as the asker: their grant and policy, not the approver's."""
        asker = await self.people.who_in(str(request.get("requester", "")), chat)
        return Turn(
            text="",
            user_id=asker.account,
            user_name=str(request.get("requester_name", "")),
            chat=chat.key,
            chat_type=chat.chat_type,
            grant=asker.grant,
            approvals=self.people.approvals(asker, chat),
            resume={
                "interrupt_id": interrupt,
                "interrupts": list(request.get("interrupts") or [interrupt]),
                "calls": [str(c.get("id", "")) for c in request.get("calls") or []],
                "decision": decision,
                "by": by,
            },
        )

    async def _audit(self, request: dict[str, Any], outcome: str, actor: str) -> None:
        calls = [str(c.get("name", "")) for c in request.get("calls") or []]
        await self.people.audit.record(
            AuditEntry(
                kind="approval",
                actor=actor,
                person=str(request.get("requester", "")),
                chat=str(request.get("chat", "")),
                subject=", ".join(calls),
                outcome=outcome,
                detail={"calls": [call_line(c) for c in request.get("calls") or []]},
            )
        )
