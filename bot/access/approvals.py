"""The approval policy (`access.approvals` and each role's `approvals` in config.yaml) and who may
answer a request.

A setting names tools, MCP tools (`server:tool`), skills (`skill:<name>`) and globs, each
`always`, `first_use` or `never`, optionally with the roles that may approve it (`approvers`).
The policy of one turn is a list of rules, first match wins: the chat's
(`access.approvals.chats`), the person's role's, the group chats' (`access.approvals.groups`, in
groups only), then the global ones (`access.approvals.tools`). Read per message: it changes live.

Who may answer: the roles the rule names; else a role that `may_approve`; in a DM, the person
who asked too.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.approval import SKILL, ApprovalPolicy, ApprovalRule, Mode

SKILL_GLOB = re.compile(r"[a-z0-9*?\[\]!-]+")  # skill names are lowercase, digits and hyphens


class ApprovalSetting(BaseModel):
    """`bash: always` or `"deploy:*": {approval: always, approvers: [admin]}`."""

    model_config = ConfigDict(extra="forbid")
    approval: Mode
    approvers: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, value: Any) -> Any:
        return {"approval": value} if isinstance(value, str) else value


Settings = dict[str, ApprovalSetting]


class ApprovalsConfig(BaseModel):
    """`access.approvals`."""

    model_config = ConfigDict(extra="forbid")
    timeout_minutes: float = Field(default=15, gt=0)
    tools: Settings = Field(default_factory=dict)  # everywhere
    groups: Settings = Field(default_factory=dict)  # in group chats
    chats: dict[str, Settings] = Field(default_factory=dict)  # `channel:chat_id` → settings


def rules(settings: Settings) -> list[ApprovalRule]:
    return [ApprovalRule(p, s.approval, tuple(s.approvers)) for p, s in settings.items()]


def approval_policy(
    cfg: ApprovalsConfig, role: Settings, chat: str, group: bool
) -> ApprovalPolicy | None:
    """The turn's policy (`role`: the person's role's settings; `chat`: `channel:chat_id`);
    None when nothing asks."""
    found = [*rules(cfg.chats.get(chat, {})), *rules(role)]
    if group:
        found += rules(cfg.groups)
    found += rules(cfg.tools)
    if not any(rule.mode != "never" for rule in found):
        return None
    return ApprovalPolicy(tuple(found), timeout_seconds=cfg.timeout_minutes * 60)


def may_decide(request: dict[str, Any], role: str, role_may_approve: bool, asker: bool) -> bool:
    """Whether someone with `role` may answer `request`; `asker`: they asked for it."""
    named = [str(r) for r in request.get("approvers") or ()]
    if named:
        return role in named
    return role_may_approve or (asker and request.get("chat_type") == "dm")


def places(cfg: ApprovalsConfig, role_settings: dict[str, Settings]) -> list[tuple[str, Settings]]:
    """Every approval setting in the config, with its YAML path."""
    found = [("access.approvals.tools", cfg.tools), ("access.approvals.groups", cfg.groups)]
    found += [(f"access.approvals.chats.{k}", v) for k, v in cfg.chats.items()]
    return found + [(f"access.roles.{k}.approvals", v) for k, v in role_settings.items()]


def problems(
    cfg: ApprovalsConfig, roles: set[str], role_settings: dict[str, Settings]
) -> list[str]:
    """Approver role names that name no role and `skill:` patterns that cannot name a skill,
    with their YAML paths."""
    found = []
    for path, settings in places(cfg, role_settings):
        for pattern, setting in settings.items():
            skill = pattern.removeprefix(SKILL)
            if pattern.startswith(SKILL) and not SKILL_GLOB.fullmatch(skill):
                found.append(
                    f"{path}.{pattern}: a skill pattern is `skill:` and a skill name or glob "
                    "(lowercase letters, digits, hyphens, * ? [ ])"
                )
            for i, name in enumerate(setting.approvers):
                if name not in roles:
                    found.append(
                        f"{path}.{pattern}.approvers[{i}]: unknown role {name!r} "
                        f"(roles: {', '.join(sorted(roles))})"
                    )
    return found


def skill_warnings(
    cfg: ApprovalsConfig, role_settings: dict[str, Settings], skills: set[str]
) -> list[str]:
    """`skill:` patterns no installed skill matches (`antler check`: a skill may come later)."""
    found = []
    for path, settings in places(cfg, role_settings):
        for pattern in settings:
            name = pattern.removeprefix(SKILL)
            if pattern.startswith(SKILL) and not any(fnmatchcase(s, name) for s in skills):
                found.append(f"{path}.{pattern}: no skill matches {name!r}")
    return found
