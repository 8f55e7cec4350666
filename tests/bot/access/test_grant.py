"""The effective grant: a person's role capped by the chat's ceiling (property tests)."""

from __future__ import annotations

from fnmatch import fnmatchcase

from hypothesis import given
from hypothesis import strategies as st

from agent.grant import Grant, Layer
from bot.access.roles import AccessConfig, RoleConfig, default_roles, effective_grant

NAMES = st.sampled_from(["bash", "read_file", "web_search", "web_fetch", "task", "ls"])
PATTERNS = st.lists(st.sampled_from(["*", "web_*", "bash", "read_*", "ls", "nothing"]), max_size=3)
SERVERS = st.sampled_from(["github", "jira", "docs"])
MCP_PATTERNS = st.lists(
    st.sampled_from(["github:*", "github:get_*", "jira:search", "*:read_*"]), max_size=2
)
TOOLS = st.sampled_from(["get_issue", "create_issue", "search", "read_page"])
ROLES = st.builds(
    RoleConfig,
    tools=st.builds(lambda a, b: a + b, PATTERNS, MCP_PATTERNS),
    mcp_servers=st.lists(st.sampled_from(["*", "github", "jira"]), max_size=2),
    skills=PATTERNS,
    models=st.lists(st.sampled_from(["*", "fast", "smart", "gpt-*"]), max_size=2),
    commands=st.lists(st.sampled_from(["*", "/models", "/models NAME", "/memory*"]), max_size=2),
    upload_mb=st.none() | st.floats(min_value=0.5, max_value=50),
    may_approve=st.booleans(),
)


def _grants(person: RoleConfig, ceiling: RoleConfig) -> tuple[Grant, Grant, Grant]:
    roles = {"p": person, "c": ceiling}
    return (
        effective_grant(roles, "p", "c"),
        effective_grant(roles, "p", None),
        effective_grant(roles, "c", None),
    )


@given(ROLES, ROLES, NAMES)
def test_a_ceiling_caps_tools(person: RoleConfig, ceiling: RoleConfig, tool: str) -> None:
    capped, alone, cap = _grants(person, ceiling)
    assert capped.allows_tool(tool) == (alone.allows_tool(tool) and cap.allows_tool(tool))


@given(ROLES, ROLES, SERVERS, TOOLS)
def test_a_ceiling_caps_mcp_tools(
    person: RoleConfig, ceiling: RoleConfig, server: str, tool: str
) -> None:
    capped, alone, cap = _grants(person, ceiling)
    both = alone.allows_tool(tool, server) and cap.allows_tool(tool, server)
    assert capped.allows_tool(tool, server) == both


@given(
    ROLES,
    ROLES,
    st.sampled_from(["fast", "smart", "gpt-4o"]),
    st.sampled_from(["/status", "/models", "/models NAME", "/memory clear"]),
)
def test_a_ceiling_caps_models_commands_uploads_and_approval(
    person: RoleConfig, ceiling: RoleConfig, model: str, command: str
) -> None:
    capped, alone, cap = _grants(person, ceiling)
    assert capped.allows_model(model) == (alone.allows_model(model) and cap.allows_model(model))
    assert capped.allows_command(command) == (
        alone.allows_command(command) and cap.allows_command(command)
    )
    assert capped.may_approve == (person.may_approve and ceiling.may_approve)
    limits = [g.upload_bytes for g in (alone, cap) if g.upload_bytes is not None]
    assert capped.upload_bytes == (min(limits) if limits else None)


@given(ROLES, NAMES)
def test_a_plain_tool_is_allowed_exactly_when_a_glob_matches(role: RoleConfig, tool: str) -> None:
    (grant, *_) = _grants(role, role)
    plain = [p for p in role.tools if ":" not in p]
    assert grant.allows_tool(tool) == any(fnmatchcase(tool, p) for p in plain)


@given(ROLES, NAMES)
def test_capping_by_the_same_role_changes_nothing(role: RoleConfig, tool: str) -> None:
    capped, alone, _ = _grants(role, role)
    assert capped.allows_tool(tool) == alone.allows_tool(tool)


def test_mcp_servers_grant_their_tools_and_server_patterns_narrow_them() -> None:
    layer = Layer("eng", tools=("bash", "github:get_*"), mcp_servers=("github", "jira"))
    assert layer.allows_tool("get_issue", "github")
    assert not layer.allows_tool("create_issue", "github")  # narrowed to get_*
    assert layer.allows_tool("create_ticket", "jira")  # the whole server
    assert not layer.allows_tool("anything", "docs")
    loose = Layer("g", tools=("web_search", "docs:read_page"), mcp_servers=())
    assert loose.allows_tool("read_page", "docs")  # one tool, without its server
    assert not loose.allows_tool("write_page", "docs")


def test_without_access_config_everyone_is_a_member_with_everything() -> None:
    cfg = AccessConfig()
    grant = effective_grant(cfg.roles, cfg.default_role, None)
    assert grant.role == "member"
    assert grant.allows_tool("bash")
    assert grant.allows_tool("create_issue", "github")
    assert grant.allows_skill("deep-research")
    assert grant.allows_model("smart")
    assert grant.allows_command("/memory clear")
    assert grant.upload_bytes is None


def test_the_guest_default_keeps_to_web_search() -> None:
    guest = effective_grant(default_roles(), "admin", "guest")
    assert guest.role == "admin (at most guest here)"
    assert guest.allows_tool("web_search")
    assert not guest.allows_tool("bash")
    assert not guest.allows_tool("get_issue", "github")
    assert guest.allows_command("/models")
    assert not guest.allows_command("/models NAME")
    assert not guest.may_approve


def test_an_unknown_role_grants_nothing() -> None:
    grant = effective_grant(default_roles(), "nobody", None)
    assert not grant.allows_tool("web_search")
    assert not grant.allows_command("/help")
