"""The approval policy, enforced: before a tool call the policy names runs, the run pauses with
a LangGraph interrupt (kept in the checkpoint) carrying an approval request; it is resumed with
a decision (agent/approval.py). Approved calls run; denied or expired ones get a tool error the
model answers from, and never run. `first_use` asks once per conversation: a call approved "for
this conversation" is remembered in the thread (the AI message's metadata) and not asked again.

A skill is used by a call that names a path in its folder (`skills_of`, the skill registry's
`used_in`): such a call waits as the skill's rule (`skill:<name>`) says, the request naming the
skill. One interrupt covers every call of one model answer that needs approval (one card, one
decision). It sits in `after_model`, before the tools node, like LangChain's human-in-the-loop
middleware; calls the grant refuses are left to the GrantGuard (they never ask).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, ToolMessage

from agent.approval import (
    APPROVE,
    APPROVE_CONVERSATION,
    EXPIRED,
    KIND,
    SKILL,
    ApprovalPolicy,
    ApprovalRule,
    skill_key,
    tool_key,
)
from agent.context import RunContext

SUBAGENT = "subagent"
APPROVED = "antler_approved"  # AI message metadata: keys approved for the conversation

Qualify = Callable[[str], tuple[str, str | None]]
SkillsOf = Callable[[Any], list[str]]  # a call's arguments → the skills it uses


def _plain(name: str) -> tuple[str, str | None]:
    return name, None


def _no_skills(args: Any) -> list[str]:
    return []


@dataclass(frozen=True, slots=True)
class Asked:
    """One call that waits: its tool's key, and the keys (tool, `skill:<name>`) whose rules ask."""

    call: dict[str, Any]
    key: str
    keys: tuple[str, ...]
    rules: tuple[ApprovalRule, ...]

    def entry(self) -> dict[str, Any]:
        """The call as the request lists it (`skills`: the skills it waits for)."""
        found: dict[str, Any] = {"id": self.call.get("id") or "", "name": self.key}
        found["args"] = self.call.get("args") or {}
        skills = [k.removeprefix(SKILL) for k in self.keys if k.startswith(SKILL)]
        return {**found, "skills": skills} if skills else found


class ApprovalGuard(AgentMiddleware):
    """`can_ask=False` (a run that cannot pause: a subagent without a saver), or a context that
    `may_ask` no more (a subagent that paused once in its task): a call that needs approval is
    refused with a tool error instead."""

    def __init__(
        self, qualify: Qualify = _plain, *, can_ask: bool = True, skills_of: SkillsOf = _no_skills
    ) -> None:
        super().__init__()
        self.qualify = qualify
        self.can_ask = can_ask
        self.skills_of = skills_of

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        context = getattr(runtime, "context", None)
        if not isinstance(context, RunContext):
            return None
        if context.approvals is None and not context.deciding:
            return None
        messages = state["messages"]
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return None
        asked = self._asked(context, messages, last)
        if not asked:
            return None
        deciding = any(a.call.get("id") in context.deciding for a in asked)
        if not self.can_ask or not (context.may_ask or deciding):
            return {"messages": [_refusal(a.call, SUBAGENT, "") for a in asked]}
        from langgraph.types import interrupt

        answer = interrupt(_request(context, asked))
        decision = str(answer.get("decision", "")) if isinstance(answer, dict) else ""
        by = str(answer.get("by", "")) if isinstance(answer, dict) else ""
        if decision in (APPROVE, APPROVE_CONVERSATION):
            if decision == APPROVE_CONVERSATION:
                return {"messages": [_remember(last, [k for a in asked for k in a.keys])]}
            return None
        return {"messages": [_refusal(a.call, decision, by) for a in asked]}

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    def _asked(self, context: RunContext, messages: list[Any], last: AIMessage) -> list[Asked]:
        policy = context.approvals or ApprovalPolicy()
        done = remembered(messages)
        asked = []
        for call in last.tool_calls:
            tool, server = self.qualify(call["name"])
            if context.grant is not None and not context.grant.allows_tool(tool, server):
                continue  # refused anyway, by the GrantGuard
            key = tool_key(tool, server)
            found = {key: policy.rule_for(tool, server)}
            found |= {skill_key(s): policy.skill_rule(s) for s in self.skills_of(call["args"])}
            waits: dict[str, ApprovalRule] = {
                k: r for k, r in found.items() if r is not None and not _known(k, r, done)
            }
            if not waits and call.get("id") in context.deciding:
                waits = {key: ApprovalRule(key, "always")}
            if waits:
                asked.append(Asked(dict(call), key, tuple(waits), tuple(waits.values())))
        return asked


def _known(key: str, rule: ApprovalRule, done: set[str]) -> bool:
    """Approved for this conversation already (a `first_use` rule asks once)."""
    return rule.mode == "first_use" and key in done


def _request(context: RunContext, asked: list[Asked]) -> dict[str, Any]:
    policy = context.approvals or ApprovalPolicy()
    rules = [rule for a in asked for rule in a.rules]
    approvers = sorted({role for rule in rules for role in rule.approvers})
    return {
        "type": KIND,
        "calls": [a.entry() for a in asked],
        "first_use": any(rule.mode == "first_use" for rule in rules),
        "approvers": approvers,
        "requester": context.user_id,
        "requester_name": context.user_name,
        "chat": context.chat,
        "chat_type": context.chat_type,
        "expires_at": time.time() + policy.timeout_seconds,
    }


def remembered(messages: list[Any]) -> set[str]:
    """The keys approved "for this conversation" in the thread so far."""
    keys: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage):
            keys.update(message.response_metadata.get(APPROVED) or ())
    return keys


def _remember(message: AIMessage, keys: list[str]) -> AIMessage:
    metadata = {**message.response_metadata}
    metadata[APPROVED] = sorted({*(metadata.get(APPROVED) or ()), *keys})
    return message.model_copy(update={"response_metadata": metadata})


def _refusal(call: dict[str, Any], decision: str, by: str) -> ToolMessage:
    name = call["name"]
    if decision == SUBAGENT:
        why = "it needs a person's approval, which a subagent cannot ask for here (once per task)"
    elif decision == EXPIRED:
        why = "the approval request expired without an answer"
    else:
        why = f"it was denied by {by}" if by else "it was denied"
    return ToolMessage(
        content=f"Error: the call to {name!r} did not run: {why}. Do not call it again unless "
        "the user asks you to; tell the user it was not approved.",
        tool_call_id=call.get("id") or "",
        name=name,
        status="error",
    )
