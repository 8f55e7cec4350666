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


def resume_command(resume: dict[str, Any]) -> Any:
    """The `Command` that resumes a pending approval (`resume`: a turn's `resume`)."""
    from langgraph.types import Command

    value = {k: v for k, v in resume.items() if k not in ("interrupt_id", "calls")}
    return Command(resume={str(resume["interrupt_id"]): value})


def api_resume(pending: dict[str, Any], value: Any) -> dict[str, Any]:
    """A turn's `resume` from a LangGraph client's `command.resume`: a decision name, or
    `{"decision": ..., "by": ...}`, for the thread's first pending interrupt (`pending`, by id).
    ValueError when nothing waits or the value is not a decision."""
    if not pending:
        raise ValueError("the thread has no interrupt to resume")
    interrupt_id, request = next(iter(pending.items()))
    decision = value.get("decision") if isinstance(value, dict) else value
    by = value.get("by") if isinstance(value, dict) else None
    answer = decision_value(str(decision), str(by or "api"))
    asked = request.get("calls") or [] if is_request(request) else []
    calls = [str(c.get("id", "")) for c in asked]
    return {"interrupt_id": interrupt_id, "calls": calls, **answer}
