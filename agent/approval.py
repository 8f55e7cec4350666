"""Approvals as plain data: which tool calls wait for a person's yes, and what the answer was.

The service computes an `ApprovalPolicy` for each turn (bot/access/approvals.py: the chat's rules,
the person's role's, the group chats', then the global ones; the first rule that matches a call
decides) and puts it on the `Turn`. The agent's `ApprovalGuard` middleware pauses the run with a
LangGraph interrupt carrying an `approval request` (a JSON object, below) before such a call
runs; the run is resumed with `Command(resume=...)` and a decision (`decision_value`).

Patterns are tool names, MCP tools as `server:tool`, shell globs (`deploy:*`, `web_*`), and
skills as `skill:<name>` (`skill:deploy-*`). A skill is used by a call whose arguments name a path
in its folder under /mnt/skills (reading its SKILL.md, running its scripts), so such a call waits
as the skill's rule says; a `skill:` pattern never matches a tool and a tool pattern (`*`) never
matches a skill.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

Mode = Literal["always", "first_use", "never"]
MODES: tuple[str, ...] = ("always", "first_use", "never")

APPROVE = "approve"
APPROVE_CONVERSATION = "approve_conversation"  # and do not ask again in this conversation
DENY = "deny"
EXPIRED = "expired"
DECISIONS: tuple[str, ...] = (APPROVE, APPROVE_CONVERSATION, DENY, EXPIRED)

SKILL = "skill:"  # the prefix of a skill's pattern and key
KIND = "approval"  # the `type` of an approval request (an interrupt's value)
DEFAULT_TIMEOUT = 15 * 60.0


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    pattern: str
    mode: Mode
    approvers: tuple[str, ...] = ()  # role names; () → roles that `may_approve`


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    rules: tuple[ApprovalRule, ...] = ()  # first match wins
    timeout_seconds: float = DEFAULT_TIMEOUT

    def rule_for(self, tool: str, server: str | None = None) -> ApprovalRule | None:
        """The rule deciding a call of `tool` (of MCP `server`); None: it runs unasked."""
        return self._first(tool_key(tool, server), skill=False)

    def skill_rule(self, skill: str) -> ApprovalRule | None:
        """The rule deciding a use of skill `skill`; None: it is used unasked."""
        return self._first(skill_key(skill), skill=True)

    def _first(self, key: str, *, skill: bool) -> ApprovalRule | None:
        for rule in self.rules:
            if rule.pattern.startswith(SKILL) == skill and fnmatchcase(key, rule.pattern):
                return None if rule.mode == "never" else rule
        return None


def tool_key(tool: str, server: str | None) -> str:
    return f"{server}:{tool}" if server else tool


def skill_key(skill: str) -> str:
    return f"{SKILL}{skill}"


def decision_value(decision: str, by: str = "") -> dict[str, Any]:
    """What an approval is resumed with (`Command(resume=...)`)."""
    if decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}")
    return {"decision": decision, "by": by}


def is_request(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == KIND


def merged(requests: list[tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    """One request for approval interrupts raised at once (`(id, request)` each: subagents of
    one answer pausing together): one card, one decision for all of them. Its id is the first's;
    `interrupts` names them all (each is resumed with the decision)."""
    first_id, first = requests[0]
    if len(requests) == 1:
        return first_id, first
    rest = [request for _, request in requests]
    return first_id, {
        **first,
        "calls": [call for request in rest for call in request.get("calls") or ()],
        "first_use": any(request.get("first_use") for request in rest),
        "approvers": sorted({str(r) for request in rest for r in request.get("approvers") or ()}),
        "expires_at": min(float(request.get("expires_at") or 0) for request in rest),
        "interrupts": [interrupt_id for interrupt_id, _ in requests],
    }


def resume_command(resume: dict[str, Any]) -> Any:
    """The `Command` that resumes a pending approval (`resume`: a turn's `resume`): each of its
    interrupts (`interrupts`, else `interrupt_id`) with the decision."""
    from langgraph.types import Command

    ids = resume.get("interrupts") or [resume["interrupt_id"]]
    value = {k: v for k, v in resume.items() if k not in ("interrupt_id", "calls", "interrupts")}
    return Command(resume={str(interrupt_id): value for interrupt_id in ids})


def api_resume(pending: dict[str, Any], value: Any) -> dict[str, Any]:
    """A turn's `resume` from a LangGraph client's `command.resume`: a decision name, or
    `{"decision": ..., "by": ...}`, for every interrupt of the thread waiting (`pending`, by id;
    several when subagents paused at once: one decision, as on the card).
    ValueError when nothing waits or the value is not a decision."""
    if not pending:
        raise ValueError("the thread has no interrupt to resume")
    decision = value.get("decision") if isinstance(value, dict) else value
    by = value.get("by") if isinstance(value, dict) else None
    answer = decision_value(str(decision), str(by or "api"))
    asked = [r for r in pending.values() if is_request(r)]
    calls = [str(c.get("id", "")) for r in asked for c in r.get("calls") or ()]
    ids = list(pending)
    return {"interrupt_id": ids[0], "interrupts": ids, "calls": calls, **answer}
