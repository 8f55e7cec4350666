"""Roles (`access` in config.yaml) and the one function that computes a person's grant.

A role grants tools, MCP servers, skills, models, agents and commands (names and globs), an upload
limit and whether it may approve. A person's role comes from the admin API, else
`access.people`, else their channel's default (`access.channels`), else `access.default_role`;
a chat may set a ceiling (`access.chats`): the effective grant is the person's role capped by the
ceiling (`effective_grant`). A config without `access` behaves as before: everyone a `member`,
and a member may use everything.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent.grant import Grant, Layer, matches
from bot.access.approvals import ApprovalsConfig, Settings, problems, skill_warnings


class RoleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tools: list[str] = Field(default_factory=lambda: ["*"])
    mcp_servers: list[str] = Field(default_factory=lambda: ["*"])
    skills: list[str] = Field(default_factory=lambda: ["*"])
    models: list[str] = Field(default_factory=lambda: ["*"])
    agents: list[str] = Field(default_factory=lambda: ["*"])  # agent profiles (`agents:`)
    commands: list[str] = Field(default_factory=lambda: ["*"])
    upload_mb: float | None = Field(default=None, gt=0)
    may_approve: bool = False
    approvals: Settings = Field(default_factory=dict)  # tool pattern → approval (approvals.py)

    def layer(self, name: str) -> Layer:
        upload = int(self.upload_mb * 1024 * 1024) if self.upload_mb is not None else None
        return Layer(
            role=name,
            tools=tuple(self.tools),
            mcp_servers=tuple(self.mcp_servers),
            skills=tuple(self.skills),
            models=tuple(self.models),
            agents=tuple(self.agents),
            commands=tuple(self.commands),
            upload_bytes=upload,
            may_approve=self.may_approve,
        )


GUEST_COMMANDS = [
    "/help",
    "/start",
    "/new",
    "/stop",
    "/status",
    "/models",
    "/agent",
    "/memory*",
    "/link",
    "/unlink",
    "/lang",
]


def default_roles() -> dict[str, RoleConfig]:
    return {
        "admin": RoleConfig(may_approve=True),
        "member": RoleConfig(),
        "guest": RoleConfig(
            tools=["web_search", "web_fetch", "ask_clarification", "present_files"],
            mcp_servers=[],
            skills=[],
            commands=list(GUEST_COMMANDS),
            upload_mb=5,
        ),
    }


class AuditConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    retention_days: float = Field(default=90, gt=0)


class AccessConfig(BaseModel):
    """`access`: roles and who has which. Roles change live."""

    model_config = ConfigDict(extra="forbid")
    default_role: str = "member"
    roles: dict[str, RoleConfig] = Field(default_factory=lambda: default_roles())
    people: dict[str, str] = Field(default_factory=dict)  # account or person → role
    channels: dict[str, str] = Field(default_factory=dict)  # channel → its people's default
    chats: dict[str, str] = Field(default_factory=dict)  # `channel:chat_id` → ceiling
    audit: AuditConfig = Field(default_factory=AuditConfig)
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)

    @field_validator("roles")
    @classmethod
    def _with_defaults(cls, roles: dict[str, RoleConfig]) -> dict[str, RoleConfig]:
        return {**default_roles(), **roles}

    def role_names(self) -> list[str]:
        return list(self.roles)

    def problems(self, models: set[str] | None = None) -> list[str]:
        """Role names that name no role, and (given the configured `models`) model names that
        name no model, with their YAML paths."""
        found = []
        for name, role in self.roles.items():
            for i, pattern in enumerate(role.models):
                if models is not None and not _is_glob(pattern) and pattern not in models:
                    found.append(
                        f"access.roles.{name}.models[{i}]: unknown model {pattern!r} "
                        f"(models: {', '.join(sorted(models))})"
                    )
        if self.default_role not in self.roles:
            found.append(_unknown("access.default_role", self.default_role, self))
        for section in ("people", "channels", "chats"):
            for key, role in getattr(self, section).items():
                if role not in self.roles:
                    found.append(_unknown(f"access.{section}.{key}", role, self))
        return found + problems(self.approvals, set(self.roles), self._role_approvals())

    def _role_approvals(self) -> dict[str, Settings]:
        return {name: role.approvals for name, role in self.roles.items() if role.approvals}

    def warnings(self, tools: set[str], skills: set[str], models: set[str]) -> list[str]:
        """Grants naming a tool, skill or model that is not configured (MCP tools appear only
        at run time, so `server:tool` names are not checked)."""
        found = []
        defaults = default_roles()
        for name, role in self.roles.items():
            if defaults.get(name) == role:
                continue  # a built-in role as shipped: it names tools that may be off
            for pattern in role.tools:
                if ":" not in pattern and not _any_match(pattern, tools):
                    found.append(f"access.roles.{name}.tools: no tool matches {pattern!r}")
            for pattern in role.skills:
                if not _any_match(pattern, skills) and pattern != "*":
                    found.append(f"access.roles.{name}.skills: no skill matches {pattern!r}")
            for pattern in role.models:
                if _is_glob(pattern) and not _any_match(pattern, models):
                    found.append(f"access.roles.{name}.models: no model matches {pattern!r}")
        return found + skill_warnings(self.approvals, self._role_approvals(), skills)


def _is_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _any_match(pattern: str, names: set[str]) -> bool:
    return any(matches([pattern], n) for n in names)


def _unknown(path: str, role: str, cfg: AccessConfig) -> str:
    return f"{path}: unknown role {role!r} (roles: {', '.join(cfg.roles)})"


def effective_grant(roles: dict[str, RoleConfig], person_role: str, ceiling: str | None) -> Grant:
    """The one function: `person_role`'s grant, capped by the chat's `ceiling` role.

    An unknown role name grants nothing (config validation names it before it gets here).
    """
    layers = [_layer(roles, person_role)]
    if ceiling is not None and ceiling != person_role:
        layers.append(_layer(roles, ceiling))
    return Grant(tuple(layers))


_NOTHING = RoleConfig(tools=[], mcp_servers=[], skills=[], models=[], agents=[], commands=[])


def _layer(roles: dict[str, RoleConfig], name: str) -> Layer:
    return roles.get(name, _NOTHING).layer(name)


def roles_allowing(roles: dict[str, RoleConfig], command_key: str) -> list[str]:
    """The roles whose own grant allows the command (for "ask an admin" answers)."""
    return [n for n, r in roles.items() if matches(r.commands, command_key)]
