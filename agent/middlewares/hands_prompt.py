"""Adds the hands' sections to the system message each model call: working directory, skills
(and the skill activated with `/<skill>` for this turn), clarification, subagents.

A skill activated with `/<skill>` that waits for approval (agent/approval.py) is not put in the
prompt: the model is told to read its SKILL.md first, and that read asks (ApprovalGuard)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from agent.approval import ApprovalPolicy, skill_key
from agent.context import RunContext
from agent.middlewares.approval import remembered
from agent.middlewares.base import RequestRewriter, append_system
from agent.skills.registry import SkillRegistry


class HandsPrompt(RequestRewriter):
    def __init__(
        self,
        static: str,
        skills: SkillRegistry | None,
        skills_section: Callable[[SkillRegistry, Callable[[str], bool]], str],
    ) -> None:
        super().__init__()
        self.static = static
        self.skills = skills
        self.skills_section = skills_section

    def _sections(self, messages: Sequence[BaseMessage], context: RunContext | None) -> str:
        parts = [self.static]
        grant = context.grant if context is not None else None
        if self.skills is not None:
            allowed = grant.allows_skill if grant is not None else bool
            parts.append(self.skills_section(self.skills, allowed))
            policy = context.approvals if context is not None else None
            parts.append(self._active_skill(messages, allowed, policy))
        parts.append(numbered_answer(messages))
        return "\n\n".join(p for p in parts if p)

    def _active_skill(
        self,
        messages: Sequence[BaseMessage],
        allowed: Callable[[str], bool],
        policy: ApprovalPolicy | None,
    ) -> str:
        human = _last_human(messages)
        name = (
            (human.additional_kwargs.get("antler") or {}).get("skill")
            if human is not None
            else None
        )
        skill = self.skills.get(name) if self.skills is not None and name else None
        if skill is not None and not allowed(skill.name):
            return ""
        if skill is None:
            return ""
        if _waits(skill.name, messages, policy):
            return (
                f'<active_skill name="{skill.name}">\nThe user started this message with '
                f"/{skill.name}. Using this skill needs a person's approval: read "
                f"{skill.virtual_path} with read_file first (the read asks for it), then follow "
                "it. If it is not approved, say so and do not use the skill.\n</active_skill>"
            )
        return (
            f'<active_skill name="{skill.name}">\nThe user started this message with '
            f"/{skill.name}: follow this skill (files it mentions are under "
            f"{skill.virtual_path.rsplit('/', 1)[0]}).\n\n{skill.body()}\n</active_skill>"
        )

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        context = request.runtime.context if request.runtime is not None else None
        run = context if isinstance(context, RunContext) else None
        return append_system(request, self._sections(request.messages, run))


def _waits(skill: str, messages: Sequence[BaseMessage], policy: ApprovalPolicy | None) -> bool:
    """Whether using `skill` waits for approval in this conversation now."""
    rule = policy.skill_rule(skill) if policy is not None else None
    if rule is None:
        return False
    return rule.mode != "first_use" or skill_key(skill) not in remembered(list(messages))


def _last_human(messages: Sequence[BaseMessage]) -> HumanMessage | None:
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and "antler" in message.additional_kwargs:
            return message
    return None


def numbered_answer(messages: Sequence[BaseMessage]) -> str:
    """When the user answers a clarification with a bare number, say which option it means."""
    human = _last_human(messages)
    if human is None:
        return ""
    index = messages.index(human)
    text = str((human.additional_kwargs.get("antler") or {}).get("text", "")).strip()
    before = messages[index - 1] if index else None
    if not text.isdigit() or not isinstance(before, ToolMessage):
        return ""
    options = (before.artifact or {}).get("options") if isinstance(before.artifact, dict) else None
    if before.name != "ask_clarification" or not options or not 1 <= int(text) <= len(options):
        return ""
    return f'The user\'s answer "{text}" means option {text}: "{options[int(text) - 1]}".'
