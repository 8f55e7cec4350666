"""Custom agents written to config.yaml: the `agents:` list through the one configuration
editor (bot/config/live.py: validated with the whole file, written atomically with comments
kept, applied live, recorded in the audit trail as a `config` change).

Two callers: DeerFlow's agents API (gateway/api/agents.py) and the agent's own `setup_agent` /
`update_agent` tools (agent/tools/agent_setup.py), for which `AgentEditor` is the port. The
tools act for the Gateway's caller (a run over the API: the admin token) and for people whose
role is `admin`; anyone else is told no, and the refusal is audited.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agent.profiles import LEAD_AGENT, AgentProfile
from agent.tools.agent_setup import AgentEdit, AgentPort

if TYPE_CHECKING:
    from bot.access.audit import Audit
    from bot.config.live import LiveConfig

DEERFLOW_NAME = re.compile(r"^[A-Za-z0-9-]+$")  # DeerFlow's rule for a custom agent's name
API_PERSON = "api"  # the person Gateway runs speak as (gateway/langgraph/run_manager.py)
ADMIN_ROLE = "admin"


class InvalidAgent(ValueError):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


def valid(data: dict[str, Any]) -> AgentProfile:
    """A profile from its keys; InvalidAgent naming each problem."""
    try:
        return AgentProfile.model_validate(data)
    except ValidationError as exc:
        raise InvalidAgent(
            [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
        ) from None


def merged(old: AgentProfile, changed: dict[str, Any]) -> AgentProfile:
    """`old` with `changed` keys; a new `system_prompt` replaces a SOUL file."""
    if "system_prompt" in changed:
        changed = {**changed, "system_prompt": changed["system_prompt"] or "", "soul_file": None}
    return valid({**old.model_dump(mode="json"), **changed})


def agents_body(profiles: list[AgentProfile], config_path: Path) -> dict[str, Any]:
    """The `agents:` section as config.yaml keeps it: defaults left out, a SOUL file inside the
    config's folder relative to it (as it was written)."""
    base = config_path.absolute().parent
    entries = []
    for profile in profiles:
        entry = profile.model_dump(mode="json", exclude_defaults=True)
        if profile.soul_file is not None and profile.soul_file.is_relative_to(base):
            entry["soul_file"] = str(profile.soul_file.relative_to(base))
        entries.append(entry)
    return {"agents": entries}


class AgentEditor(AgentPort):
    """The agent's `setup_agent`/`update_agent` port over the service's live config."""

    def __init__(
        self, live: Callable[[], LiveConfig | None], audit: Callable[[], Audit | None]
    ) -> None:
        self._live = live
        self._audit = audit

    async def edit(self, request: AgentEdit) -> str:
        refusal = self._refusal(request)
        if refusal:
            return refusal
        live = self._live()
        if live is None:
            return "Error: the service was not started from a config file; agents cannot change"
        new_name_bad = request.create and not DEERFLOW_NAME.fullmatch(request.name)
        if new_name_bad or request.name.lower() == LEAD_AGENT:  # (an existing one may have `_`)
            return f"Error: {request.name!r} cannot be a custom agent's name"
        name = request.name.lower()
        current = list(live.settings.agents)
        old = next((p for p in current if p.name.lower() == name), None)
        try:
            profile = self._profile(request, name, old)
        except InvalidAgent as exc:
            return f"Error: {exc}"
        profiles = [profile if p is old else p for p in current] + ([] if old else [profile])
        who = f"{request.tool} ({request.user_id or 'agent'}, thread {request.thread_id})"
        change = await live.edit((), agents_body(profiles, live.path), replace=False, who=who)
        if not change.ok:
            return "Error: " + "; ".join(change.errors)
        return _outcome(request, name, created=old is None)

    def _refusal(self, request: AgentEdit) -> str:
        grant = request.grant
        person_role = grant.layers[0].role if grant is not None and grant.layers else ""
        if request.user_id == API_PERSON or person_role == ADMIN_ROLE:
            return ""
        audit = self._audit()
        if audit is not None:
            audit.denied("agent", request.user_id, "", request.name, person_role or "everyone")
        return f"Error: only an admin may change agents; {request.tool} was not run."

    @staticmethod
    def _profile(request: AgentEdit, name: str, old: AgentProfile | None) -> AgentProfile:
        if old is not None:
            return merged(old, request.fields)
        if not request.create:
            raise InvalidAgent([f"Agent '{name}' does not exist; create it first"])
        return valid({"name": name, **request.fields})


def _outcome(request: AgentEdit, name: str, *, created: bool) -> str:
    if request.create:
        return f"Agent '{name}' {'created' if created else 'updated'} successfully!"
    changed = ", ".join(request.changed)
    return f"Agent '{name}' updated successfully. Changed: {changed}. " \
        "The new configuration takes effect on the next message."  # fmt: skip
